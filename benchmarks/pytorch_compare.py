#!/usr/bin/env python3
"""PyTorch side of benchmarks/pytorch_compare.sh: workload W1 on the CPU.

W1: MLP 784-256-256-10, ReLU, softmax cross-entropy, plain SGD lr 0.05, batch 64, float32,
Fashion-MNIST (60,000 x 784, standardized with the training set's mean and standard deviation,
as the C++ loader does). Modes, each printing one JSON line:
  single   one process, torch.set_num_threads(1)
  hogwild  PyTorch's Hogwild recipe (examples/mnist_hogwild): the model in shared memory
           (model.share_memory()), one process per worker, each with its own optimizer and
           one thread, each training on its 1/W shard of every epoch's permutation (the same
           work split as ours: every example once per epoch)
  ddp      DistributedDataParallel on gloo, W processes, global batch --batch split evenly
The clock starts when every process is ready (a barrier) and stops when all are done, so
process start-up and imports are not counted; our trainer's clock likewise starts after the
dataset is loaded. With --eval_every > 0, rank 0 evaluates the test set that often (in
epochs of global progress) inside the timed run, as our worker 0 does, and the time to
--target accuracy is reported.
"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def blas_library():
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return sorted(libs)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(data_dir):
    def split(name):
        x = read_idx(os.path.join(data_dir, f"{name}-images-idx3-ubyte.gz"))
        y = read_idx(os.path.join(data_dir, f"{name}-labels-idx1-ubyte.gz"))
        return x.reshape(len(x), -1).astype(np.float32) / 255.0, y.astype(np.int64)
    xtr, ytr = split("train")
    xte, yte = split("t10k")
    mean, std = float(xtr.mean(dtype=np.float64)), float(xtr.std(dtype=np.float64))
    xtr = (xtr - mean) / std
    xte = (xte - mean) / std
    return (torch.from_numpy(xtr), torch.from_numpy(ytr), torch.from_numpy(xte),
            torch.from_numpy(yte))


def make_model():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def evaluate(model, xte, yte):
    with torch.no_grad():
        correct = 0
        for lo in range(0, len(xte), 1000):
            correct += (model(xte[lo:lo + 1000]).argmax(1) == yte[lo:lo + 1000]).sum().item()
    return correct / len(xte)


def train_shard(rank, workers, model, data, args, start_barrier, results, ddp=False):
    """Trains `model` on rank's share of every epoch; rank 0 reports timings."""
    torch.set_num_threads(1)
    xtr, ytr, xte, yte = data
    n = len(xtr)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    evals = []
    eval_period = int(args.eval_every * n) if args.eval_every > 0 else 0
    next_eval = eval_period
    if ddp:
        dist.barrier()
    else:
        start_barrier.wait()
    t0 = time.perf_counter()
    local = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(args.seed * 1000 + epoch))
        if ddp:
            # Global batch b: this rank's rows [b*r/W, b*(r+1)/W) of every global batch.
            batches = []
            for lo in range(0, n, args.batch):
                size = min(args.batch, n - lo)
                batches.append(perm[lo + size * rank // workers:lo + size * (rank + 1) // workers])
        else:
            shard = perm[n * rank // workers:n * (rank + 1) // workers]
            batches = [shard[lo:lo + args.batch] for lo in range(0, len(shard), args.batch)]
        for idx in batches:
            x, y = xtr[idx], ytr[idx]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            local += len(idx)
            if rank == 0 and eval_period and local * workers >= next_eval:
                acc = evaluate(model.module if ddp else model, xte, yte)
                evals.append((time.perf_counter() - t0, local * workers, acc))
                next_eval += eval_period
    if ddp:
        dist.barrier()
    elapsed = time.perf_counter() - t0
    if rank == 0:
        results.put({"elapsed": elapsed, "evals": evals})


def ddp_entry(rank, workers, port, data, args, results):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=workers)
    torch.manual_seed(args.seed)
    model = nn.parallel.DistributedDataParallel(make_model())
    train_shard(rank, workers, model, data, args, None, results, ddp=True)
    dist.destroy_process_group()


def run(args, data):
    n = len(data[0])
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    torch.manual_seed(args.seed)
    if args.mode == "single":
        model = make_model()
        train_shard(0, 1, model, data, args, ctx.Barrier(1), results)
        out = results.get()
        workers = 1
    elif args.mode == "hogwild":
        workers = args.workers
        model = make_model()
        model.share_memory()
        barrier = ctx.Barrier(workers)
        procs = [ctx.Process(target=train_shard,
                             args=(r, workers, model, data, args, barrier, results))
                 for r in range(workers)]
        for p in procs:
            p.start()
        out = results.get()
        for p in procs:
            p.join()
    else:
        workers = args.workers
        port = 29500 + os.getpid() % 1000
        procs = [ctx.Process(target=ddp_entry, args=(r, workers, port, data, args, results))
                 for r in range(workers)]
        for p in procs:
            p.start()
        out = results.get()
        for p in procs:
            p.join()
    tta = next((t for t, _, acc in out["evals"] if acc >= args.target), None)
    return {"impl": "pytorch", "mode": args.mode, "workers": workers,
            "batch": args.batch, "epochs": args.epochs,
            "examples_per_s": n * args.epochs / out["elapsed"], "wall_time_s": out["elapsed"],
            "time_to_target_s": tta,
            "final_eval_accuracy": out["evals"][-1][2] if out["evals"] else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["single", "hogwild", "ddp"], required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64,
                        help="per process (single, hogwild) or global (ddp)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval_every", type=float, default=0.0, help="epochs; 0: never")
    parser.add_argument("--target", type=float, default=0.85)
    parser.add_argument("--data_dir", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--show_blas", action="store_true",
                        help="print torch's version and the BLAS it loaded, then exit")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.show_blas:
        torch.ones(8, 8) @ torch.ones(8, 8)  # make sure the BLAS is loaded
        print(json.dumps({"torch": torch.__version__, "blas": blas_library(),
                          "num_threads": torch.get_num_threads()}))
        return
    data = load(args.data_dir)
    print(json.dumps(run(args, data)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
