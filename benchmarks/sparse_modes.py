#!/usr/bin/python3
"""Hogwild! and its successors side by side on the sparse workloads: updates/s and final loss of
async (Hogwild!), locked, round_robin, cyclades and buckwild (8 and 16 bits) at 1 and 2 workers,
on the RCV1-like synthetic set, the SpamAssassin corpus and MovieLens, with scikit-learn's
SGDClassifier on the same vectors as the reference rate; then where a second Hogwild! worker
loses, as the speedup of 2 workers over 1 against the synthetic set's feature count D (fewer
features: more updates share a coordinate).

Every configuration is one `//sparse:train` process (batch 1 but in cyclades, whose batch is a
round's sampled updates, --cyclades_batch; the paper's constant step); updates/s is the
trainer's own (updates over the SGD time, data loading and evaluation excluded); each repetition
runs every configuration in turn, so a change of load hits them alike; the tables are medians.
The final loss is the training loss after the last epoch (log-loss; MovieLens: RMSE), with the
test accuracy (test RMSE) beside it. scikit-learn runs
SGDClassifier(learning_rate='constant', eta0=lr, penalty=None, fit_intercept=False) on the
LIBSVM export of the same rows (//sparse:make_synthetic), one thread; it has no matrix
factorization, so MovieLens has no reference.

    tools/setup.sh --bench --spam --movielens
    bazel build //sparse:train //sparse:make_synthetic
    /usr/bin/python3 benchmarks/sparse_modes.py [--reps=3] [--out=benchmarks/results/sparse_modes]

Writes OUT.csv (one row per run, with the 1-minute load average before the repetition) and
OUT.png (updates/s per mode and workers for each data set, and the speedup against D). Prints
`uptime` before and after: with 2 cores, the 2-worker figures mean something only on an idle
machine.
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

import numpy as np

from sparse_vs_sklearn import fit_sklearn, log_loss  # one SGDClassifier setting for both

DATASETS = {
    # name: (train flags, epochs, lr, loss name, scikit-learn's LIBSVM export flags or None)
    "synthetic": (["--model=logreg"], 3, 0.5, "log-loss", []),
    "spam": (["--model=logreg", "--dataset=spam"], 10, 0.5, "log-loss", ["--mail=spam"]),
    "movielens": (["--model=mf", "--dataset=movielens"], 10, 0.02, "RMSE", None),
}
# mode label: (train flags, datasets it applies to)
MODES = {
    "async": (["--mode=async"], ("synthetic", "spam", "movielens")),
    "locked": (["--mode=locked"], ("synthetic", "spam", "movielens")),
    "round_robin": (["--mode=round_robin"], ("synthetic", "spam", "movielens")),
    "cyclades": (["--mode=cyclades"], ("synthetic", "spam", "movielens")),
    "buckwild8": (["--mode=buckwild", "--fixed_point_bits=8"], ("synthetic", "spam")),
    "buckwild16": (["--mode=buckwild", "--fixed_point_bits=16"], ("synthetic", "spam")),
}
SWEEP_FEATURES = [1000, 47236, 1000000]


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run_ours(train, flags):
    """(updates/s, final training loss, test figure or None, cyclades' busiest worker %)."""
    out = subprocess.run([train] + flags, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join([train] + flags)} failed:\n{out.stdout}{out.stderr}")
    done = [line for line in out.stdout.splitlines() if line.startswith("done:")]
    rate = re.search(r"\(([0-9.]+) updates/s", done[0]) if done else None
    if rate is None:
        sys.exit(f"cannot read the summary of {' '.join(flags)}:\n{out.stdout}")
    line = done[0]
    loss = re.search(r"final train (?:log-loss|hinge loss) ([0-9.]+)", line)
    test = re.search(r"test (?:log-loss [0-9.]+, accuracy|RMSE) ([0-9.]+)", line)
    if loss is None:  # matrix factorization: the last epoch line has the train RMSE
        epochs = [l for l in out.stdout.splitlines() if l.startswith("epoch ")]
        loss = re.search(r"train RMSE ([0-9.]+)", epochs[-1])
    busiest = re.search(r"the busiest worker ([0-9]+)%", line)
    return (float(rate.group(1)), float(loss.group(1)),
            float(test.group(1)) if test else None,
            float(busiest.group(1)) if busiest else None)


def export_libsvm(make_synthetic, flags, path, test_path):
    """Writes the rows //sparse:train reads for `flags` as LIBSVM (the mail corpus's test split
    too); returns the test file's path, or None."""
    mail = any(f.startswith("--mail") for f in flags)
    extra = [f"--test_out={test_path}"] if mail else []
    if not os.path.exists(path) or (mail and not os.path.exists(test_path)):
        subprocess.run([make_synthetic] + flags + [f"--out={path}"] + extra, check=True,
                       capture_output=True)
    return test_path if mail else None


def run_sklearn(x, y, xt, yt, epochs, lr, seed):
    model, seconds = fit_sklearn(x, y, epochs, seed, lr)
    loss = log_loss(model.decision_function(x), y)
    test = float(np.mean(np.sign(model.decision_function(xt)) == yt)) if xt is not None else None
    return epochs * x.shape[0] / seconds, loss, test, None


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(DATASETS) + 1, figsize=(4.4 * (len(DATASETS) + 1), 4.0))
    for ax, name in zip(axes, DATASETS):
        labels, ones, twos = [], [], []
        for mode, (_, applies) in MODES.items():
            if name not in applies:
                continue
            labels.append(mode)
            for workers, into in ((1, ones), (2, twos)):
                rates = [r["updates_per_s"] for r in rows
                         if (r["dataset"], r["mode"], r["workers"]) == (name, mode, workers)]
                into.append(statistics.median(rates) / 1e6 if rates else 0.0)
        xs = np.arange(len(labels))
        ax.bar(xs - 0.2, ones, 0.4, label="1 worker")
        ax.bar(xs + 0.2, twos, 0.4, label="2 workers")
        ref = [r["updates_per_s"] for r in rows if (r["dataset"], r["mode"]) == (name, "sklearn")]
        if ref:
            ax.axhline(statistics.median(ref) / 1e6, color="0.3", ls="--", lw=1,
                       label="scikit-learn SGDClassifier")
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=30, fontsize=8)
        ax.set_title(name, fontsize=10)
        ax.set_ylabel("M updates/s (median)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    ax = axes[-1]
    speedups = []
    for d in SWEEP_FEATURES:
        one = [r["updates_per_s"] for r in rows if (r["dataset"], r["mode"], r["workers"]) ==
               (f"synthetic_D{d}", "async", 1)]
        two = [r["updates_per_s"] for r in rows if (r["dataset"], r["mode"], r["workers"]) ==
               (f"synthetic_D{d}", "async", 2)]
        speedups.append(statistics.median(two) / statistics.median(one) if one and two else 0.0)
    ax.plot(SWEEP_FEATURES, speedups, "o-", label="Hogwild!, 2 workers / 1")
    ax.axhline(2.0, color="0.7", lw=0.8, label="linear")
    ax.axhline(1.8, color="0.5", lw=0.8, ls=":", label="target 1.8x")
    ax.set_xscale("log")
    ax.set_xlabel("features D of the synthetic set (76 non-zeros per row)")
    ax.set_ylabel("speedup of 2 workers")
    ax.set_ylim(0.8, 2.1)
    ax.set_title("fewer features: more shared coordinates", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    loads = [r["load_1min_before"] for r in rows]
    fig.suptitle(f"{os.cpu_count()} CPUs, 1-minute load average {min(loads):.1f} to "
                 f"{max(loads):.1f} while measured", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--bin", default="bazel-bin/sparse")
    parser.add_argument("--cyclades_batch", type=int, default=1000)
    parser.add_argument("--data_dir", default="/tmp/hogwild_sparse_modes")
    parser.add_argument("--out", default="benchmarks/results/sparse_modes")
    parser.add_argument("--plot_only", action="store_true",
                        help="redraw the figure and the tables from OUT.csv")
    args = parser.parse_args()
    train = os.path.join(args.bin, "train")
    rows = []
    if args.plot_only:
        with open(args.out + ".csv") as f:
            for r in csv.DictReader(f):
                r["workers"] = int(r["workers"])
                for key in ("updates_per_s", "final_loss", "load_1min_before"):
                    r[key] = float(r[key])
                rows.append(r)
    else:
        os.makedirs(args.data_dir, exist_ok=True)
        from sklearn.datasets import load_svmlight_file
        sklearn_data = {}
        for name, (_, _, _, _, export) in DATASETS.items():
            if export is None:
                continue
            path = os.path.join(args.data_dir, f"{name}.svm")
            test_path = os.path.join(args.data_dir, f"{name}_test.svm")
            test_path = export_libsvm(os.path.join(args.bin, "make_synthetic"), export, path,
                                      test_path)
            x, y = load_svmlight_file(path, dtype=np.float64)
            xt, yt = (load_svmlight_file(test_path, n_features=x.shape[1], dtype=np.float64)
                      if test_path else (None, None))
            sklearn_data[name] = (x, np.where(y > 0, 1.0, -1.0), xt,
                                  None if yt is None else np.where(yt > 0, 1.0, -1.0))
        configs = []
        for name, (flags, epochs, lr, _, _) in DATASETS.items():
            for mode, (mode_flags, applies) in MODES.items():
                if name not in applies:
                    continue
                for workers in (1, 2):
                    batch = args.cyclades_batch if mode == "cyclades" else 1
                    configs.append((name, mode, workers, flags + mode_flags + [
                        f"--workers={workers}", f"--epochs={epochs}", f"--lr={lr}",
                        f"--batch_size={batch}"]))
        for d in SWEEP_FEATURES:
            for workers in (1, 2):
                configs.append((f"synthetic_D{d}", "async", workers, [
                    "--model=logreg", f"--synthetic_features={d}", "--synthetic_test_examples=0",
                    f"--workers={workers}", "--epochs=10", "--lr=0.5"]))
        print("load before:", uptime(), flush=True)
        for rep in range(args.reps):
            load = load_average()
            for name, mode, workers, flags in configs:
                rate, loss, test, busiest = run_ours(train, flags)
                rows.append({"dataset": name, "mode": mode, "workers": workers, "rep": rep + 1,
                             "updates_per_s": round(rate), "final_loss": loss,
                             "test": "" if test is None else test,
                             "cyclades_busiest_pct": "" if busiest is None else busiest,
                             "load_1min_before": load})
                print(f"rep {rep + 1} {name:18s} {mode:11s} {workers} {rate:12.0f} updates/s "
                      f"loss {loss:.6f} test {test}", flush=True)
            for name, (x, y, xt, yt) in sklearn_data.items():
                _, epochs, lr, _, _ = DATASETS[name]
                rate, loss, test, _ = run_sklearn(x, y, xt, yt, epochs, lr, rep + 1)
                rows.append({"dataset": name, "mode": "sklearn", "workers": 1, "rep": rep + 1,
                             "updates_per_s": round(rate), "final_loss": loss,
                             "test": "" if test is None else test,
                             "cyclades_busiest_pct": "", "load_1min_before": load})
                print(f"rep {rep + 1} {name:18s} sklearn     1 {rate:12.0f} updates/s "
                      f"loss {loss:.6f} test {test}", flush=True)
        print("load after: ", uptime())
        with open(args.out + ".csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    keys = sorted({(r["dataset"], r["mode"], r["workers"]) for r in rows},
                  key=lambda k: (list(DATASETS).index(k[0]) if k[0] in DATASETS else 9, k[0],
                                 ["sklearn", *MODES].index(k[1]), k[2]))
    print(f"\n| data | mode | workers | updates/s | vs 1 worker | vs scikit-learn | final loss "
          f"| test |\n|---|---|---:|---:|---:|---:|---:|---:|")
    for key in keys:
        mine = [r for r in rows if (r["dataset"], r["mode"], r["workers"]) == key]
        rate = statistics.median(r["updates_per_s"] for r in mine)
        one = [r["updates_per_s"] for r in rows
               if (r["dataset"], r["mode"], r["workers"]) == (key[0], key[1], 1)]
        ref = [r["updates_per_s"] for r in rows if (r["dataset"], r["mode"]) == (key[0], "sklearn")]
        tests = [float(r["test"]) for r in mine if r["test"] != ""]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {rate:,.0f} | "
              f"{rate / statistics.median(one):.2f}x | "
              f"{(f'{rate / statistics.median(ref):.2f}x') if ref else ''} | "
              f"{statistics.median(r['final_loss'] for r in mine):.4f} | "
              f"{(f'{statistics.median(tests):.4f}') if tests else ''} |")
    plot(rows, args.out + ".png")
    print(f"wrote {args.out}.csv and {args.out}.png")


if __name__ == "__main__":
    main()
