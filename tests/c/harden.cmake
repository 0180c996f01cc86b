# Hardening (issue 14 items 5-7): faults, allocation failures, a full /dev/shm.
# Included from tests/c/CMakeLists.txt.

# caracal_fault_test(NAME <name> LIMIT <s> EXPECT fail|ok NP <n> [WRAP <cmd...>] COMMAND <prog> [args]
#                    [ENV VAR=VALUE ...] [PRELOAD <libs before libcaracal>])
# tests/c/fault_run.sh runs the job bounded by LIMIT and checks how it ended and that no
# segment of it is left in /dev/shm; libcaracal is always preloaded.
function(caracal_fault_test)
  cmake_parse_arguments(T "" "NAME;LIMIT;EXPECT;NP;PRELOAD" "COMMAND;ENV;WRAP" ${ARGN})
  set(preload ${CARACAL_PRELOAD_PREFIX})
  if(T_PRELOAD)
    set(preload "${preload}${T_PRELOAD}:")
  endif()
  caracal_launcher_env(envargs "${preload}$<TARGET_FILE:caracal>" ${T_ENV})
  add_test(NAME ${T_NAME}
           COMMAND ${T_WRAP} ${PROJECT_SOURCE_DIR}/tests/c/fault_run.sh ${T_LIMIT} ${T_EXPECT}
                   ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n ${T_NP} ${envargs} ${T_COMMAND})
  math(EXPR _timeout "${T_LIMIT} + 60")
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${_timeout} SKIP_RETURN_CODE 77
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()

# A rank aborting (MPI_Abort) while the others wait in each family (tests/c/test_fault_abort.c):
# forced through Caracal (the node segment for the first four families, each family's default
# algorithm for the others), the job ends by itself within 60 s, no segment of it is left. Then
# a rank killed (SIGKILL) in a steps-program family, and an abort in a shm allreduce under each
# wait strategy (spin, futex asleep at once, nap). The first call's results are checked from first
# principles; a run without a fault (none) must exit 0.
add_executable(test_fault_abort test_fault_abort.c)
set(_fault_families barrier bcast reduce allreduce allgather allgatherv gather gatherv scatter scatterv
    alltoall alltoallv reduce_scatter reduce_scatter_block scan exscan)
set(_fault_rules CARACAL_COLL=force CARACAL_BARRIER=shm CARACAL_BCAST=shm CARACAL_REDUCE=shm CARACAL_ALLREDUCE=shm)
foreach(f IN LISTS _fault_families)
  caracal_fault_test(NAME fault_abort_${f}_np3 LIMIT 60 EXPECT fail NP 3
                     COMMAND $<TARGET_FILE:test_fault_abort> ${f} abort ENV ${_fault_rules})
endforeach()
foreach(f bcast alltoallv)
  caracal_fault_test(NAME fault_none_${f}_np3 LIMIT 60 EXPECT ok NP 3
                     COMMAND $<TARGET_FILE:test_fault_abort> ${f} none ENV ${_fault_rules})
endforeach()
caracal_fault_test(NAME fault_kill_alltoallv_np3 LIMIT 60 EXPECT fail NP 3
                   COMMAND $<TARGET_FILE:test_fault_abort> alltoallv kill ENV ${_fault_rules})
foreach(w spin futex nap)
  caracal_fault_test(NAME fault_abort_allreduce_wait_${w}_np3 LIMIT 60 EXPECT fail NP 3
                     COMMAND $<TARGET_FILE:test_fault_abort> allreduce abort
                     ENV ${_fault_rules} CARACAL_WAIT=${w} CARACAL_SPIN_US=0 CARACAL_WAIT_POKE_US=0)
endforeach()

