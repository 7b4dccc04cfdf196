#!/usr/bin/python3
"""The performance targets (benchmarks/README.md), measured side by side in one run (benchmarks/targets.sh).

Each figure is a pair of sides, A (ours) and B (its reference), sampled in alternation, A first
on odd repetitions and B first on even ones, so a changing load hits both alike. For every pair
the table gives the median of each side, its spread (min-max over the repetitions), the median
of the per-repetition ratios A/B (B/A for times, so > 1 is always in our favour) and the target.
The machine's quiet probe (benchmarks/quiet_probe.sh) runs before and after each block; a block
during which the machine was BUSY says so in the table.

Blocks (W1: MLP 784-256-256-10, SGD lr 0.05, batch 64, Fashion-MNIST standardized with the
training set's mean and standard deviation on both sides; one thread per worker or process):
  gemm    one W1 train step vs its own 8 GEMMs straight into OpenBLAS, batch 64, one core
          (//benchmarks:train_step_benchmark BM_TrainStep/64 vs BM_GemmLimit/64; examples per CPU
          second, Google Benchmark's rate counter; every other figure is by wall time)
  mlp     ours 1 worker, 2 async, sync 2 (global batch 64) for one epoch (no evaluation), PyTorch
          one process and Hogwild 2 processes (benchmarks/pytorch_compare.py); pairs: 2 async vs
          1, sync 2 vs async 2, 1 worker vs PyTorch one process, 2 async vs PyTorch Hogwild 2
  cnn     the cnn model's train step, batch 64, one thread: ours (BM_CnnTrainStep, default oneDNN
          convolutions) vs PyTorch's default path (benchmarks/cnn_vs_pytorch.py's model), as
          written (ReLU, then max-pool) and with the pool-then-ReLU order ours computes (the same
          function; a like-for-like row)
  tta     time to 85% test accuracy, 2 async workers, evaluations every 0.25 epoch: ours vs
          PyTorch Hogwild 2 processes (both count their evaluations in the time; ours evaluates
          on its evaluator thread, PyTorch's rank 0 inline); and ours with vs without its
          evaluation time (the log row's wall_time_s less its eval_seconds)

PyTorch gets the serial OpenBLAS (LD_LIBRARY_PATH, as pytorch_compare.sh) and one thread.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
TORCH_ENV = dict(os.environ, LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu/openblas-serial",
                 OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def sh(cmd, env=None):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout


def probe(when):
    """(quiet, line) from benchmarks/quiet_probe.sh."""
    r = subprocess.run(["bash", "-c", f'source "{HERE}/quiet_probe.sh"; quiet_probe "{when}"'],
                       capture_output=True, text=True)
    line = r.stdout.strip()
    print(line, flush=True)
    return r.returncode == 0, line


class Bins:
    def __init__(self, root):
        self.root = root

    def __call__(self, name):
        path = os.path.join(self.root, name)
        if not os.access(path, os.X_OK):
            sys.exit(f"cannot find {path}: bazel build //benchmarks:targets first")
        return path


def gemm_block(bins, reps, min_time):
    """examples/s of BM_TrainStep/64 (A) and BM_GemmLimit/64 (B), each its own process."""
    binary = bins("benchmarks/train_step_benchmark")

    def rate(name):
        out = sh([binary, f"--benchmark_filter=^{name}/64$", "--benchmark_format=json",
                  f"--benchmark_min_time={min_time}"])
        run = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"][0]
        return run["examples/s"]  # per CPU second (Google Benchmark rate counters)

    return alternate(reps, lambda: rate("BM_TrainStep"), lambda: rate("BM_GemmLimit"))


def ours_mlp(bins, work, runs, epochs, eval_every=0.0, target=0.85):
    """{'examples_per_s', 'time_to_target_s'} of one //benchmarks:sync_vs_async run."""
    out_dir = tempfile.mkdtemp(dir=work)
    sh([bins("benchmarks/sync_vs_async"), f"--runs={runs}", f"--epochs={epochs}",
        f"--eval_every_epochs={eval_every}", "--plot=false", f"--target_accuracy={target}",
        # sync:2's global batch is 64, as the targets and PyTorch's DDP have it.
        "--sync_batch_size=64", f"--out_dir={out_dir}"])
    with open(os.path.join(out_dir, "summary.csv")) as f:
        header, row = f.readline().strip().split(","), f.readline().strip().split(",")
    r = dict(zip(header, row))
    tta = r.get("time_to_target_s", "")
    # The first eval row at the target, less the evaluations' own time before it (the log's
    # eval_seconds): the time to accuracy without evaluation time.
    tta_no_eval = None
    if r.get("log") and os.path.exists(r["log"]):
        with open(r["log"]) as f:
            for e in csv.DictReader(f):
                if e["kind"] == "eval" and float(e["test_accuracy"]) >= target:
                    tta_no_eval = float(e["wall_time_s"]) - float(e.get("eval_seconds") or 0)
                    break
    return {"examples_per_s": float(r["examples_per_s"]),
            "time_to_target_s": float(tta) if tta else None, "tta_no_eval_s": tta_no_eval}


