# Waiting (core/wait.[ch], core/progress.c caracal_backoff): included from tests/c/CMakeLists.txt.

# No lost wake-up. Back-to-back shm collectives (blocking and nonblocking, the world and its
# halves at once) with random pauses, every wait asleep at once (CARACAL_SPIN_US=0), sleeps
# unbounded in practice (CARACAL_WAIT_NAP_US=30 s) and no native progress pokes
# (CARACAL_WAIT_POKE_US=0: with pokes the first sleeps are short and would hide a lost
# wake-up): a lost wake-up hangs until the timeout. 2 ranks (cores to spare), 4, 8 and 16
# (oversubscribed: waits yield before they sleep); the other strategies once each, and the
# default pokes once.
add_executable(test_wait_stress test_wait_stress.c)
target_link_libraries(test_wait_stress PRIVATE caracal)
set(WAIT_RULES CARACAL_BARRIER=shm CARACAL_BCAST=shm CARACAL_REDUCE=shm CARACAL_ALLREDUCE=shm)
set(_wait_sleep CARACAL_WAIT=futex CARACAL_SPIN_US=0 CARACAL_WAIT_NAP_US=30000000)
foreach(np 2 4 8 16)
  if(np EQUAL 16)
    set(_iters 300)
  else()
    set(_iters 1200)
  endif()
  caracal_mpi_test(NAME wait_futex_stress_np${np} NP ${np} COMMAND $<TARGET_FILE:test_wait_stress> ${_iters} ${np}
                   ENV ${WAIT_RULES} ${_wait_sleep} CARACAL_WAIT_POKE_US=0)
  set_tests_properties(wait_futex_stress_np${np} PROPERTIES TIMEOUT 90)
endforeach()
caracal_mpi_test(NAME wait_futex_poke_stress_np4 NP 4 COMMAND $<TARGET_FILE:test_wait_stress> 600 5
                 ENV ${WAIT_RULES} CARACAL_WAIT=futex CARACAL_SPIN_US=0)
foreach(w spin nap)
  caracal_mpi_test(NAME wait_${w}_stress_np2 NP 2 COMMAND $<TARGET_FILE:test_wait_stress> 1200 7
                   ENV ${WAIT_RULES} CARACAL_WAIT=${w})
endforeach()

# Native progress inside Caracal's waits (tests/c/test_wait_progress.c): rank 0 waits in a
# shm barrier while its peers wait in MPI_Wait for a native 4 MiB message or a native
# MPI_Ialltoall that needs rank 0's library: each strategy must poke the library. futex with
# CARACAL_SPIN_US=0: the waiter is asleep at once, between pokes. Without pokes (CARACAL_WAIT_POKE_US=0) the
# test must hang (its watchdog aborts after 8 s): the test can fail.
add_executable(test_wait_progress test_wait_progress.c)
target_link_libraries(test_wait_progress PRIVATE dl)
set(_wp_futex CARACAL_WAIT=futex CARACAL_SPIN_US=0)
set(_wp_spin CARACAL_WAIT=spin)
set(_wp_nap CARACAL_WAIT=nap)
foreach(w futex spin nap)
  caracal_mpi_test(NAME wait_progress_p2p_${w}_np2 NP 2 COMMAND $<TARGET_FILE:test_wait_progress> p2p 5 60 PRELOAD
                   ENV CARACAL_BARRIER=shm ${_wp_${w}})
  caracal_mpi_test(NAME wait_progress_coll_${w}_np2 NP 2 COMMAND $<TARGET_FILE:test_wait_progress> coll 5 60 PRELOAD
                   ENV CARACAL_BARRIER=shm ${_wp_${w}})
endforeach()
foreach(w futex nap)  # oversubscribed (spin would only burn the core its writer needs)
  caracal_mpi_test(NAME wait_progress_coll_${w}_np3 NP 3 COMMAND $<TARGET_FILE:test_wait_progress> coll 3 60 PRELOAD
                   ENV CARACAL_BARRIER=shm ${_wp_${w}})
endforeach()
caracal_mpi_test(NAME wait_progress_p2p_nopoke_np2 NP 2 COMMAND $<TARGET_FILE:test_wait_progress> p2p 2 8 PRELOAD
                 ENV CARACAL_BARRIER=shm CARACAL_WAIT_POKE_US=0)
set_tests_properties(wait_progress_p2p_nopoke_np2 PROPERTIES WILL_FAIL TRUE TIMEOUT 60)

# A rank killed while the others sleep in a futex wait (a shm bcast it roots): the launcher
# ends the job (bounded here by 40 s; it takes a few seconds), and no segment of this job
# (/dev/shm/caracal-PID-*, PID = rank 0, the creator) is left.
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_wk_env -x LD_PRELOAD=$<TARGET_FILE:caracal> -x CARACAL_BCAST=shm -x CARACAL_BARRIER=shm -x CARACAL_WAIT=futex
              -x CARACAL_SPIN_US=0 -x CARACAL_WAIT_NAP_US=30000000 -x CARACAL_WAIT_POKE_US=0)
else()
  set(_wk_env -genv LD_PRELOAD $<TARGET_FILE:caracal> -genv CARACAL_BCAST shm -genv CARACAL_BARRIER shm
              -genv CARACAL_WAIT futex -genv CARACAL_SPIN_US 0 -genv CARACAL_WAIT_NAP_US 30000000
              -genv CARACAL_WAIT_POKE_US 0)
endif()
string(REPLACE ";" " " _wk_env "${_wk_env}")
string(REPLACE ";" " " _wk_flags "${CARACAL_MPIEXEC_FLAGS}")
add_test(NAME wait_killed_rank_np3
         COMMAND sh -c "t0=$(date +%s); \
out=$(timeout 40 ${CARACAL_MPIEXEC} ${_wk_flags} -n 3 ${_wk_env} $<TARGET_FILE:test_wait_progress> kill 1 30 2>/dev/null); rc=$?; \
t=$(( $(date +%s) - t0 )); pid=$(echo \"$out\" | sed -n 's/^pid //p'); \
left=$(ls /dev/shm | grep -c \"^caracal-\\(budget-\\)\\?$pid-\"); \
echo \"exit $rc after $t s, rank 0 pid $pid, segments of this job left in /dev/shm: $left\"; \
test -n \"$pid\" && test $rc != 0 && test $rc != 124 && test $left = 0")
set_tests_properties(wait_killed_rank_np3 PROPERTIES TIMEOUT 60
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# Every strategy through the differential suite (tests/c/test_coll.c against the native
# library, shm forced on the node level): spin where every rank has a core, futex asleep at
# once and nap at 3 ranks and on two levels (CARACAL_NODE_SIZE=2).
caracal_mpi_test(NAME coll_np2_shm_wait_spin NP 2 COMMAND $<TARGET_FILE:test_coll> small PRELOAD
                 ENV ${_shm} CARACAL_WAIT=spin)
foreach(w futex nap)  # (the trimmed matrix: the full one runs with the default strategy)
  caracal_mpi_test(NAME coll_np3_shm_wait_${w} NP 3 COMMAND $<TARGET_FILE:test_coll> small PRELOAD
                   ENV ${_shm} ${_wp_${w}})
  caracal_mpi_test(NAME coll_np4_node2_shm_wait_${w} NP 4 COMMAND $<TARGET_FILE:test_coll> small PRELOAD
                   ENV CARACAL_NODE_SIZE=2 ${_shm} ${_wp_${w}})
endforeach()
