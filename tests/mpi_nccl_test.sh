#!/bin/bash
# Sync on GPU workers across processes (sync/nccl_tower_average.h with a ProcessGroup: NCCL
# communicator from rank 0's unique id, broadcast over MPI), under mpirun on one host:
# - 2 ranks x 1 GPU (`--devices gpu:0`: rank l of the host takes GPU l, trainer/rank_gpus.h)
#   give the parameters of 1 process x 2 GPUs, and of 1 GPU x 2 workers, at the same global
#   batch within float rounding (so the ranks read distinct shards and every replica got the
#   job's sum);
# - two runs with the same layout and seed give bitwise the same parameters;
# - a job stopped mid-epoch by rank 1 alone and resumed from its checkpoint (parameters read
#   back from the GPU, restored into every replica) ends bitwise where the uninterrupted job
#   does, with momentum;
# - async GPU workers across processes are refused, one error line.
# Needs two CUDA devices; otherwise prints "SKIP: <reason>" and passes (as the gpu-tagged
# GoogleTest cases skip). Written and compiled, NOT YET RUN ON A GPU.
#
# Usage (from tests/BUILD): mpi_nccl_test.sh <path of //tests:mpi_train_gpu>
set -u
probe="$1"
source "$(dirname "$0")/mpi_common.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

if ! gpus="$("$probe" --gpu_count 2>&1)"; then
  echo "SKIP: no CUDA device: $gpus"
  exit 0
fi
if [[ "$gpus" -lt 2 ]]; then
  echo "SKIP: 2 ranks x 1 GPU need 2 CUDA devices (NCCL refuses two ranks on one GPU); this" \
    "machine has $gpus"
  exit 0
fi
# One NCCL algorithm for every run, so the bitwise comparisons do not depend on its choice.
export NCCL_ALGO=Ring NCCL_PROTO=Simple
common=(--mode=sync --epochs=2 --train_examples=1000 --batch_size=16 --momentum=0.9)

mpi_run 2 "$probe" "${common[@]}" --devices=gpu:0 --params_out="$tmp/a" >"$tmp/a.log" 2>&1
check "2 ranks x 1 GPU, run 1" test $? -eq 0
mpi_run 2 "$probe" "${common[@]}" --devices=gpu:0 --params_out="$tmp/b" >"$tmp/b.log" 2>&1
check "2 ranks x 1 GPU, run 2" test $? -eq 0
check "two runs bitwise equal" cmp -s "$tmp/a" "$tmp/b"
check "both ranks end with the same parameters" \
  test "$(grep -o 'params [0-9a-f]*' "$tmp/a.log" | sort -u | wc -l)" -eq 1

"$probe" "${common[@]}" --devices=gpu:0,1 --params_out="$tmp/two_gpus" >"$tmp/two_gpus.log" 2>&1
check "1 process x 2 GPUs" test $? -eq 0
"$probe" --compare="$tmp/a,$tmp/two_gpus" --tolerance=1e-5
check "2 ranks x 1 GPU == 1 process x 2 GPUs within 1e-5" test $? -eq 0

"$probe" "${common[@]}" --devices=gpu:0 --workers=2 --params_out="$tmp/one_gpu" \
  >"$tmp/one_gpu.log" 2>&1
check "1 GPU x 2 workers" test $? -eq 0
"$probe" --compare="$tmp/a,$tmp/one_gpu" --tolerance=1e-5
check "2 ranks x 1 GPU == 1 GPU x 2 workers within 1e-5" test $? -eq 0

# Stopped mid-epoch (rank 1 asks before its step 77 of 63 per epoch) and resumed.
mpi_run 2 "$probe" "${common[@]}" --epochs=2 --devices=gpu:0 --checkpoint_dir="$tmp/ckpt" \
  --stop_rank=1 --stop_step=77 >"$tmp/stop.log" 2>&1
check "stopped job" test $? -eq 0
check "rank 0 wrote the checkpoint" test -s "$tmp/ckpt/checkpoint.hwckpt"
mpi_run 2 "$probe" "${common[@]}" --devices=gpu:0 --checkpoint_dir="$tmp/ckpt" --resume \
  --params_out="$tmp/resumed" >"$tmp/resume.log" 2>&1
check "resumed job" test $? -eq 0
check "stopped + resumed == uninterrupted, bitwise" cmp -s "$tmp/a" "$tmp/resumed"

mpi_run 2 "$probe" --mode=async --devices=gpu:0 --train_examples=1000 >"$tmp/async.out" \
  2>"$tmp/async.err"
check "async GPU workers across processes: refused" test $? -ne 0
check "async GPU workers across processes: one error line naming sync" \
  test "$(grep -c '^error:.*async GPU workers do not run across processes yet' \
    "$tmp/async.err")" -eq 1

if [[ $failures -ne 0 ]]; then
  tail -n 20 "$tmp"/*.log
  echo "$failures failure(s)"
  exit 1
fi
echo "all NCCL multi-process cases passed"