def torch_mlp(mode, workers, epochs, eval_every=0.0, target=0.85):
    out = sh([PYTHON, os.path.join(HERE, "pytorch_compare.py"), "--mode", mode, "--workers",
              str(workers), "--epochs", str(epochs), "--eval_every", str(eval_every),
              "--target", str(target)], env=TORCH_ENV)
    return json.loads(out.strip().splitlines()[-1])


def cnn_ours(bins, min_time):
    # im2col:0: the backend's default convolutions (oneDNN), as the trainer runs them.
    out = sh([bins("benchmarks/cnn_step_benchmark"),
              "--benchmark_filter=BM_CnnTrainStep/batch:64/im2col:0/",
              "--benchmark_format=json", f"--benchmark_min_time={min_time}"])
    run = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"][0]
    return 64 / (run["real_time"] / 1e3)  # real_time: ms per step of 64 examples


CNN_TORCH = """
import json, sys
sys.path.insert(0, sys.argv[1])
import cnn_vs_pytorch as c
step = c.torch_stepper(pool_first=sys.argv[3] == "1")
print(json.dumps(c.torch_rate(step, True, int(sys.argv[2]))[0]))
"""


def cnn_torch(iterations, pool_first=False):
    """PyTorch's step rate; pool_first: its ReLU + MaxPool2d written as MaxPool2d + ReLU, as ours
    computes them (the same function), for the like-for-like row."""
    return json.loads(sh([PYTHON, "-c", CNN_TORCH, HERE, str(iterations),
                          "1" if pool_first else "0"], env=TORCH_ENV))


def alternate(reps, a, b):
    """[(a, b)] per repetition, A first on odd ones, B first on even ones."""
    pairs = []
    for r in range(reps):
        if r % 2 == 0:
            x = a()
            y = b()
        else:
            y = b()
            x = a()
        pairs.append((x, y))
        print(f"  rep {r + 1}/{reps}: {x:.4g} vs {y:.4g}", flush=True)
    return pairs


