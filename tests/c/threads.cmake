# Threads (issue 14 item 8): tests/c/test_threads.c, four threads per rank, each on its own
# duplicate of MPI_COMM_WORLD, blocking, nonblocking and point-to-point mixed, exact results.
# `all`: every collective must have been run by Caracal (its count grows by exactly the number
# of calls); the algo log shows which algorithm (EXPECT_LOG). Forced (CARACAL_COLL=force, and
# per-family rules including the node segment's shm rows) and with the default rules.
add_executable(test_threads test_threads.c)
target_link_libraries(test_threads PRIVATE pthread dl)
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_thr_iters 12)
  set(_thr_iters4 12)
else()
  set(_thr_iters 6)   # MPICH busy-waits when oversubscribed: 4 ranks x 5 threads on 2 cores crawl
  set(_thr_iters4 2)
endif()
set(_thr_shm CARACAL_COLL=force CARACAL_ALLREDUCE=shm CARACAL_BCAST=shm CARACAL_REDUCE=shm CARACAL_BARRIER=shm
             CARACAL_ALLGATHER=shm CARACAL_ALLTOALL=shm CARACAL_SCAN=shm CARACAL_REDUCE_SCATTER_BLOCK=shm)
set(_thr_algs CARACAL_COLL=force CARACAL_ALLREDUCE=ring CARACAL_BCAST=knomial:3 CARACAL_REDUCE=knomial_seg
              CARACAL_BARRIER=hier CARACAL_ALLGATHER=bruck CARACAL_ALLTOALL=pairwise CARACAL_SCAN=recdbl
              CARACAL_REDUCE_SCATTER_BLOCK=rechalving)
# (CARACAL_SCAN=native: force then runs the family's default algorithm, hier, whatever this
# library's built-in rules for scan are: MPICH 5's take shm at 2 ranks)
caracal_mpi_test(NAME threads_force_np2 NP 2 COMMAND $<TARGET_FILE:test_threads> all 4 ${_thr_iters} PRELOAD
                 ENV CARACAL_COLL=force CARACAL_SCAN=native CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "scan hier bytes=4 ranks=2 levels=node(1x2) node=hier")
caracal_mpi_test(NAME threads_shm_np2 NP 2 COMMAND $<TARGET_FILE:test_threads> all 4 ${_thr_iters} PRELOAD
                 ENV ${_thr_shm} CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "allreduce shm bytes=28 ranks=2 levels=node(1x2) node=shm")
caracal_mpi_test(NAME threads_algs_np2 NP 2 COMMAND $<TARGET_FILE:test_threads> all 4 ${_thr_iters} PRELOAD
                 ENV ${_thr_algs} CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "allgather bruck bytes=16 ranks=2 levels=node(1x2) node=bruck")
caracal_mpi_test(NAME threads_default_np2 NP 2 COMMAND $<TARGET_FILE:test_threads> some 4 ${_thr_iters} PRELOAD)
# (force at 4 ranks in 2 node groups: the built-in small-message rules of allreduce and barrier
# are the comm-level shm row, which needs one node group, and they go native: `some`)
caracal_mpi_test(NAME threads_force_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_threads> some 4 ${_thr_iters4} PRELOAD
                 ENV CARACAL_COLL=force CARACAL_NODE_SIZE=2 CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "alltoall hier bytes=16 ranks=4 levels=node(2x2)+top(1x2) node=hier top=hier")
# (shm rows need one node group, and MPICH's default rules at 4 ranks are native: results only)
caracal_mpi_test(NAME threads_shm_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_threads> any 4 ${_thr_iters4} PRELOAD
                 ENV ${_thr_shm} CARACAL_NODE_SIZE=2)
caracal_mpi_test(NAME threads_algs_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_threads> all 4 ${_thr_iters4} PRELOAD
                 ENV ${_thr_algs} CARACAL_NODE_SIZE=2)
caracal_mpi_test(NAME threads_default_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_threads> any 4 ${_thr_iters4} PRELOAD
                 ENV CARACAL_NODE_SIZE=2)

