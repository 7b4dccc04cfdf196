#!/usr/bin/env bash
# Ours against PyTorch on W1 (MLP 784-256-256-10, SGD lr 0.05, batch 64, Fashion-MNIST), back
# to back on the same machine, repeated; prints medians and the ratios of the same run.
#
#   bazel build //benchmarks:sync_vs_async //trainer:train
#   benchmarks/pytorch_compare.sh [--reps=5] [--epochs=1] [--tta_reps=3] [--tta_epochs=4]
#   (or: bazel run //benchmarks:pytorch_compare -- --reps=5)
#
# Needs tools/setup.sh --bench (python3-torch, libopenblas0-serial). PyTorch gets the same
# OpenBLAS as ours, in its single-threaded build: Debian's torch calls whatever libblas.so.3 the
# dynamic linker finds, so LD_LIBRARY_PATH points it at openblas-serial without touching the
# system's alternatives; the loaded library is printed from /proc/self/maps.
#
# Comparisons (each rep runs all of them, ours first):
#   1 worker           ours async:1           vs  torch single (1 thread)
#   2 async workers    ours async:2           vs  torch Hogwild, 2 processes
#   2 sync workers     ours sync:2, global 64 vs  torch DDP gloo, 2 processes, global 64
#   time to 85%        ours async:2 with eval every 0.25 epoch  vs  torch Hogwild 2, same
# then the peak memory of the default training run (//trainer:train) from /usr/bin/time.
set -euo pipefail

reps=5; epochs=1; tta_reps=3; tta_epochs=4; workers=2; target=0.85
for arg in "$@"; do
  case "$arg" in
    --reps=*) reps="${arg#*=}" ;;
    --epochs=*) epochs="${arg#*=}" ;;
    --tta_reps=*) tta_reps="${arg#*=}" ;;
    --tta_epochs=*) tta_epochs="${arg#*=}" ;;
    --workers=*) workers="${arg#*=}" ;;
    *) echo "unknown argument $arg; see the header of $0" >&2; exit 2 ;;
  esac
done

# Binaries: in the runfiles under `bazel run`, else bazel-bin of the workspace.
here="$(cd "$(dirname "$0")" && pwd)"
find_bin() {
  for c in "$1" "${BUILD_WORKSPACE_DIRECTORY:-.}/bazel-bin/$1" "$here/../bazel-bin/$1"; do
    [[ -x "$c" ]] && { echo "$c"; return; }
  done
  echo "cannot find $1: bazel build //benchmarks:sync_vs_async //trainer:train" >&2
  exit 1
}
ours="$(find_bin benchmarks/sync_vs_async)"
train="$(find_bin trainer/cli/train)"
py="$here/pytorch_compare.py"
[[ -f "$py" ]] || py="benchmarks/pytorch_compare.py"
python=/usr/bin/python3
work="$(mktemp -d /tmp/hogwild_compare.XXXXXX)"

torch_env=(env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-serial
           OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1)
