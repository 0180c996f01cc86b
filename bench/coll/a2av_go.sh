#!/bin/sh
# Interleaved before/after launches of bench/coll/a2av_go.c (4 ranks as 2 nodes, alltoallv
# forced to hier), with the node phases on the segment and point-to-point (CARACAL_SHM=0).
# Usage: a2av_go.sh BEFORE_LIB AFTER_LIB ROUNDS OUT.jsonl   (append: a split run resumes)
set -e
before=$1 after=$2 rounds=$3 out=$4
bin=${TMPDIR:-/tmp}/a2av_go.$$
mpicc -O2 -o "$bin" "$(dirname "$0")/a2av_go.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for round in $(seq 1 "$rounds"); do
  for path in seg p2p; do
    shm=1; [ "$path" = p2p ] && shm=0
    for bytes in 8 1024 65536; do
      iters=400; [ "$bytes" -ge 65536 ] && iters=40
      for which in before after; do
        lib=$before; [ "$which" = after ] && lib=$after
        line=$(mpiexec --oversubscribe -n 4 -x CARACAL_COLL=force -x CARACAL_NODE_SIZE=2 -x CARACAL_ALLTOALLV=hier \
               -x CARACAL_SHM=$shm -x LD_PRELOAD="$lib" "$bin" "$bytes" "$iters" 11 | grep '^{')
        echo "{\"round\": $round, \"path\": \"$path\", \"lib\": \"$which\", \"load\": \"$(cut -d' ' -f1 /proc/loadavg)\", ${line#\{}" >> "$out"
      done
    done
  done
done
rm -f "$bin"
