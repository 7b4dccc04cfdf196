# Sourced by the multi-process tests (tests/mpi_*_test.sh).
#
# mpi_run <ranks> <command...>: runs the command as <ranks> MPI processes on this machine with
# the TCP transport over loopback (--mca btl self,tcp: the bytes cross a real network stack, not
# shared memory), as root where the test runs as root, more ranks than cores allowed; a 120 s
# limit turns a hang into a failure (exit code 124).
mpi_run() {
  local ranks="$1"
  shift
  timeout 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp \
    --mca btl_tcp_if_include lo -np "$ranks" "$@"
}

# check <label> <condition...>: counts a failure (in $failures) when the condition is false.
check() {
  local label="$1"
  shift
  if "$@"; then
    echo "ok:   $label"
  else
    echo "FAIL: $label"
    failures=$((failures + 1))
  fi
}

# Open MPI refuses to start ranks as root without these; a sandbox may lack a usable HOME.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export HOME="${TEST_TMPDIR:-${HOME:-/tmp}}"
# Open MPI keeps its session directory under TMPDIR, named after mpirun's pid: Bazel runs tests
# in parallel, each in its own pid namespace, so two mpiruns can have the same pid and would
# share (and break) one session directory under a shared /tmp.
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
failures=0
