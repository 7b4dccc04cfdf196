#!/usr/bin/python3
"""The cnn model's CPU training step: hogwild (oneDNN; im2col + OpenBLAS) against PyTorch, one thread.

Same network (conv5x5-32 pad 2, ReLU, maxpool 2, conv5x5-64 pad 2, ReLU, maxpool 2, flatten,
dense 3136->256, ReLU, dense 256->10), same batch (64), float32, softmax cross-entropy, one plain
SGD step per iteration. PyTorch runs with torch.set_num_threads(1) and OPENBLAS_NUM_THREADS=1,
once with its default conv path (oneDNN/MKL-DNN, when built in) and once with oneDNN disabled
(its own im2col + BLAS path). Our side is //benchmarks:cnn_step_benchmark's BM_CnnTrainStep,
once with the default oneDNN convolutions (im2col:0) and once with im2col + OpenBLAS per example
(im2col:1), run from here so all are measured in one run on the same machine state.

The four are sampled interleaved (ours twice, PyTorch default, PyTorch without oneDNN, repeat), so a
shared machine's changing load hits them alike. Reports examples/s by wall time and by process
CPU time (on a shared machine CPU time is closer to what one free core delivers), median and
best sample of each, and the ratios ours/theirs.

  bazel build -c opt //benchmarks:cnn_step_benchmark
  /usr/bin/python3 benchmarks/cnn_vs_pytorch.py --ours bazel-bin/benchmarks/cnn_step_benchmark

Needs Debian's python3-torch (tools/setup.sh --bench). Use /usr/bin/python3: another python3 on
PATH may lack Debian's packages.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before torch loads OpenBLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")

BATCH = 64


def loaded_blas():
    """The BLAS library this process actually mapped (torch links whatever libblas.so.3 is)."""
    with open("/proc/self/maps") as maps:
        libs = {line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(libs)) or "none mapped"


def torch_stepper(pool_first=False):
    """The PyTorch model, optimizer and a batch; returns a function doing one SGD step.

    pool_first: each ReLU + MaxPool2d written as MaxPool2d + ReLU, the same function and gradient,
    which is how our cnn model computes it (trainer/model/model.cc): what the same rewrite gives
    PyTorch, for a like-for-like reading of the comparison."""
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(0)
    def relu_pool():
        return [nn.MaxPool2d(2), nn.ReLU()] if pool_first else [nn.ReLU(), nn.MaxPool2d(2)]

    model = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), *relu_pool(),
        nn.Conv2d(32, 64, 5, padding=2), *relu_pool(),
        nn.Flatten(), nn.Linear(3136, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(BATCH, 1, 28, 28)
    y = torch.arange(BATCH) % 10

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return step


def torch_rate(step, mkldnn, iterations):
    """(examples/s by wall time, examples/s by CPU time) of `iterations` steps."""
    import torch
    with torch.backends.mkldnn.flags(enabled=mkldnn):
        step()  # warm up this path (oneDNN builds its kernels on first use)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(iterations):
            step()
        t1, c1 = time.perf_counter(), time.process_time()
    return BATCH * iterations / (t1 - t0), BATCH * iterations / (c1 - c0)


def ours_rate(binary, min_time_s, im2col=0):
    out = subprocess.run(
        [binary, f"--benchmark_filter=BM_CnnTrainStep/batch:{BATCH}/im2col:{im2col}/",
         "--benchmark_format=json",
         f"--benchmark_min_time={min_time_s}"],
        check=True, capture_output=True, text=True).stdout
    run = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"][0]
    # real_time and cpu_time are per iteration (one step of BATCH examples), in ms.
    return BATCH / (run["real_time"] / 1e3), BATCH / (run["cpu_time"] / 1e3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ours", default="bazel-bin/benchmarks/cnn_step_benchmark",
                        help="path of the built //benchmarks:cnn_step_benchmark")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10, help="steps per PyTorch sample")
    args = parser.parse_args()

    import torch
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"mkldnn available {torch.backends.mkldnn.is_available()}")
    step = torch_stepper()
    print(f"BLAS mapped: {loaded_blas()}")
    names = ["hogwild, default (oneDNN conv)", "hogwild, im2col + OpenBLAS",
             "pytorch, default (oneDNN conv)",
             "pytorch, oneDNN off (im2col + BLAS)"]
    samples = {name: [] for name in names}
    # Interleaved, so that a shared machine's changing load hits all three alike.
    for _ in range(args.repetitions):
        samples[names[0]].append(ours_rate(args.ours, 1.0, 0))
        samples[names[1]].append(ours_rate(args.ours, 1.0, 1))
        samples[names[2]].append(torch_rate(step, True, args.iterations))
        samples[names[3]].append(torch_rate(step, False, max(2, args.iterations // 4)))
    print(f"\ncnn training step, batch {BATCH}, one thread, {args.repetitions} interleaved samples")
    print(f"{'':38} {'ex/s wall':>10} {'ex/s CPU':>9} {'best wall':>10} {'best CPU':>9} "
          f"{'ours/them (median wall, CPU; best wall, CPU)':>46}")
    ours = samples[names[0]]
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    best = lambda xs, i: max(x[i] for x in xs)
    for name in names:
        xs = samples[name]
        print(f"{name:38} {med(xs, 0):10.0f} {med(xs, 1):9.0f} {best(xs, 0):10.0f} "
              f"{best(xs, 1):9.0f}   {med(ours, 0) / med(xs, 0):9.2f} {med(ours, 1) / med(xs, 1):6.2f}"
              f" {best(ours, 0) / best(xs, 0):9.2f} {best(ours, 1) / best(xs, 1):6.2f}")
    print(f"load average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