def row(name, pairs, target, unit, higher_is_better=True, busy=False):
    xs = [p[0] for p in pairs if p[0] is not None and p[1] is not None]
    ys = [p[1] for p in pairs if p[0] is not None and p[1] is not None]
    if not xs:
        return f"| {name} | not reached | | | {target} | {'BUSY' if busy else 'quiet'} |"
    ratios = [x / y if higher_is_better else y / x for x, y in zip(xs, ys)]
    med = statistics.median
    fmt = (lambda v: f"{v:,.0f}") if unit == "examples/s" else (lambda v: f"{v:.2f}")
    return (f"| {name} ({unit}) | {fmt(med(xs))} ({fmt(min(xs))}–{fmt(max(xs))}) | "
            f"{fmt(med(ys))} ({fmt(min(ys))}–{fmt(max(ys))}) | {med(ratios):.2f} "
            f"({min(ratios):.2f}–{max(ratios):.2f}) | {target} | "
            f"{'BUSY' if busy else 'quiet'} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "bazel-bin"),
                        help="bazel-bin of the workspace")
    parser.add_argument("--reps", type=int, default=9,
                        help="repetitions of the gemm, mlp, cnn blocks")
    parser.add_argument("--tta_reps", type=int, default=5)
    parser.add_argument("--tta_epochs", type=int, default=3)
    parser.add_argument("--blocks", default="gemm,mlp,cnn,tta")
    args = parser.parse_args()
    bins = Bins(args.bin)
    blocks = args.blocks.split(",")
    work = tempfile.mkdtemp(prefix="hogwild_targets.")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}; torch: "
          f"{sh([PYTHON, os.path.join(HERE, 'pytorch_compare.py'), '--mode', 'single', '--show_blas'], env=TORCH_ENV).strip()}",
          flush=True)
    # OpenBLAS picks its kernels from OPENBLAS_CORETYPE when set (both sides inherit it), else
    # from the CPU, which moves the GEMM rate (benchmarks/results/2026-12-02-targets.md, "Which
    # OpenBLAS kernels"): the line printed says which the run used.
    core = sh(["bash", "-c", f'OPENBLAS_VERBOSE=2 "{bins("benchmarks/train_step_benchmark")}" '
                             '--benchmark_filter=none 2>&1 | grep -m1 "^Core" || true']).strip()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, the same for both "
          f"sides; ours loads {core or 'an unreported core'}", flush=True)
    rows = []

    def block(name, fn):
        quiet_before, _ = probe(f"before {name}")
        out = fn()
        quiet_after, _ = probe(f"after {name}")
        return out, not (quiet_before and quiet_after)

    if "gemm" in blocks:
        print("gemm: BM_TrainStep/64 vs BM_GemmLimit/64", flush=True)
        pairs, busy = block("gemm", lambda: gemm_block(bins, args.reps, 0.5))
        rows.append(row("MLP W1 step vs its 8 GEMMs in OpenBLAS, batch 64, 1 core", pairs, ">= 0.90",
                        "examples/s", busy=busy))
    if "mlp" in blocks:
        print("mlp: ours async:1, async:2, sync:2; PyTorch single, Hogwild 2 (1 epoch each)",
              flush=True)

        def mlp():
            samples = []
            for r in range(args.reps):
                ours = lambda: {k: ours_mlp(bins, work, k, 1)["examples_per_s"]
                                for k in ("async:1", "async:2", "sync:2")}
                theirs = lambda: {"single": torch_mlp("single", 1, 1)["examples_per_s"],
                                  "hogwild": torch_mlp("hogwild", 2, 1)["examples_per_s"]}
                if r % 2 == 0:
                    o = ours()
                    t = theirs()
                else:
                    t = theirs()
                    o = ours()
                samples.append((o, t))
                print(f"  rep {r + 1}/{args.reps}: ours {o}, PyTorch {t}", flush=True)
            return samples

        samples, busy = block("mlp", mlp)
        rows.append(row("MLP W1, 2 async workers vs 1", [(o["async:2"], o["async:1"]) for o, _ in samples],
                        ">= 1.85", "examples/s", busy=busy))
        rows.append(row("MLP W1, sync 2 (global batch 64) vs async 2",
                        [(o["sync:2"], o["async:2"]) for o, _ in samples], ">= 0.90", "examples/s",
                        busy=busy))
        rows.append(row("MLP W1, 1 worker vs PyTorch one process",
                        [(o["async:1"], t["single"]) for o, t in samples], ">= 1.4", "examples/s",
                        busy=busy))
        rows.append(row("MLP W1, 2 async workers vs PyTorch Hogwild 2 processes",
                        [(o["async:2"], t["hogwild"]) for o, t in samples], "> 1", "examples/s",
                        busy=busy))
    if "cnn" in blocks:
        print("cnn: ours BM_CnnTrainStep vs PyTorch default path (as written; and with its ReLU + "
              "pool computed as pool + ReLU, as ours), 1 thread, batch 64", flush=True)
        # Each repetition: ours, PyTorch as written, PyTorch pool-first, in an order that rotates.
        def cnn_samples():
            out = []
            for r in range(args.reps):
                sides = [("ours", lambda: cnn_ours(bins, 1.0)), ("torch", lambda: cnn_torch(10)),
                         ("torch_pf", lambda: cnn_torch(10, True))]
                sides = sides[r % 3:] + sides[:r % 3]
                got = {name: f() for name, f in sides}
                out.append(got)
                print(f"  rep {r + 1}/{args.reps}: ours {got['ours']:.4g}, PyTorch {got['torch']:.4g}, "
                      f"PyTorch pool-first {got['torch_pf']:.4g}", flush=True)
            return out
        samples, busy = block("cnn", cnn_samples)
        rows.append(row("CNN step, 1 worker vs PyTorch 1 thread",
                        [(g["ours"], g["torch"]) for g in samples], ">= 1.3", "examples/s",
                        busy=busy))
        rows.append(row("CNN step, 1 worker vs PyTorch 1 thread with the same pool-then-ReLU order",
                        [(g["ours"], g["torch_pf"]) for g in samples], "(like for like)",
                        "examples/s", busy=busy))
    if "tta" in blocks:
        print(f"tta: time to 85%, 2 async workers, eval every 0.25 epoch, {args.tta_epochs} epochs",
              flush=True)

        no_eval = []

        def ours_tta():
            r = ours_mlp(bins, work, "async:2", args.tta_epochs, 0.25)
            no_eval.append(r["tta_no_eval_s"])
            return r["time_to_target_s"] or float("nan")

        def tta():
            return alternate(
                args.tta_reps, ours_tta,
                lambda: torch_mlp("hogwild", 2, args.tta_epochs, 0.25)["time_to_target_s"]
                or float("nan"))

        pairs, busy = block("tta", tta)
        pairs = [(None if x != x else x, None if y != y else y) for x, y in pairs]
        rows.append(row("time to 85% test accuracy, 2 async vs PyTorch Hogwild 2", pairs, "> 1", "s",
                        higher_is_better=False, busy=busy))
        rows.append(row("time to 85%, ours with vs without its evaluation time (eval_seconds)",
                        list(zip([p[0] for p in pairs], no_eval)), "(information)", "s",
                        higher_is_better=True, busy=busy))

    print(f"\n## Targets (issue 16): medians over {args.reps} repetitions ({args.tta_reps} for time "
          f"to accuracy), spread min–max, sides alternating\n")
    print("| figure | ours (A) | reference (B) | ratio in our favour | target | machine |")
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        print(r)
    print(f"\nload average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
