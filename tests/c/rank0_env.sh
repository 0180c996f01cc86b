#!/bin/sh
# rank0_env.sh VAR RANK0_VALUE OTHERS_VALUE PROGRAM [ARGS...]
# Runs PROGRAM as this MPI rank with VAR set to RANK0_VALUE on world rank 0 and to
# OTHERS_VALUE on every other rank: a setting that differs between ranks, as a file on a
# node-local disk does between hosts. The rank comes from the launcher's environment
# (Open MPI: OMPI_COMM_WORLD_RANK, MPICH/Hydra: PMI_RANK).
var=$1 v0=$2 vn=$3
shift 3
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
if [ -z "$rank" ] || [ $# -eq 0 ]; then
    echo "rank0_env.sh: usage: rank0_env.sh VAR RANK0_VALUE OTHERS_VALUE PROGRAM [ARGS...] under mpiexec" >&2
    exit 2
fi
if [ "$rank" = 0 ]; then export "$var=$v0"; else export "$var=$vn"; fi
exec "$@"
