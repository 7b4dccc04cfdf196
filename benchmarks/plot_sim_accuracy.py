#!/usr/bin/python3
"""Test accuracy against simulated time, from //sim:simulate convergence logs (--log).

  /usr/bin/python3 benchmarks/plot_sim_accuracy.py OUT.png LABEL=LOG.csv [LABEL=LOG.csv ...]

One curve per log: its eval rows' test_accuracy against wall_time_s, which a simulation writes
in simulated seconds. Use /usr/bin/python3 (Debian's matplotlib, installed by tools/setup.sh).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for spec in argv[2:]:
        label, path = spec.split("=", 1)
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["kind"] == "eval"]
        ax.plot([float(r["wall_time_s"]) for r in rows],
                [100 * float(r["test_accuracy"]) for r in rows], marker=".", label=label)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("Simulated runs, 256 workers, Fashion-MNIST, 5 epochs")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    print(f"wrote {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
