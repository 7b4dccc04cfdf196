#!/usr/bin/env bash
# Is this machine quiet enough to quote a figure measured on it? Sourced by the comparison
# scripts (pytorch_compare.sh, cuda_cost.sh), which call `quiet_probe` before and after their
# measurements and print its verdict next to the figures.
#
# The probe runs one busy loop per CPU for 0.5 s of wall time and measures the CPU time each
# got: on an idle machine every loop gets the whole of a core (~100%); another process's work
# shows up at once as a smaller share, which the load average (a 1-minute mean) reports only
# later. Verdict "quiet" when every loop got at least 90% of a core, else "BUSY" with the numbers,
# so a figure measured then is not quoted as an idle machine's; the 1-minute load average is
# printed beside it.
#
#   source benchmarks/quiet_probe.sh; quiet_probe "before"   # prints one line, returns 0 or 1

quiet_probe() {
  local when="${1:-now}"
  /usr/bin/python3 - "$when" <<'PY'
import os
import sys
import time
from multiprocessing import Pool


def burn(_):
    wall0, cpu0 = time.monotonic(), time.process_time()
    while time.monotonic() - wall0 < 0.5:
        pass
    return (time.process_time() - cpu0) / (time.monotonic() - wall0)


cpus = os.cpu_count() or 1
with Pool(cpus) as pool:
    shares = pool.map(burn, range(cpus))
load1 = os.getloadavg()[0]
# The share decides: the load average is a 1-minute mean that still counts the comparison's own
# previous block (0.6-1.5 right after one), so it is printed for the reader but does not decide.
quiet = min(shares) >= 0.9
print(f"machine {sys.argv[1]}: {'quiet' if quiet else 'BUSY'} (probe: "
      f"{' '.join(f'{100 * s:.0f}%' for s in shares)} of a core on each of {cpus} CPUs; "
      f"load average {load1:.2f})"
      + ("" if quiet else "; figures measured now are not an idle machine's"))
sys.exit(0 if quiet else 1)
PY
}
