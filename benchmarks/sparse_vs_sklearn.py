#!/usr/bin/python3
"""Sparse logistic regression, ours (//sparse:train) against scikit-learn's SGDClassifier.

The paper's setting on the RCV1-like synthetic set (100,000 x 47,236, ~76 non-zeros per row,
sparse/synthetic.h): step 0.5 constant, 5 epochs, batch 1, no regularization, no intercept.
scikit-learn gets the very same rows (written once by //sparse:make_synthetic as LIBSVM, read by
load_svmlight_file) and runs on one thread (SGDClassifier has no threads for a binary problem).
Each configuration runs --reps times back to back, in turn; the medians are printed, with the
final training log-loss of each (ours: the trainer's own double-precision evaluation; sklearn's:
the same formula on its decision_function).

    bazel build //sparse:train //sparse:make_synthetic
    /usr/bin/python3 benchmarks/sparse_vs_sklearn.py [--reps=3] [--epochs=5]

Needs python3-sklearn (tools/setup.sh --bench). Prints `uptime` before and after: the machine's
load is part of the result.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def log_loss(margins, y):
    z = y * margins
    return float(np.mean(np.logaddexp(0.0, -z)))


def run_ours(binary, mode, workers, epochs):
    out = subprocess.run(
        [binary, f"--mode={mode}", f"--workers={workers}", f"--epochs={epochs}", "--lr=0.5",
         "--batch_size=1", "--model=logreg"], capture_output=True, text=True, check=True).stdout
    done = re.search(r"\(([0-9.]+) updates/s.*final train log-loss ([0-9.]+)", out)
    if done is None:
        sys.exit(f"cannot read the summary of {binary}:\n{out}")
    return float(done.group(1)), float(done.group(2))


def fit_sklearn(x, y, epochs, seed, lr=0.5):
    """The paper's setting in SGDClassifier (constant step, no regularization, no intercept);
    returns the fitted model and the seconds fit() took. Also used by sparse_modes.py."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
    import warnings
    model = SGDClassifier(loss="log_loss", learning_rate="constant", eta0=lr, penalty=None,
                          fit_intercept=False, max_iter=epochs, tol=None, shuffle=True,
                          random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        model.fit(x, y)
        seconds = time.perf_counter() - start
    return model, seconds


def run_sklearn(x, y, epochs, seed):
    model, seconds = fit_sklearn(x, y, epochs, seed)
    return epochs * x.shape[0] / seconds, log_loss(model.decision_function(x), y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--bin", default="bazel-bin/sparse")
    parser.add_argument("--data", default="/tmp/hogwild_synthetic.svm")
    args = parser.parse_args()
    train = os.path.join(args.bin, "train")
    if not os.path.exists(args.data):
        subprocess.run([os.path.join(args.bin, "make_synthetic"), f"--out={args.data}"],
                       check=True)
    from sklearn.datasets import load_svmlight_file
    x, y = load_svmlight_file(args.data, n_features=47236, dtype=np.float64)
    y = np.where(y > 0, 1.0, -1.0)
    print(f"data: {x.shape[0]} x {x.shape[1]}, {x.nnz / x.shape[0]:.1f} non-zeros per row")
    print("load before:", uptime())
    configs = [("ours async, 1 worker", "async", 1), ("ours async, 2 workers", "async", 2),
               ("ours locked, 1 worker", "locked", 1), ("ours locked, 2 workers", "locked", 2),
               ("ours round-robin, 2 workers", "round_robin", 2)]
    results = {name: [] for name, _, _ in configs}
    results["scikit-learn SGDClassifier"] = []
    for rep in range(args.reps):
        for name, mode, workers in configs:
            results[name].append(run_ours(train, mode, workers, args.epochs))
        results["scikit-learn SGDClassifier"].append(run_sklearn(x, y, args.epochs, rep + 1))
    print("load after: ", uptime())
    base = statistics.median(r[0] for r in results["scikit-learn SGDClassifier"])
    one = statistics.median(r[0] for r in results["ours async, 1 worker"])
    print(f"\n{'configuration':34s} {'updates/s':>12s} {'vs sklearn':>10s} {'vs ours 1':>9s}"
          f" {'final train log-loss':>21s}")
    for name, runs in results.items():
        rate = statistics.median(r[0] for r in runs)
        loss = statistics.median(r[1] for r in runs)
        print(f"{name:34s} {rate:12.0f} {rate / base:9.2f}x {rate / one:8.2f}x {loss:21.6f}")


if __name__ == "__main__":
    main()
