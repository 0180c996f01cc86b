#!/bin/sh
# The defaults check of one library, as issue 15 item 4 asks it: 2 ranks, back to back, a
# native barrier before every call, and a rotating root for the rooted families; 3 rounds x 7
# repetitions; the sizes of the session-15 runs (91 cells). Writes bench/results/defaults-check-
# LIB-TAG.md and .json every 5 launches; stops starting launches after MINUTES (default 9, so a
# hold of the bench lock stays under 10 minutes) and continues where it stopped when run again.
#
#   flock /work/bench.lock bench/coll/defaults_check_lib.sh LIB [TAG] [MINUTES] [extra defaults_check options]
#   (LIB: openmpi, openmpi5, mpich, mpich5, impi; TAG default s16)
set -e
lib=${1:?usage: defaults_check_lib.sh LIB [TAG] [MINUTES] [options]}
tag=${2:-s16}
minutes=${3:-9}
[ $# -ge 3 ] && shift 3 || shift $#
here=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
name=defaults-check-$lib-$tag
resume=
[ -f "/tmp/caracal-defaults-check/$name.json" ] && resume=--resume
echo "$name: start $(date -u +%T), $(uptime)"
PYTHONPATH="$here/python" "$py" "$here/bench/coll/defaults_check.py" --libs "$lib" --ranks 2 --rounds 3 --reps 7 \
    --sizes 8,512,2K,4K,32K,1M --patterns b2b,rotate,barrier --out "$name" --max-minutes "$minutes" $resume "$@"
echo "$name: end $(date -u +%T), $(uptime)"
