#!/bin/sh
# expect_log_line.sh MODE NP LINE COMMAND [ARGS...]
# Runs COMMAND (an mpiexec line with CARACAL_LOG_RANKS=all), prints its output, and passes
# only if it exits 0 and every rank 0..NP-1 printed "caracal[rank]: LINE".
#   MODE each: at least once per rank (other lines of the topic may appear too)
#   MODE only: and every line of LINE's topic (its first word) is exactly LINE, i.e. all
#              ranks took the same decision
mode=$1 np=$2 line=$3
shift 3
# stdout and stderr are captured apart and joined after: a launcher that forwards both into one
# pipe may splice a line of one into a line of the other (Intel MPI's hydra did in CI)
err=$(mktemp) || exit 1
out=$("$@" 2>"$err")
rc=$?
out=$(printf '%s\n' "$out"; cat "$err")
rm -f "$err"
echo "$out"
if [ $rc -ne 0 ]; then
    echo "expect_log_line.sh: command failed with exit status $rc"
    exit 1
fi
r=0
while [ $r -lt "$np" ]; do
    if ! printf '%s\n' "$out" | grep -qxF "caracal[$r]: $line"; then
        echo "expect_log_line.sh: rank $r did not print: $line"
        exit 1
    fi
    r=$((r + 1))
done
if [ "$mode" = only ]; then
    topic=${line%% *}
    other=$(printf '%s\n' "$out" | grep "^caracal\[[0-9]*\]: $topic " | sed 's/^caracal\[[0-9]*\]: //' | grep -vxF "$line")
    if [ -n "$other" ]; then
        echo "expect_log_line.sh: other '$topic' lines: $other"
        exit 1
    fi
fi
echo "expect_log_line.sh: every rank printed: $line"
