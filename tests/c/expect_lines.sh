#!/bin/sh
# expect_lines.sh COUNT TEXT COMMAND [ARGS...]
# Runs COMMAND (an mpiexec line), prints its output, and passes only if it exits 0 and exactly
# COUNT lines of its output (stdout and stderr, every rank) contain TEXT: e.g. a warning that
# must be printed once per job, not once per rank or node.
count=$1 text=$2
shift 2
# stdout and stderr are captured apart and joined after: a launcher that forwards both into one
# pipe may splice a line of one into a line of the other (Intel MPI's hydra did in CI)
err=$(mktemp) || exit 1
out=$("$@" 2>"$err")
rc=$?
out=$(printf '%s\n' "$out"; cat "$err")
rm -f "$err"
echo "$out"
if [ $rc -ne 0 ]; then
    echo "expect_lines.sh: command failed with exit status $rc"
    exit 1
fi
got=$(printf '%s\n' "$out" | grep -cF -- "$text")
if [ "$got" != "$count" ]; then
    echo "expect_lines.sh: $got lines contain '$text', expected $count"
    exit 1
fi
echo "expect_lines.sh: $count lines contain '$text'"
