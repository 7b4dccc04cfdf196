#!/usr/bin/python3
"""Plots staleness histograms written by //sim:simulate --staleness_csv (staleness,updates rows).

  /usr/bin/python3 benchmarks/plot_staleness.py OUT.png LABEL=FILE.csv [LABEL=FILE.csv ...]

One step curve per file: the fraction of updates with each staleness, on a log scale so a tail
of stragglers' updates stays visible next to the bulk. Use /usr/bin/python3 (Debian's matplotlib,
installed by tools/setup.sh).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    staleness, updates = [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            staleness.append(int(row["staleness"]))
            updates.append(int(row["updates"]))
    return staleness, updates


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for spec in argv[2:]:
        label, path = spec.split("=", 1)
        staleness, updates = read(path)
        total = sum(updates)
        mean = sum(s * u for s, u in zip(staleness, updates)) / total
        ax.step(staleness, [u / total for u in updates], where="mid",
                label=f"{label} (mean {mean:.1f}, max {staleness[-1]})")
    ax.set_yscale("log")
    ax.set_xlabel("staleness (updates by other workers between read and write)")
    ax.set_ylabel("fraction of updates")
    ax.set_title("Simulated async SGD, 256 workers, Fashion-MNIST")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    print(f"wrote {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
