#!/usr/bin/env python3
"""Figures of the sync-vs-async study (benchmarks/sync_vs_async.cc writes the inputs).

Reads <out_dir>/summary.csv, the convergence logs it names and <out_dir>/staleness.csv, and
writes into <out_dir>:
  accuracy_vs_time.png      test accuracy against wall time, one curve per mode x workers
  accuracy_vs_examples.png  test accuracy against training examples seen
  loss_vs_examples.png      training loss against examples seen
  staleness.png             staleness histograms of the async runs
  convergence.png           the first three side by side (the README figure)
Several seeds: each mode x workers curve is the first seed's (the table has every seed).
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def label(mode, workers):
    return f"{mode}, {workers} worker{'s' if int(workers) > 1 else ''}"


def style(mode):
    return "-" if mode == "async" else "--"


def load_runs(out_dir):
    runs = []
    seen = set()
    for row in read_csv(os.path.join(out_dir, "summary.csv")):
        key = (row["mode"], int(row["workers"]))
        if key in seen:
            continue
        seen.add(key)
        log = row["log"]
        if not os.path.isabs(log):
            log = os.path.join(out_dir, os.path.basename(log))
        rows = read_csv(log)
        evals = [r for r in rows if r["kind"] == "eval" and r["test_accuracy"] != ""]
        train = [r for r in rows if r["kind"] == "train"]
        runs.append({"mode": row["mode"], "workers": int(row["workers"]),
                     "evals": evals, "train": train})
    runs.sort(key=lambda r: (r["mode"], r["workers"]))
    return runs


def accuracy_plot(ax, runs, x_key, x_label, target, x_scale=1.0):
    for r in runs:
        xs = [float(e[x_key]) * x_scale for e in r["evals"]]
        ys = [100.0 * float(e["test_accuracy"]) for e in r["evals"]]
        ax.plot(xs, ys, style(r["mode"]), marker=".", label=label(r["mode"], r["workers"]))
    ax.axhline(100.0 * target, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel(x_label)
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(max(0.0, 100.0 * target - 15.0), None)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def loss_plot(ax, runs):
    for r in runs:
        # Train rows come from every worker; order them by examples seen and smooth over a
        # window of one row per worker so that the curve is one line per run.
        pts = sorted((int(t["examples_seen"]), float(t["train_loss"])) for t in r["train"])
        k = max(1, r["workers"])
        xs, ys = [], []
        for i in range(0, len(pts) - k + 1, k):
            chunk = pts[i:i + k]
            xs.append(chunk[-1][0] / 1e3)
            ys.append(sum(p[1] for p in chunk) / len(chunk))
        ax.plot(xs, ys, style(r["mode"]), label=label(r["mode"], r["workers"]))
    ax.set_xlabel("training examples seen (thousands)")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def staleness_plot(ax, out_dir):
    path = os.path.join(out_dir, "staleness.csv")
    rows = [r for r in read_csv(path) if r["mode"] == "async"] if os.path.exists(path) else []
    by_run = {}
    for r in rows:
        key = (int(r["workers"]), r["seed"])
        by_run.setdefault(key, {})[int(r["staleness"])] = int(r["count"])
    first_seed = {}
    for (workers, seed) in sorted(by_run):
        first_seed.setdefault(workers, seed)
    n = len(first_seed)
    width = 0.8 / max(1, n)
    for i, (workers, seed) in enumerate(sorted(first_seed.items())):
        hist = by_run[(workers, seed)]
        total = sum(hist.values())
        xs = sorted(hist)
        ax.bar([x + (i - (n - 1) / 2) * width for x in xs], [hist[x] / total for x in xs],
               width=width, label=label("async", workers))
    ax.set_xlabel("staleness (updates by other workers between read and write)")
    ax.set_ylabel("fraction of updates")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    if n:
        ax.legend(fontsize=7)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--target", type=float, default=0.85)
    args = parser.parse_args()
    runs = load_runs(args.out_dir)
    if not runs:
        sys.exit(f"no runs in {args.out_dir}/summary.csv")

    def save(fig, name):
        path = os.path.join(args.out_dir, name)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        print("wrote", path)

    fig, ax = plt.subplots(figsize=(6, 4))
    accuracy_plot(ax, runs, "wall_time_s", "wall time (s)", args.target)
    save(fig, "accuracy_vs_time.png")
    fig, ax = plt.subplots(figsize=(6, 4))
    accuracy_plot(ax, runs, "examples_seen", "training examples seen (thousands)", args.target,
                  1e-3)
    save(fig, "accuracy_vs_examples.png")
    fig, ax = plt.subplots(figsize=(6, 4))
    loss_plot(ax, runs)
    save(fig, "loss_vs_examples.png")
    fig, ax = plt.subplots(figsize=(6, 4))
    staleness_plot(ax, args.out_dir)
    save(fig, "staleness.png")

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    accuracy_plot(axes[0], runs, "wall_time_s", "wall time (s)", args.target)
    accuracy_plot(axes[1], runs, "examples_seen", "training examples seen (thousands)",
                  args.target, 1e-3)
    loss_plot(axes[2], runs)
    save(fig, "convergence.png")


if __name__ == "__main__":
    main()
