#!/usr/bin/env python3
"""PyTorch eager baseline for the GPU check: MLP 784-256-256-10 train-step throughput.

The same model and step as benchmarks/gpu_mlp_benchmark.cc: Linear-ReLU-Linear-ReLU-Linear,
softmax cross-entropy (mean over the batch), plain SGD (lr 0.01), float32 with TF32 off (our
cuBLAS SGEMMs are full fp32), batches already on the GPU. Two variants:

  eager_sync   loss.item() every step, as our trainer reads each step's loss back (the fair
               comparison with our "step" rows);
  eager_async  no per-step host sync (PyTorch's best case for eager mode).

Prints one line per case and a line "RESULT {json}" per case. Exit status 2 with a reason
when PyTorch or a CUDA device is missing.

  python3 benchmarks/gpu_pytorch_mlp.py --batches 64 --seconds 5
"""
import argparse
import json
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", default="64", help="comma-separated batch sizes")
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per case")
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:  # pragma: no cover - depends on the machine
        print(f"no PyTorch: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("no CUDA device: torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device("cuda:0")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)

    for batch in [int(b) for b in args.batches.split(",")]:
        torch.manual_seed(1)
        model = torch.nn.Sequential(
            torch.nn.Linear(784, 256), torch.nn.ReLU(),
            torch.nn.Linear(256, 256), torch.nn.ReLU(),
            torch.nn.Linear(256, 10)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        # 16 resident batches, cycled: the input pipeline is not measured (as in our "step").
        xs = torch.randn(16, batch, 784, device=device)
        ys = torch.randint(0, 10, (16, batch), device=device)

        def step(i: int) -> torch.Tensor:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xs[i % 16]), ys[i % 16])
            loss.backward()
            opt.step()
            return loss

        for variant in ("eager_sync", "eager_async"):
            for i in range(30):  # warm-up: cuBLAS heuristics, allocator
                step(i)
            torch.cuda.synchronize()
            steps = 0
            start = time.perf_counter()
            deadline = start + args.seconds
            while True:
                loss = step(steps)
                if variant == "eager_sync":
                    loss.item()
                steps += 1
                if steps % 64 == 0 and time.perf_counter() >= deadline:
                    break
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            rate = steps * batch / elapsed
            print(f"torch {variant:11s} batch {batch:5d}  {rate:12.0f} examples/s", flush=True)
            print("RESULT " + json.dumps({"kind": f"torch_{variant}", "batch": batch,
                                          "workers": 1, "examples_per_s": round(rate, 1)}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