# The profiler under threads: the counts of every function the program calls, of its call
# sites and of the collectives table, and the times, add up exactly (threads_prof_check.py).
foreach(np 2 4)
  set(_it ${_thr_iters})
  if(np EQUAL 4)
    set(_it ${_thr_iters4})
  endif()
  caracal_launcher_env(_thr_penv "${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>" CARACAL_COLL=force CARACAL_NODE_SIZE=2
                       CARACAL_PROFILE=${CMAKE_CURRENT_BINARY_DIR}/threads_prof_np${np}.json)
  string(REPLACE ";" " " _thr_penv "${_thr_penv}")
  string(REPLACE ";" " " _thr_pflags "${CARACAL_MPIEXEC_FLAGS}")
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/threads_prof_np${np}.out)
  add_test(NAME threads_profile_np${np}
           COMMAND sh -c "rm -f ${CMAKE_CURRENT_BINARY_DIR}/threads_prof_np${np}.json && \
${CARACAL_MPIEXEC} ${_thr_pflags} -n ${np} ${_thr_penv} $<TARGET_FILE:test_threads> some 4 ${_it} > ${_out} && \
cat ${_out} && python3 ${PROJECT_SOURCE_DIR}/tests/c/threads_prof_check.py ${_out} ${CMAKE_CURRENT_BINARY_DIR}/threads_prof_np${np}.json ${np}")
  set_tests_properties(threads_profile_np${np} PROPERTIES TIMEOUT 300
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()

# Persistent collectives under threads (tests/c/test_threads_persist.c): four threads per rank
# init, start (one by one and Startall), wait and free persistent allreduce, bcast, barrier and
# allgather on their own communicators, one freed while active, exact results. Forced (`all`):
# every start must run Caracal's schedule (caracal_coll_persistent_starts). With the default
# rules (`any`: the library's own may run some, and MPICH 4.0.2's Allgather_init is wrong).
add_executable(test_threads_persist test_threads_persist.c)
target_link_libraries(test_threads_persist PRIVATE pthread dl)
# (CARACAL_ALLREDUCE=shm: force runs the family's default algorithm, recdbl, where a library's
# built-in rule says native, and Intel MPI's say native for a 4-byte allreduce at 2 ranks)
caracal_mpi_test(NAME threads_persist_force_np2 NP 2 COMMAND $<TARGET_FILE:test_threads_persist> all 4 ${_thr_iters} PRELOAD
                 ENV CARACAL_COLL=force CARACAL_ALLREDUCE=shm CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "allreduce shm bytes=4 ranks=2 levels=node(1x2) node=shm")
# Caracal's handle of a persistent collective without Caracal (tests/c/native_persist_shell.c):
# the library must take what coll/persistent.c does under threads (start before the task, the
# handle of a freed active request freed once complete, by whichever thread completes it).
# MPICH 4.0.2 fails the two variants Caracal avoids (arguments 1 and 2: docs/native-bugs.md).
add_executable(native_persist_shell native_persist_shell.c)
target_link_libraries(native_persist_shell PRIVATE pthread)
foreach(mode 0 3)
  caracal_mpi_test(NAME native_persist_shell_${mode}_np2 NP 2 COMMAND $<TARGET_FILE:native_persist_shell> 4 300 ${mode})
endforeach()
caracal_mpi_test(NAME threads_persist_default_np2 NP 2 COMMAND $<TARGET_FILE:test_threads_persist> any 4 ${_thr_iters} PRELOAD)

# A native blocking collective under threads drains only its own thread's Caracal collectives
# (tests/c/test_threads_drain.c): two threads per rank whose native bcast and Caracal
# Iallreduce on two communicators form a cycle through any drain that waits for the whole
# process (threads_profile_np4 hung so once in 37 runs under load); a watchdog turns it into
# a failure. Exactly the allreduces must have run Caracal's (the bcast native).
add_executable(test_threads_drain test_threads_drain.c)
target_link_libraries(test_threads_drain PRIVATE pthread dl)
caracal_mpi_test(NAME threads_drain_np2 NP 2 COMMAND $<TARGET_FILE:test_threads_drain> 5 PRELOAD
                 ENV CARACAL_BCAST=native CARACAL_ALLREDUCE=recdbl)

# The profiler under threads when the library hands a completed request's handle to another
# thread before the completing call has returned to the profiler (tests/c/test_threads_prof_reqs.c
# forces that interleaving every iteration, through the PMPI completion calls it exports): each
# receive call site must get exactly the bytes it received (threads_prof_reqs_check.py).
add_executable(test_threads_prof_reqs test_threads_prof_reqs.c)
target_link_libraries(test_threads_prof_reqs PRIVATE pthread dl)
set_target_properties(test_threads_prof_reqs PROPERTIES ENABLE_EXPORTS ON) # (its PMPI_* come first)
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_thr_riters 96)
else()
  set(_thr_riters 80)
endif()
caracal_launcher_env(_thr_renv "${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>"
                     CARACAL_PROFILE=${CMAKE_CURRENT_BINARY_DIR}/threads_prof_reqs.json)
string(REPLACE ";" " " _thr_renv "${_thr_renv}")
set(_out ${CMAKE_CURRENT_BINARY_DIR}/threads_prof_reqs.out)
add_test(NAME threads_profile_reqs_np2
         COMMAND sh -c "rm -f ${CMAKE_CURRENT_BINARY_DIR}/threads_prof_reqs.json && \
${CARACAL_MPIEXEC} ${_thr_pflags} -n 2 ${_thr_renv} $<TARGET_FILE:test_threads_prof_reqs> 2 ${_thr_riters} > ${_out}; rc=$?; \
cat ${_out}; [ $rc = 0 ] && python3 ${PROJECT_SOURCE_DIR}/tests/c/threads_prof_reqs_check.py ${_out} ${CMAKE_CURRENT_BINARY_DIR}/threads_prof_reqs.json")
set_tests_properties(threads_profile_reqs_np2 PROPERTIES TIMEOUT 120
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
