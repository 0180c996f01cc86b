#!/usr/bin/env bash
# Run a command with a private, small /dev/shm (a tmpfs of SIZE in a new mount namespace),
# as in a default container:   small_devshm.sh SIZE COMMAND [ARGS...]
# Exit 77 with "SKIP: reason" when mount namespaces or tmpfs mounts are refused.
set -euo pipefail
size=${1:?usage: small_devshm.sh SIZE COMMAND [ARGS...]}
shift
[ "$(id -u)" = 0 ] || { echo "SKIP: a private /dev/shm needs root" >&2; exit 77; }
unshare --mount --propagation private true 2>/dev/null || { echo "SKIP: mount namespaces refused" >&2; exit 77; }
# The /dev/shm is the command's alone, so whatever Caracal left there is counted afterwards:
# any caracal-* file remaining fails the run (segments are unlinked once mapped, the budget
# page once every rank has it), as does the command's own failure.
exec unshare --mount --propagation private sh -c \
    'mount -t tmpfs -o size="$1",mode=1777 tmpfs /dev/shm || { echo "SKIP: cannot mount tmpfs" >&2; exit 77; }
     shift; "$@"; rc=$?
     echo "small_devshm.sh: /dev/shm after the run: $(df -k /dev/shm | awk "NR==2 {print \$3}") KiB used"
     left=$(ls /dev/shm | grep "^caracal-")
     if [ -n "$left" ]; then echo "small_devshm.sh: left in /dev/shm: $left"; [ $rc -ne 0 ] || rc=1; fi
     exit $rc' sh "$size" "$@"
