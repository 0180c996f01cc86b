#!/bin/sh
# bind_rank.sh CPUS PRELOAD PROGRAM [ARGS...]
# Runs PROGRAM as this MPI rank bound to one CPU: the rank's entry of CPUS (comma-separated,
# one per rank; '-' leaves that rank unbound). The rank comes from the launcher's
# environment (Open MPI: OMPI_COMM_WORLD_RANK, MPICH/Hydra: PMI_RANK). PRELOAD ('-' for
# none) goes into PROGRAM's LD_PRELOAD only, not into this shell or taskset.
cpus=$1 preload=$2
shift 2
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
if [ -z "$rank" ] || [ $# -eq 0 ]; then
    echo "bind_rank.sh: usage: bind_rank.sh CPUS PRELOAD PROGRAM [ARGS...] under mpiexec" >&2
    exit 2
fi
cpu=$(echo "$cpus" | cut -d, -f$((rank + 1)))
if [ -z "$cpu" ]; then
    echo "bind_rank.sh: no CPU for rank $rank in '$cpus'" >&2
    exit 2
fi
if [ "$preload" != "-" ]; then
    set -- env LD_PRELOAD="$preload" "$@"
fi
if [ "$cpu" = "-" ]; then
    exec "$@"
fi
exec taskset -c "$cpu" "$@"
