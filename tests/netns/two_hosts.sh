#!/usr/bin/env bash
# Two "hosts" on this machine, for multi-node tests with real MPI processes:
#   tests/netns/two_hosts.sh openmpi|mpich COMMAND [ARGS...]
# Creates two network namespaces joined by a veth pair (TCP between hosts,
# shared memory inside one), each host with its own hostname (UTS namespace),
# /etc/hosts and boot_id (UCX decides "same machine" by boot_id). COMMAND runs
# on host A with CARACAL_HOSTFILE naming a hostfile of 2 slots per host for the
# chosen MPI, and the environment that makes the launcher start remote daemons
# through this script instead of ssh. Everything is removed on exit.
# Exit 77 with "SKIP: reason" on stderr when namespaces are not permitted.
set -euo pipefail

if [ "${1:-}" = "--in-host" ]; then
    # Internal: run ARGS as host $2 (called by the launcher agent and for host A).
    dir=$2 host=$3; shift 3
    exec ip netns exec "$(cat "$dir/$host.ns")" unshare --uts --mount --propagation private \
        sh -c 'hostname "$1"; mount --bind "$2/$1.boot_id" /proc/sys/kernel/random/boot_id &&
               mount --bind "$2/hosts" /etc/hosts && shift 2 && exec "$@"' sh "$host" "$dir" "$@"
fi

mpi=${1:?usage: two_hosts.sh openmpi|mpich COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || { echo "usage: two_hosts.sh openmpi|mpich COMMAND [ARGS...]" >&2; exit 2; }
case $mpi in openmpi|mpich) ;; *) echo "two_hosts.sh: unknown MPI '$mpi'" >&2; exit 2 ;; esac

skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null && command -v unshare >/dev/null || skip "ip or unshare not installed"

self=$(readlink -f "$0")
tag=cn$$                               # unique per run: concurrent runs do not collide
dir=$(mktemp -d /tmp/caracal-netns.XXXXXX)
nsa=${tag}a nsb=${tag}b
child=
cleanup() {
    # Processes still inside the hosts (a hung or interrupted job) are ours: end them first,
    # or they would keep the namespaces (and their veth pair) alive after the names are gone.
    [ -n "$child" ] && kill "$child" 2>/dev/null
    for ns in "$nsa" "$nsb"; do
        pids=$(ip netns pids "$ns" 2>/dev/null) && [ -n "$pids" ] && kill $pids 2>/dev/null
    done
    sleep 0.5
    for ns in "$nsa" "$nsb"; do
        pids=$(ip netns pids "$ns" 2>/dev/null) && [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done                                       # deleting a namespace removes its veth end too
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

ip netns add "$nsa" 2>/dev/null || skip "cannot create network namespaces here (ip netns add failed)"
ip netns add "$nsb"
unshare --uts --mount true 2>/dev/null || skip "cannot create UTS/mount namespaces here"
ip link add "${tag}va" type veth peer name "${tag}vb"
ip link set "${tag}va" netns "$nsa"
ip link set "${tag}vb" netns "$nsb"
# The same interface name on both hosts, so one setting selects it everywhere.
net=10.231.$(( $$ % 250 ))
for h in a b; do
    ns=${tag}$h
    ip -n "$ns" link set "${tag}v$h" name cveth0
    ip -n "$ns" addr add "$net.$([ $h = a ] && echo 1 || echo 2)/24" dev cveth0
    ip -n "$ns" link set cveth0 up
    ip -n "$ns" link set lo up
    echo "$ns" > "$dir/host$h.ns"
    cat /proc/sys/kernel/random/uuid > "$dir/host$h.boot_id"
done
printf '127.0.0.1 localhost\n%s.1 hosta\n%s.2 hostb\n' "$net" "$net" > "$dir/hosts"

# The launcher's remote shell: "agent [ssh options] HOST COMMAND..." -> COMMAND on HOST.
cat > "$dir/agent" <<AGENT
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1; shift
exec "$self" --in-host "$dir" "\$host" sh -c "\$*"
AGENT
chmod +x "$dir/agent"

if [ "$mpi" = openmpi ]; then
    printf 'hosta slots=2\nhostb slots=2\n' > "$dir/hostfile"
    export OMPI_MCA_plm_rsh_agent="$dir/agent" OMPI_MCA_btl_tcp_if_include=cveth0 \
           OMPI_MCA_oob_tcp_if_include=cveth0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
    printf 'hosta:2\nhostb:2\n' > "$dir/hostfile"
    export HYDRA_LAUNCHER=ssh HYDRA_LAUNCHER_EXEC="$dir/agent" HYDRA_IFACE=cveth0
fi
export UCX_NET_DEVICES=cveth0 CARACAL_HOSTFILE="$dir/hostfile"
# In the background so that a TERM (e.g. a test's timeout) runs the cleanup at once.
"$self" --in-host "$dir" hosta "$@" &
child=$!
set +e
wait "$child"
rc=$?
child=
exit $rc
