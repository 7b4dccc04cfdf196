#!/usr/bin/python3
"""The Hogwild! paper's figure shape: speedup against workers, Hogwild! against the two locking
baselines, for three sparse workloads (Niu, Recht, Re, Wright, NIPS 2011, figures 4 and 5).

Each workload is one study (//benchmarks:study --workload=..., the sparse trainers' real runs;
batch 1, the paper's constant step), its repetitions the study's seeds (each seed a data order,
every configuration run once per seed, in turn, so load changes hit them alike):
  svm        linear SVM (hinge) on the RCV1-like synthetic set (100,000 x 47,236, ~76
             non-zeros per row): the paper's sparse SVM on RCV1.
  mf         matrix factorization, rank 16, on MovieLens ml-latest-small (tools/setup.sh
             --movielens): the paper's matrix completion on Netflix/KDD/Jumbo.
  logreg_dense  logistic regression on a synthetic set with only 1,000 features (76 non-zeros
             per row, so any two updates share about 6 coordinates): stands in for the paper's
             third workload, graph cuts, which is out of scope here; it is the case where
             updates collide often, the opposite end from svm.
Modes: async (Hogwild!), locked (one mutex around every update), round_robin (gradients computed
concurrently, applied in the workers' turn; not offered for mf, whose step cannot be split into a
gradient and an update without holding the two rows it reads).

Speedup of a configuration = its median updates/s over the median of the same workload's async
run with 1 worker (which is sequential SGD). updates/s is the study's examples/s (batch 1: one
update per example): updates over the time from the workers' start to their join, evaluation
excluded.

    bazel build //benchmarks:study
    /usr/bin/python3 benchmarks/sparse_speedup.py [--workers=1,2] [--reps=3] [--plot_only]

Writes benchmarks/results/sparse_speedup.csv (one row per run, with the 1-minute load average
before its workload's study) and sparse_speedup.png (the medians); the studies' own records,
logs and reports go to --study_dir. Prints `uptime` before and after: on a machine
with fewer free cores than workers the speedup says more about the other processes than about
Hogwild!.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys

WORKLOADS = {
    "svm": {"args": ["--workload=sparse_svm", "--lrs=0.1", "--epochs=5",
                     "--synthetic_examples=100000", "--synthetic_test_examples=10000"],
            "modes": ["async", "locked", "round_robin"],
            "title": "sparse SVM, synthetic RCV1-like\n(100,000 x 47,236, 76 nnz/row)"},
    "mf": {"args": ["--workload=mf", "--ratings=movielens", "--rank=16", "--lrs=0.02",
                    "--weight_decay=0.05", "--epochs=20"],
           "modes": ["async", "locked"],
           "title": "matrix factorization, MovieLens\n(rank 16, 90,000 ratings)"},
    "logreg_dense": {"args": ["--workload=sparse_logreg", "--lrs=0.5", "--epochs=5",
                              "--synthetic_features=1000", "--synthetic_examples=100000",
                              "--synthetic_test_examples=10000"],
                     "modes": ["async", "locked", "round_robin"],
                     "title": "logreg, colliding updates\n(100,000 x 1,000, 76 nnz/row)"},
}


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def study(binary, workload, configs, reps, out_dir):
    """Runs `workload`'s study over `configs` ((mode, workers) pairs) and `reps` seeds; returns
    {(mode, workers, seed): examples per second} from its summary.csv."""
    runs = ",".join(f"{mode}:{w}" for mode, w in configs)
    cmd = [binary, f"--runs={runs}", f"--seeds={','.join(str(r + 1) for r in range(reps))}",
           "--batch_size=1", "--eval_every_epochs=0", "--plot=false", "--target_accuracy=0.5",
           f"--out_dir={out_dir}/{workload}"] + WORKLOADS[workload]["args"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    with open(f"{out_dir}/{workload}/summary.csv") as f:
        return {(r["mode"], int(r["workers"]), int(r["seed"])): float(r["examples_per_s"])
                for r in csv.DictReader(f)}


def plot(medians, workers, loads, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(WORKLOADS), figsize=(4.2 * len(WORKLOADS), 3.8))
    styles = {"async": ("Hogwild! (async)", "o-"), "locked": ("one lock", "s--"),
              "round_robin": ("round-robin", "^:")}
    for ax, (name, spec) in zip(axes, WORKLOADS.items()):
        base = medians[(name, "async", 1)]
        for mode in spec["modes"]:
            xs = [w for w in workers if (name, mode, w) in medians]
            ax.plot(xs, [medians[(name, mode, w)] / base for w in xs], styles[mode][1],
                    label=styles[mode][0])
        ax.plot(workers, workers, color="0.7", lw=0.8, label="linear")
        ax.set_title(spec["title"], fontsize=9)
        ax.set_xlabel("workers (threads)")
        ax.set_xticks(workers)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("speedup over 1 Hogwild! worker")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"medians of {len(loads) // len(medians)} runs each; {os.cpu_count()} CPUs, "
                 f"1-minute load average {min(loads):.1f} to {max(loads):.1f} while measured",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--bin", default="bazel-bin/benchmarks/sync_vs_async")
    parser.add_argument("--study_dir", default="/tmp/hogwild_sparse_speedup",
                        help="the studies' records, logs and reports (a rerun skips done runs)")
    parser.add_argument("--out", default="benchmarks/results/sparse_speedup")
    parser.add_argument("--plot_only", action="store_true",
                        help="redraw the figure and the table from the CSV of an earlier run")
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    if 1 not in workers:
        sys.exit("--workers must include 1 (the speedup's base)")
    # Round-robin with one worker is async with one worker (no turn to wait for).
    configs = [(name, mode, w) for name, spec in WORKLOADS.items() for mode in spec["modes"]
               for w in workers if not (mode == "round_robin" and w == 1)]
    rows = []
    if args.plot_only:
        with open(args.out + ".csv") as f:
            rows = [dict(r, workers=int(r["workers"]), updates_per_s=float(r["updates_per_s"]),
                         load_1min_before=float(r["load_1min_before"])) for r in csv.DictReader(f)]
        args.reps = 0
    else:
        print("load before:", uptime(), flush=True)
    for name in (WORKLOADS if args.reps > 0 else []):
        load = load_average()
        mine = [(mode, w) for n, mode, w in configs if n == name]
        rates = study(args.bin, name, mine, args.reps, args.study_dir)
        for rep in range(args.reps):
            for mode, w in mine:
                rate = rates[(mode, w, rep + 1)]
                rows.append({"workload": name, "mode": mode, "workers": w, "rep": rep + 1,
                             "updates_per_s": round(rate), "load_1min_before": load})
                print(f"rep {rep + 1} {name:13s} {mode:12s} {w} workers {rate:12.0f} updates/s "
                      f"(load {load})", flush=True)
    if not args.plot_only:
        print("load after: ", uptime())
        with open(args.out + ".csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    medians = {c: statistics.median(r["updates_per_s"] for r in rows
                                    if (r["workload"], r["mode"], r["workers"]) == c)
               for c in configs}
    print(f"\n{'workload':13s} {'mode':12s} {'workers':>7s} {'updates/s':>12s} {'speedup':>8s}")
    for (name, mode, w), rate in medians.items():
        print(f"{name:13s} {mode:12s} {w:7d} {rate:12.0f} "
              f"{rate / medians[(name, 'async', 1)]:7.2f}x")
    plot(medians, workers, [r["load_1min_before"] for r in rows], args.out + ".png")
    print(f"wrote {args.out}.csv and {args.out}.png")


if __name__ == "__main__":
    main()
