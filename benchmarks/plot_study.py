#!/usr/bin/env python3
"""Figures of the study runner (benchmarks/sync_vs_async.cc, //benchmarks:study).

Reads <out_dir>/runs.csv (configuration, seed and convergence log of every run) and writes into
<out_dir>:
  study_accuracy_vs_time.png      test accuracy against wall time (--simulated: simulated time,
                                  which a simulated run's wall_time_s column holds)
  study_accuracy_vs_examples.png  test accuracy against training examples seen
  study.png                       both side by side (the README figure)
One line per configuration: the mean over its seeds, with a band from the lowest to the highest
seed. Each seed's evaluations are interpolated linearly onto a common x grid that ends where the
shortest seed ends, so the band never extrapolates.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def load_configs(out_dir):
    """{config: [(x_time, x_examples, accuracy) arrays per seed]}, configurations in order."""
    configs = {}
    for row in read_csv(os.path.join(out_dir, "runs.csv")):
        evals = [r for r in read_csv(row["log"])
                 if r["kind"] == "eval" and r["test_accuracy"] != ""]
        if not evals:
            continue
        t = np.array([float(e["wall_time_s"]) for e in evals])
        n = np.array([float(e["examples_seen"]) for e in evals])
        a = np.array([100.0 * float(e["test_accuracy"]) for e in evals])
        configs.setdefault(row["config"], []).append((t, n, a))
    return configs


def band_plot(ax, configs, which, x_label, target, x_scale=1.0):
    lowest = 100.0 * target - 20.0
    for i, (config, seeds) in enumerate(configs.items()):
        end = min(s[which][-1] for s in seeds)
        start = max(s[which][0] for s in seeds)
        grid = np.linspace(start, end, 100) if end > start else np.array([end])
        curves = np.array([np.interp(grid, s[which], s[2]) for s in seeds])
        # The axis starts 20 points below the target, or lower where a curve spends its
        # second half (so a configuration far from the target is still drawn).
        lowest = min(lowest, float(curves.mean(axis=0)[len(grid) // 2:].min()) - 2.0)
        color = f"C{i % 10}"
        ax.plot(grid * x_scale, curves.mean(axis=0), color=color,
                label=f"{config} ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})")
        if len(seeds) > 1:
            ax.fill_between(grid * x_scale, curves.min(axis=0), curves.max(axis=0),
                            color=color, alpha=0.2, linewidth=0)
    ax.axhline(100.0 * target, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel(x_label)
    ax.set_ylabel("test accuracy (%), mean and min-max over seeds")
    ax.set_ylim(max(0.0, lowest), None)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--target", type=float, default=0.85)
    parser.add_argument("--simulated", action="store_true",
                        help="the runs are simulated (sim/simulator.h): time is simulated time")
    args = parser.parse_args()
    configs = load_configs(args.out_dir)
    if not configs:
        sys.exit(f"no runs with evaluations in {args.out_dir}/runs.csv")

    def save(fig, name):
        path = os.path.join(args.out_dir, name)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        print("wrote", path)

    time_args = (0, "simulated time (s)" if args.simulated else "wall time (s)", args.target)
    examples_args = (1, "training examples seen (thousands)", args.target, 1e-3)
    fig, ax = plt.subplots(figsize=(6, 4))
    band_plot(ax, configs, *time_args)
    save(fig, "study_accuracy_vs_time.png")
    fig, ax = plt.subplots(figsize=(6, 4))
    band_plot(ax, configs, *examples_args)
    save(fig, "study_accuracy_vs_examples.png")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    band_plot(axes[0], configs, *time_args)
    band_plot(axes[1], configs, *examples_args)
    save(fig, "study.png")


if __name__ == "__main__":
    main()
