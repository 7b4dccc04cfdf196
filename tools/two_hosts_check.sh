#!/usr/bin/env bash
# Two MPI "hosts" on one machine: two Linux network namespaces joined by a veth pair
# (10.77.0.1 and 10.77.0.2), mpirun in the first starting one rank in each through a launch
# agent (tools/netns_agent.sh) instead of ssh, TCP between them (no shared memory: the ranks
# see different networks, so Open MPI treats them as two nodes). Checks:
#   sync  2 ranks x 2 workers across the hosts == 1 process x 4 workers within 2e-6;
#   async 2 ranks x 2 workers across the hosts on 10,000 Fashion-MNIST images: >= 80% test
#         accuracy, both ranks ending with the same parameters.
# Needs root (ip netns); not part of `bazel test //...`, whose sandbox cannot create network
# namespaces. Removes its namespaces on exit.
#
#   bazel build //tests:mpi_train && sudo tools/two_hosts_check.sh bazel-bin/tests/mpi_train
set -euo pipefail
probe=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
a=hwmpi_a_$$
b=hwmpi_b_$$
tmp=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add "veth_$$a" type veth peer name "veth_$$b"
ip link set "veth_$$a" netns "$a"
ip link set "veth_$$b" netns "$b"
ip netns exec "$a" ip addr add 10.77.0.1/24 dev "veth_$$a"
ip netns exec "$b" ip addr add 10.77.0.2/24 dev "veth_$$b"
for ns in "$a" "$b"; do ip netns exec "$ns" ip link set lo up; done
ip netns exec "$a" ip link set "veth_$$a" up
ip netns exec "$b" ip link set "veth_$$b" up

run2() {  # mpirun in namespace a, one rank per "host"
  NETNS_AGENT_MAP="10.77.0.1=$a 10.77.0.2=$b" ip netns exec "$a" timeout 120 \
    mpirun --allow-run-as-root --oversubscribe --host 10.77.0.1,10.77.0.2 -np 2 \
    -x NETNS_AGENT_MAP --mca plm_rsh_agent "$here/netns_agent.sh" --mca btl self,tcp \
    --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 "$@"
}
failures=0

run2 sh -c 'echo "rank $OMPI_COMM_WORLD_RANK on $(ip -o -4 addr show | grep -o "10\.77\.0\.[0-9]")"'
flags=(--mode=sync --workers=2 --epochs=2 --train_examples=1000 --batch_size=16)
run2 "$probe" "${flags[@]}" --params_out="$tmp/two_hosts" | grep -E "^accuracy|^ranks"
"$probe" --mode=sync --workers=4 --epochs=2 --train_examples=1000 --batch_size=16 \
  --params_out="$tmp/one" >/dev/null
"$probe" --compare="$tmp/two_hosts,$tmp/one" --tolerance=2e-6 || failures=$((failures + 1))

run2 "$probe" --mode=async --workers=2 --data=fashion_mnist --train_examples=10000 --hidden=128 \
  --epochs=5 --batch_size=16 --lr=0.03 >"$tmp/async.log" 2>&1 || failures=$((failures + 1))
grep -E "^accuracy|^ranks|^rank" "$tmp/async.log" || cat "$tmp/async.log"
awk '/^accuracy/ { ok = ($2 >= 0.80) } END { exit !ok }' "$tmp/async.log" ||
  { echo "FAIL: async accuracy below 0.80"; failures=$((failures + 1)); }
[[ $(grep -c "params $(sed -n 's/^rank 0 examples [0-9]* params //p' "$tmp/async.log")" \
  "$tmp/async.log") -eq 2 ]] || { echo "FAIL: the ranks' parameters differ"; failures=$((failures + 1)); }

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }
echo "two hosts: all checks passed"