# Allocation failures (core/xalloc.h): tests/c/fault_alloc.c, preloaded ahead of libcaracal,
# fails libcaracal's Nth allocation on rank 0 of a short stress run (every family; blocking,
# nonblocking, persistent; about 800 allocations in all); each run must finish with 0
# mismatches or end through MPI's error path (MPI_ERR_NO_MEM), within 60 s: no signal, no
# hang, no wrong result (tests/c/fault_alloc_sweep.sh). Not under the sanitizers (they own malloc).
if(NOT CARACAL_SANITIZE)
  add_library(caracal_fault_alloc MODULE fault_alloc.c)
  target_link_libraries(caracal_fault_alloc PRIVATE dl)
  caracal_launcher_env(_fa_env "$<TARGET_FILE:caracal_fault_alloc>:$<TARGET_FILE:caracal>" CARACAL_COLL=force CARACAL_NODE_SIZE=1)
  add_test(NAME fault_alloc_sweep_np2
           COMMAND ${PROJECT_SOURCE_DIR}/tests/c/fault_alloc_sweep.sh 60 "1 2 3 4 5 6 8 11 16 23 40 80 150 300 500 700 900"
                   ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n 2 ${_fa_env} $<TARGET_FILE:caracal-stress> 7 60)
  set_tests_properties(fault_alloc_sweep_np2 PROPERTIES TIMEOUT 1500
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  # The same with the node segment (one node: the shm paths of every family, about 400
  # allocations in all), at 10 points.
  caracal_launcher_env(_fa_shm_env "$<TARGET_FILE:caracal_fault_alloc>:$<TARGET_FILE:caracal>" CARACAL_COLL=force)
  add_test(NAME fault_alloc_sweep_shm_np2
           COMMAND ${PROJECT_SOURCE_DIR}/tests/c/fault_alloc_sweep.sh 60 "3 45 100 160 190 220 280 310 340 390"
                   ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n 2 ${_fa_shm_env} $<TARGET_FILE:caracal-stress> 7 60)
  set_tests_properties(fault_alloc_sweep_shm_np2 PROPERTIES TIMEOUT 900
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  # With MPI_ERRORS_RETURN a collective whose schedule cannot be allocated returns
  # MPI_ERR_NO_MEM and the program goes on (tests/c/test_fault_nomem.c: every rank fails the
  # same call through fault_alloc_arm; each family's next call must give the exact result).
  add_executable(test_fault_nomem test_fault_nomem.c)
  target_link_libraries(test_fault_nomem PRIVATE dl)
  foreach(np 2 3)
    caracal_mpi_test(NAME fault_nomem_returns_np${np} NP ${np} COMMAND $<TARGET_FILE:test_fault_nomem>
                     ENV CARACAL_COLL=force CARACAL_NODE_SIZE=1 CARACAL_ALLREDUCE=recdbl CARACAL_BCAST=knomial CARACAL_REDUCE=knomial
                         "LD_PRELOAD=$<TARGET_FILE:caracal_fault_alloc>:$<TARGET_FILE:caracal>")
  endforeach()
  # Alltoallv "hier": a leader's buffer taken while the call runs (sized by its member's
  # counts) fails on one leader, the other, and both; blocking, nonblocking and persistent:
  # every rank returns MPI_ERR_NO_MEM, the next call is exact (`a2av`). With the node phases
  # on the segment (default) and point-to-point (CARACAL_SHM=0).
  foreach(_shm seg p2p)
    set(_a2av_env CARACAL_COLL=force CARACAL_NODE_SIZE=2 CARACAL_ALLTOALLV=hier)
    if(_shm STREQUAL "p2p")
      list(APPEND _a2av_env CARACAL_SHM=0)
    endif()
    caracal_mpi_test(NAME fault_nomem_a2av_${_shm}_np4 NP 4 COMMAND $<TARGET_FILE:test_fault_nomem> a2av 0 1 2 3
                     ENV ${_a2av_env} "LD_PRELOAD=$<TARGET_FILE:caracal_fault_alloc>:$<TARGET_FILE:caracal>")
  endforeach()
  # The shm block families (one node, forced onto the segment) with a derived datatype, whose
  # packing takes private memory: every allocation of a call failing in turn on every rank
  # returns MPI_ERR_NO_MEM, then the next call is exact (`shm`).
  foreach(np 2 3)
    caracal_mpi_test(NAME fault_nomem_shm_np${np} NP ${np} COMMAND $<TARGET_FILE:test_fault_nomem> shm
                     ENV CARACAL_COLL=force CARACAL_ALLGATHER=shm CARACAL_ALLTOALL=shm CARACAL_ALLTOALLV=shm CARACAL_GATHER=shm
                         CARACAL_SCATTER=shm CARACAL_REDUCE_SCATTER_BLOCK=shm
                         "LD_PRELOAD=$<TARGET_FILE:caracal_fault_alloc>:$<TARGET_FILE:caracal>")
  endforeach()
  # A failed alltoallv hier (both leaders' buffers fail) is reported by each of the eight
  # completion calls, nonblocking and persistent, statuses asked for and ignored: the return
  # code and MPI_ERROR as MPI specifies, the communicator's handler once, MPI_COMM_WORLD and
  # MPI_COMM_SELF left fatal; the next call exact (tests/c/test_fault_report.c).
  add_executable(test_fault_report test_fault_report.c)
  target_link_libraries(test_fault_report PRIVATE dl)
  caracal_mpi_test(NAME fault_report_np4 NP 4 COMMAND $<TARGET_FILE:test_fault_report>
                   ENV CARACAL_COLL=force CARACAL_NODE_SIZE=2 CARACAL_ALLTOALLV=hier
                       "LD_PRELOAD=$<TARGET_FILE:caracal_fault_alloc>:$<TARGET_FILE:caracal>")
endif()

# The stress driver replays a seed exactly: two runs of one seed print the same sequence of
# calls (STRESS_TRACE=1: family, type, operator, count, root, communicator size, in place,
# blocking/nonblocking/persistent and start number of each) and the same result line. The
# trace goes to stderr and the result line to stdout, each into its own file: a launcher that
# forwards both streams into one pipe may splice a trace line into the result line (Intel MPI's
# hydra did, once in CI), so the streams are never merged.
caracal_launcher_env(_replay_env "${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>" STRESS_TRACE=1 CARACAL_COLL=force
                     CARACAL_NODE_SIZE=2 CARACAL_BCAST=knomial:3)
string(REPLACE ";" " " _replay_env "${_replay_env}")
string(REPLACE ";" " " _replay_flags "${CARACAL_MPIEXEC_FLAGS}")
add_test(NAME stress_replay_np3
         COMMAND sh -c "d=$(mktemp -d) || exit 1; trap 'rm -rf \"$d\"' EXIT; \
run() { ${CARACAL_MPIEXEC} ${_replay_flags} -n 3 ${_replay_env} $<TARGET_FILE:caracal-stress> 1042 300 >\"$d/$1.out\" 2>\"$d/$1.err\"; }; \
run a && run b || { tail -n 3 \"$d\"/*; exit 1; }; ta=$(grep '^stress: call' \"$d/a.err\"); tb=$(grep '^stress: call' \"$d/b.err\"); \
ra=$(grep '^stress seed' \"$d/a.out\"); rb=$(grep '^stress seed' \"$d/b.out\"); echo \"$ra\"; \
n=$(echo \"$ta\" | grep -c .); echo \"$n calls traced\"; \
test $n -gt 300 && test \"$ta\" = \"$tb\" && test \"$ra\" = \"$rb\" && echo \"$ra\" | grep -q ', 0 mismatches' || { tail -n 3 \"$d\"/*; exit 1; }")
set_tests_properties(stress_replay_np3 PROPERTIES TIMEOUT 300
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# /dev/shm full (tests/c/small_devshm.sh: a private tmpfs; skipped where mount namespaces are
# refused). At setup: a 16 MiB /dev/shm filled to the last byte before the launch: the
# differential suite (tests/c/test_coll.c, shm forced on every family that has it) must give
# the library's results with no segment to be had. Mid-run: tests/c/test_devshm_fill.c fills
# it after the world's segment exists, then large calls, a new duplicate and a split. Open
# MPI's own shared-memory transport (btl/vader) maps its file in /dev/shm without reserving
# its pages and dies of SIGBUS when /dev/shm fills (docs/native-bugs.md; Intel MPI's too): its
# files go to /tmp here (CARACAL_MPI_SHM_ELSEWHERE_ENV, python/caracal/mpilibs.py), so that
# the test is about Caracal.
add_executable(test_devshm_fill test_devshm_fill.c)
set(_devshm_rules "CARACAL_COLL=force;CARACAL_BARRIER=node/shm,hier;CARACAL_BCAST=node/shm,knomial;CARACAL_REDUCE=node/shm,knomial;CARACAL_ALLREDUCE=node/shm,recdbl")
caracal_launcher_env(_devshm_pre "${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>")
string(REPLACE ";" " " _devshm_pre_s "${_devshm_pre}")
string(REPLACE ";" " " _devshm_flags "${CARACAL_MPIEXEC_FLAGS}")
# MPICH 4.0.2 itself dies of SIGBUS in MPI_Init when /dev/shm is full (its own segment,
# before Caracal runs; docs/native-bugs.md): the setup case runs on Open MPI only.
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
add_test(NAME devshm_full_at_setup_np3
         COMMAND ${PROJECT_SOURCE_DIR}/tests/c/small_devshm.sh 16m sh -c
                 "dd if=/dev/zero of=/dev/shm/filler bs=64k 2>/dev/null; dd if=/dev/zero of=/dev/shm/filler2 bs=1 2>/dev/null; \
df -k /dev/shm | tail -1; ${CARACAL_MPIEXEC} ${_devshm_flags} -n 3 ${_devshm_pre_s} $<TARGET_FILE:test_coll> small")
set_tests_properties(devshm_full_at_setup_np3 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;${_devshm_rules}")
endif()
# MPICH 5.0.2 itself dies of SIGSEGV in MPI_Init at 3 ranks in a 16 MiB /dev/shm (32 MiB
# starts; docs/native-bugs.md): the MPICH family's tmpfs is 32 MiB, filled the same way.
if(CARACAL_MPI_FAMILY STREQUAL "mpich")
  set(_devshm_midrun_size 32m)
else()
  set(_devshm_midrun_size 16m)
endif()
add_test(NAME devshm_full_midrun_np3
         COMMAND ${PROJECT_SOURCE_DIR}/tests/c/small_devshm.sh ${_devshm_midrun_size} ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS}
                 -n 3 ${_devshm_pre} $<TARGET_FILE:test_devshm_fill>)
set_tests_properties(devshm_full_midrun_np3 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;${CARACAL_MPI_SHM_ELSEWHERE_ENV};${_devshm_rules}")
