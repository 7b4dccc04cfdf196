#!/usr/bin/python3
"""The SpamAssassin corpus: our sparse models against scikit-learn's on the same vectors.

The vectors are ours (sparse/mail_corpus.h: subject and body, 2^18 crc32-hashed binary
features, unit L2 rows, the fixed 80/20 split), written once as LIBSVM by
`//sparse:make_synthetic --mail=spam` and read by load_svmlight_file, so both sides train on the
very same rows. The SGD settings are the same on both sides: step 0.5 constant, batch 1, no
regularization, no intercept, shuffled epochs. scikit-learn's SGDClassifier is the like-for-like
reference; its LogisticRegression and LinearSVC, solved to convergence (C = 1e4: almost no
regularization), say what a linear model can reach on these vectors. Each SGD configuration runs
once per seed (--seeds); the table gives the median test accuracy and its range.

    tools/setup.sh --spam --bench    # the corpus; python3-sklearn
    bazel build //sparse:train //sparse:make_synthetic
    /usr/bin/python3 benchmarks/spam_vs_sklearn.py [--seeds=5] [--epochs=10]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import warnings

import numpy as np


def run_ours(train, model, workers, epochs, seed):
    out = subprocess.run(
        [train, "--dataset=spam", f"--model={model}", f"--workers={workers}",
         f"--epochs={epochs}", "--lr=0.5", "--batch_size=1", f"--seed={seed}"],
        capture_output=True, text=True, check=True).stdout
    done = re.search(r"; test [a-z -]+ [0-9.]+, accuracy ([0-9.]+)", out.splitlines()[-1])
    if done is None:
        sys.exit(f"cannot read the summary of {train}:\n{out}")
    return float(done.group(1))


def run_sgd(loss, x, y, xt, yt, epochs, seed):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
    model = SGDClassifier(loss=loss, learning_rate="constant", eta0=0.5, penalty=None,
                          fit_intercept=False, max_iter=epochs, tol=None, shuffle=True,
                          random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, y)
    return model.score(xt, yt)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--bin", default="bazel-bin/sparse")
    args = parser.parse_args()
    from sklearn.datasets import load_svmlight_file
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, "train.svm"), os.path.join(tmp, "test.svm")]
        subprocess.run([os.path.join(args.bin, "make_synthetic"), "--mail=spam",
                        f"--out={paths[0]}", f"--test_out={paths[1]}"], check=True)
        x, y = load_svmlight_file(paths[0], n_features=1 << 18)
        xt, yt = load_svmlight_file(paths[1], n_features=1 << 18)
    print(f"data: {x.shape[0]} train / {xt.shape[0]} test mails, {x.shape[1]} features, "
          f"{x.nnz / x.shape[0]:.1f} non-zeros per mail; {args.epochs} epochs, "
          f"{args.seeds} seeds")
    train = os.path.join(args.bin, "train")
    seeds = range(1, args.seeds + 1)
    rows = []
    for model, loss in (("logreg", "log_loss"), ("svm", "hinge")):
        for workers in (1, 2):
            rows.append((f"ours {model}, async, {workers} worker{'s' if workers > 1 else ''}",
                         [run_ours(train, model, workers, args.epochs, s) for s in seeds]))
        rows.append((f"scikit-learn SGDClassifier({loss})",
                     [run_sgd(loss, x, y, xt, yt, args.epochs, s) for s in seeds]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows.append(("scikit-learn LogisticRegression (converged)",
                     [LogisticRegression(C=1e4, fit_intercept=False, max_iter=1000)
                      .fit(x, y).score(xt, yt)]))
        rows.append(("scikit-learn LinearSVC (converged)",
                     [LinearSVC(C=1e4, fit_intercept=False, max_iter=100000)
                      .fit(x, y).score(xt, yt)]))
    print(f"\n| {'configuration':44s} | test accuracy (median) | range |")
    print(f"|{'-' * 46}|-----------------------:|------:|")
    for name, accs in rows:
        spread = f"{min(accs):.4f}-{max(accs):.4f}" if len(accs) > 1 else "-"
        print(f"| {name:44s} | {statistics.median(accs):22.4f} | {spread} |")


if __name__ == "__main__":
    main()
