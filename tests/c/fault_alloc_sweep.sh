#!/bin/bash
# Fail libcaracal's Nth allocation (tests/c/fault_alloc.c, preloaded ahead of libcaracal) on
# rank 0 of a short stress run (every family, blocking, nonblocking, persistent), for each N
# in the list; each run must either finish with 0 mismatches (the allocation was one Caracal
# can do without) or end through MPI's error path with "out of memory" (core/xalloc.c), and
# within LIMIT seconds: never a signal (segfault, abort), a hang or a wrong result.
#   fault_alloc_sweep.sh LIMIT "N1 N2 ..." MPIEXEC [ARGS...]
# (LD_PRELOAD with the fault library among ARGS; FAULT_ALLOC reaches the ranks through the
# launcher's environment, which both launchers pass on to ranks on this host)
limit=$1 list=$2
shift 2
bad=0 ok=0 oom=0
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
for n in $list; do
  # stdout and stderr apart, joined after (a launcher may splice a line of one into the other's)
  out=$(FAULT_ALLOC=$n timeout -k 5 "$limit" "$@" 2>"$err")
  rc=$?
  out=$(printf '%s\n' "$out"; cat "$err")
  # A crash is a signal that only a fault raises: SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV
  # (numbers 4, 6, 7, 8, 11 on Linux), as either launcher words it ("signal 11", "Segmentation
  # fault"), or a wrong result. When rank 0 aborts, the launcher tears the other rank down
  # with SIGKILL, SIGTERM or SIGHUP and may report that rank's signal and exit code instead of
  # the abort's 34 (Hydra: "Killed (signal 9)", "Hangup (signal 1)", exit 1 or 9: a race in
  # which rank it reports first); that is cleanup, not a crash. MPICH's "Abort(34)" is the
  # error path itself.
  crash=$(echo "$out" | grep -iE "signal (4|6|7|8|11)([^0-9]|$)|segmentation|bus error|floating point exception|illegal instruction|MISMATCH")
  # A peer's transport may abort when the aborting rank vanishes under a transfer: MPICH's
  # UCX reading rank 0's memory by CMA ("process_vm_readv(pid=...) returned -1: No such
  # process", then SIGABRT in ucs_fatal_error_message). With the error path shown, and
  # no wrong result, that is cleanup too (CI at 7ce95e8, allocation 300, 1 run in 8 here).
  if [ -n "$crash" ] && echo "$out" | grep -qE "out of memory|Unable to allocate memory" &&
     echo "$out" | grep -qE "process_vm_readv.*No such process" && ! echo "$out" | grep -q MISMATCH; then
    crash=""
  fi
  if echo "$out" | grep -q "stress seed .* 0 mismatches" && [ $rc = 0 ]; then
    ok=$((ok + 1)); what="finished, 0 mismatches"
  # MPI_ERR_NO_MEM through the error handler: Caracal's line (core/xalloc.c), or only the
  # library's words for the class where Caracal found the NULL itself (a request record:
  # Open MPI "out of memory", MPICH "Unable to allocate memory")
  elif echo "$out" | grep -qE "out of memory|Unable to allocate memory" && [ -z "$crash" ] && [ $rc != 124 ] && [ $rc != 0 ]; then
    oom=$((oom + 1)); what="ended with MPI_ERR_NO_MEM (exit $rc)"
  else
    bad=$((bad + 1)); what="FAILED (exit $rc)"
    echo "$out" | grep -vE "^caracal\[[0-9]+\]: [a-z_]+ " | tail -15
  fi
  echo "allocation $n: $what"
done
echo "$ok finished, $oom ended with MPI_ERR_NO_MEM, $bad failed"
[ $bad = 0 ]
