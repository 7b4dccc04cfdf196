#!/usr/bin/python3
"""The cnn model's CPU training step: hogwild (im2col + OpenBLAS) against PyTorch, one thread.

Same network (conv5x5-32 pad 2, ReLU, maxpool 2, conv5x5-64 pad 2, ReLU, maxpool 2, flatten,
dense 3136->256, ReLU, dense 256->10), same batch (64), float32, softmax cross-entropy, one plain
SGD step per iteration. PyTorch runs with torch.set_num_threads(1) and OPENBLAS_NUM_THREADS=1,
once with its default conv path (oneDNN/MKL-DNN, when built in) and once with oneDNN disabled
(its own im2col + BLAS path, like ours). Our side is //benchmarks:cnn_step_benchmark's
BM_CnnTrainStep, run from here so both are measured in one run on the same machine state.

Reports examples/s by wall time and by process CPU time (the machine may be shared: CPU time is
what one core delivers regardless of other load), medians over repetitions, and the ratios.

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


def torch_step_rates(mkldnn, warmup, iterations, repetitions):
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
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

    wall, cpu = [], []
    with torch.backends.mkldnn.flags(enabled=mkldnn):
        for _ in range(warmup):
            step()
        for _ in range(repetitions):
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(iterations):
                step()
            t1, c1 = time.perf_counter(), time.process_time()
            wall.append(BATCH * iterations / (t1 - t0))
            cpu.append(BATCH * iterations / (c1 - c0))
    return statistics.median(wall), statistics.median(cpu)


def ours_rates(binary, repetitions):
    out = subprocess.run(
        [binary, "--benchmark_filter=BM_CnnTrainStep", "--benchmark_format=json",
         f"--benchmark_repetitions={repetitions}", "--benchmark_min_time=2"],
        check=True, capture_output=True, text=True).stdout
    runs = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    # real_time and cpu_time are per iteration (one step of BATCH examples), in ms.
    wall = [BATCH / (b["real_time"] / 1e3) for b in runs]
    cpu = [BATCH / (b["cpu_time"] / 1e3) for b in runs]
    return statistics.median(wall), statistics.median(cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ours", default="bazel-bin/benchmarks/cnn_step_benchmark",
                        help="path of the built //benchmarks:cnn_step_benchmark")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10, help="steps per PyTorch repetition")
    args = parser.parse_args()

    import torch
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"mkldnn available {torch.backends.mkldnn.is_available()}")
    print(f"BLAS mapped: {loaded_blas()}")
    rows = []
    rows.append(("hogwild (im2col + OpenBLAS)",) + ours_rates(args.ours, args.repetitions))
    rows.append(("pytorch, default (oneDNN conv)",)
                + torch_step_rates(True, 3, args.iterations, args.repetitions))
    rows.append(("pytorch, oneDNN off (im2col + BLAS)",)
                + torch_step_rates(False, 3, args.iterations, args.repetitions))
    ours_wall, ours_cpu = rows[0][1], rows[0][2]
    print(f"\ncnn training step, batch {BATCH}, one thread; medians of {args.repetitions}")
    print(f"{'':38} {'examples/s wall':>16} {'examples/s CPU':>15} {'ours/them wall':>15} "
          f"{'ours/them CPU':>14}")
    for name, wall, cpu in rows:
        print(f"{name:38} {wall:16.0f} {cpu:15.0f} {ours_wall / wall:15.2f} {ours_cpu / cpu:14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
