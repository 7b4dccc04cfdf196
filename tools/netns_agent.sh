#!/bin/sh
# Open MPI's launch agent (--mca plm_rsh_agent) for tools/two_hosts_check.sh: instead of ssh to
# <host>, runs the daemon's command in the network namespace that NETNS_AGENT_MAP
# ("ip=namespace ...") gives for that host.
host="$1"
shift
for pair in $NETNS_AGENT_MAP; do
  if [ "${pair%%=*}" = "$host" ]; then
    exec ip netns exec "${pair#*=}" sh -c "$*"
  fi
done
echo "netns_agent: no namespace for host $host in NETNS_AGENT_MAP" >&2
exit 1
