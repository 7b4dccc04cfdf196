#!/usr/bin/python3
"""The simulator held to real runs: each policy at 2 workers, run for real on threads and then
simulated with its time model fitted to that run's own step times (simulate --calibrate_from,
sim/calibration.h), over several seeds; the quantities side by side with the simulator's relative
error and the real runs' spread.

Each seed: `//trainer:train --mode=M --workers=2 --seed=S --log_every=1 --log=...` (Fashion-MNIST
MLP, batch 64, lr 0.05, --epochs), then `//sim:simulate` with the same training flags and
--calibrate_from that log. Compared: the training time (real: the log's last train row, so the
final test evaluation that the summary's wall time includes is left out; simulated: the simulated
time), the final test accuracy, and the staleness mean and max. A worker's measured step also
holds what the fit cannot see separately (sync's barrier wait and reduction, locked's wait for the
lock), which the simulator then adds again: the policies that wait are where the time model is
weakest.

    bazel build //trainer:train //sim:simulate
    /usr/bin/python3 benchmarks/calibrate.py [--seeds=5] [--epochs=2] [--modes=async,sync,...]

Prints a Markdown table (medians over seeds; relative error = simulated / real - 1 of the
medians; spread = the real runs' min to max) and `uptime` before and after.
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

SIM = re.compile(r"simulated time ([0-9.]+) s")
FINAL = re.compile(r"final test accuracy ([0-9.]+)% \| test loss [0-9.]+ \| staleness mean "
                   r"([0-9.]+), max ([0-9]+)")


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run(cmd, log=None):
    """A run's figures; its time is the simulated time, or with `log` the real run's last train
    row's wall_time_s (the training, without the final evaluation)."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    text = out.stdout + out.stderr
    time, final = SIM.search(text), FINAL.search(text)
    if out.returncode != 0 or final is None or (log is None and time is None):
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{text}")
    if log is not None:
        with open(log) as f:
            rows = [r for r in csv.DictReader(f) if r["kind"] == "train"]
        seconds = max(float(r["wall_time_s"]) for r in rows)
    else:
        seconds = float(time.group(1))
    return {"time_s": seconds, "accuracy": float(final.group(1)),
            "staleness_mean": float(final.group(2)), "staleness_max": float(final.group(3))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--modes", default="async,sync,ssp,backup,local_sgd,locked,round_robin")
    parser.add_argument("--train", default="bazel-bin/trainer/cli/train")
    parser.add_argument("--simulate", default="bazel-bin/sim/simulate")
    args = parser.parse_args()
    common = ["--workers=2", "--batch_size=64", "--lr=0.05", f"--epochs={args.epochs}"]
    results = {}
    print("load before:", uptime(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, args.seeds + 1):
            for mode in args.modes.split(","):
                extra = ["--backup_workers=1"] if mode == "backup" else []
                log = os.path.join(tmp, f"{mode}_{seed}.csv")
                flags = common + [f"--mode={mode}", f"--seed={seed}"] + extra
                real = run([args.train] + flags + ["--log_every=1", f"--log={log}"], log)
                sim = run([args.simulate] + flags + [f"--calibrate_from={log}"])
                results.setdefault(mode, []).append((real, sim))
                print(f"seed {seed} {mode:12s} real {real} sim {sim}", flush=True)
    print("load after: ", uptime())
    print(f"\nmedians over {args.seeds} seeds; rel. error = simulated / real - 1; spread = the "
          "real runs' min to max\n")
    print("| mode | quantity | real | spread | simulated | rel. error |")
    print("|---|---|---:|---:|---:|---:|")
    for mode, pairs in results.items():
        for key, label in (("time_s", "training time (s)"), ("accuracy", "test accuracy (%)"),
                           ("staleness_mean", "staleness mean"),
                           ("staleness_max", "staleness max")):
            real = [p[0][key] for p in pairs]
            sim = statistics.median(p[1][key] for p in pairs)
            med = statistics.median(real)
            error = f"{sim / med - 1:+.1%}" if med else "—"
            print(f"| {mode} | {label} | {med:.3g} | {min(real):.3g} to {max(real):.3g} | "
                  f"{sim:.3g} | {error} |")


if __name__ == "__main__":
    main()