torch() { "${torch_env[@]}" "$python" "$py" "$@"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck source=benchmarks/quiet_probe.sh
source "$here/quiet_probe.sh" 2>/dev/null || source benchmarks/quiet_probe.sh
quiet_probe "before" || true
echo "pytorch: $(torch --mode single --show_blas)"
echo "ours: $ours (OpenBLAS: $(ldd "$ours" | grep -o '/[^ ]*openblas[^ ]*' | head -1))"

results="$work/results.jsonl"
: > "$results"
ours_runs() {  # $1: runs, $2: epochs, $3: eval_every_epochs, $4: rep
  # --sync_batch_size=64: DDP's global batch (the study's default would be W x 64).
  "$ours" --runs="$1" --epochs="$2" --eval_every_epochs="$3" --plot=false --sync_batch_size=64 \
          --target_accuracy="$target" --out_dir="$work/ours_$4" > "$work/ours_$4.txt"
  tail -n +2 "$work/ours_$4/summary.csv" | while IFS=, read -r mode w _ _ eps wall tta _ acc _; do
    printf '{"impl":"ours","mode":"%s","workers":%s,"examples_per_s":%s,"wall_time_s":%s,"time_to_target_s":%s,"rep":"%s"}\n' \
      "$mode" "$w" "$eps" "$wall" "${tta:-null}" "$4"
  done >> "$results"
}
tag() { sed "s/}\$/,\"rep\":\"$1\"}/" >> "$results"; }

for ((r = 1; r <= reps; r++)); do
  echo "rep $r/$reps: ours (async:1, async:$workers, sync:$workers), then PyTorch single, Hogwild, DDP"
  ours_runs "async:1,async:$workers,sync:$workers" "$epochs" 0 "t$r"
  torch --mode single --epochs "$epochs" | tag "t$r"
  torch --mode hogwild --workers "$workers" --epochs "$epochs" | tag "t$r"
  torch --mode ddp --workers "$workers" --epochs "$epochs" | tag "t$r"
done
for ((r = 1; r <= tta_reps; r++)); do
  echo "time to $target rep $r/$tta_reps: ours async:$workers, then PyTorch Hogwild $workers"
  ours_runs "async:$workers" "$tta_epochs" 0.25 "a$r"
  torch --mode hogwild --workers "$workers" --epochs "$tta_epochs" --eval_every 0.25 \
        --target "$target" | tag "a$r"
done

echo "peak memory of the default training run (//trainer:train --epochs=1; epochs do not change it):"
/usr/bin/time -f "%M" -o "$work/maxrss" "$train" --epochs=1 > "$work/train.txt" 2>&1
echo "{\"impl\":\"ours\",\"mode\":\"memory\",\"rep\":\"m\",\"max_rss_kib\":$(cat "$work/maxrss")}" >> "$results"

"$python" - "$results" "$workers" "$target" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
w, target = int(sys.argv[2]), float(sys.argv[3])
def pick(impl, mode, workers, rep):
    for r in rows:
        if r["impl"] == impl and r["mode"] == mode and r.get("workers") == workers and r["rep"] == rep:
            return r
reps = sorted({r["rep"] for r in rows if r["rep"].startswith("t")})
pairs = [("1 worker", ("ours", "async", 1), ("pytorch", "single", 1), 1.3),
         (f"{w} async workers", ("ours", "async", w), ("pytorch", "hogwild", w), 1.3),
         (f"{w} sync workers, global batch 64", ("ours", "sync", w), ("pytorch", "ddp", w), 3.0)]
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"\n## W1 throughput, medians of {len(reps)} reps (examples/s)\n")
print("| comparison | ours | PyTorch | ratio (median of per-rep ratios) | target |")
print("|---|---:|---:|---:|---:|")
ours_rate = {}
for name, a, b, goal in pairs:
    xa = [pick(*a, r)["examples_per_s"] for r in reps]
    xb = [pick(*b, r)["examples_per_s"] for r in reps]
    ratio = med([p / q for p, q in zip(xa, xb)])
    ours_rate[a[1], a[2]] = xa
    print(f"| {name} | {med(xa):,.0f} | {med(xb):,.0f} | {ratio:.2f}x | >= {goal}x |")
a1, aw, sw = ours_rate["async", 1], ours_rate["async", w], ours_rate["sync", w]
print(f"\nours, {w} async workers / 1 worker: {med([p / q for p, q in zip(aw, a1)]):.2f}x (target >= 1.8x)")
print(f"ours, {w} sync workers / {w} async workers: {med([p / q for p, q in zip(sw, aw)]):.0%} (target >= 85%)")
arep = sorted({r["rep"] for r in rows if r["rep"].startswith("a")})
to = [pick("ours", "async", w, r)["time_to_target_s"] for r in arep]
tt = [pick("pytorch", "hogwild", w, r)["time_to_target_s"] for r in arep]
fmt = lambda xs: ", ".join("not reached" if x is None else f"{x:.2f}" for x in xs)
print(f"\ntime to {target:.0%} test accuracy, {w} Hogwild workers (s, per rep): ours {fmt(to)}; PyTorch {fmt(tt)}")
ok = [x for x in to if x is not None]; okt = [x for x in tt if x is not None]
if ok and okt:
    print(f"medians: ours {med(ok):.2f} s, PyTorch {med(okt):.2f} s (ratio {med(okt) / med(ok):.2f}x in our favour)")
mem = [r for r in rows if r["mode"] == "memory"][0]["max_rss_kib"] / 1024
data_mib = (70000 * 784 * 4 + 70000 * 4) / 2**20
params_mib = 269322 * 4 / 2**20
print(f"\npeak memory of the default run: {mem:.1f} MiB; bound 2 x {data_mib:.1f} MiB (dataset in memory) "
      f"+ {params_mib:.1f} MiB (parameters) = {2 * data_mib + params_mib:.1f} MiB: "
      f"{'within' if mem < 2 * data_mib + params_mib else 'OVER'}")
PY
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); raw results: $results"
quiet_probe "after" || true
