# Shared-memory algorithms of the gather, alltoall(v) and reduce-scatter/scan families
# (bcol/shm/blocks.c, rows "shm"), and the hier schedules' shm node phases (gatherfam.cmake's
# hier launches take them): tests/c/test_gatherfam.c and test_a2afam.c with the shm rules
# forced, first-principles results. A shm comm rule runs only where the communicator is one node group
# with a segment, so the forced launches are one-node ones (CARACAL_NODE_SIZE equal to the
# ranks, or unset: the machine); launches with several node groups check that the rule
# falls back correctly to the next matching rule (the built-in ones: native, or e.g.
# reduce_scatter pairwise from 32 KiB at 3+ ranks) ("maybe": results only). The tests' reversed communicator
# and nonblocking windows exercise the step protocol with several calls in flight; the
# small and large blocks its three buffer classes (inline, small ring, pipelined slots).
# Interleaving with the shm steps of bcast/allreduce on one segment: tests/stress (its
# draws include the shm rows) and test_persist (a blocking shm allreduce between starts).
set(_shm_gf CARACAL_ALLGATHER=shm CARACAL_ALLGATHERV=shm CARACAL_GATHER=shm CARACAL_GATHERV=shm
            CARACAL_SCATTER=shm CARACAL_SCATTERV=shm)
set(_shm_a2a CARACAL_ALLTOALL=shm CARACAL_ALLTOALLV=shm CARACAL_REDUCE_SCATTER=pairwise
             CARACAL_REDUCE_SCATTER_BLOCK=pairwise CARACAL_SCAN=recdbl CARACAL_EXSCAN=recdbl)
# the reductions' shm rows take any datatype and operator (rank order)
set(_shm_red CARACAL_ALLTOALL=shm CARACAL_ALLTOALLV=shm CARACAL_REDUCE_SCATTER=shm
             CARACAL_REDUCE_SCATTER_BLOCK=shm CARACAL_SCAN=shm CARACAL_EXSCAN=shm)
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_shm_small)
else()
  set(_shm_small small)   # MPICH busy-waits when oversubscribed
endif()
# name  ranks  node size (0: unset, the machine)
foreach(spec "1;1" "2;2" "3;3" "4;0" "5;0" "8;0")
  list(GET spec 0 _np)
  list(GET spec 1 _ns)
  set(_env)
  if(NOT _ns STREQUAL "0")
    set(_env CARACAL_NODE_SIZE=${_ns})
  endif()
  set(_arg)
  if(_np GREATER 2)
    set(_arg ${_shm_small})
  endif()
  if(_np GREATER 4)
    set(_arg small)
  endif()
  set(_maybe)
  if(_np EQUAL 1)
    set(_maybe maybe)   # one rank has no node level: the shm rule goes native (results checked)
  endif()
  caracal_mpi_test(NAME shmfam_gather_np${_np}_node${_ns} NP ${_np} COMMAND $<TARGET_FILE:test_gatherfam> ${_arg} ${_maybe}
                   PRELOAD ENV ${_env} ${_shm_gf})
  caracal_mpi_test(NAME shmfam_a2a_np${_np}_node${_ns} NP ${_np} COMMAND $<TARGET_FILE:test_a2afam> ${_arg} ${_maybe}
                   PRELOAD ENV ${_env} ${_shm_a2a})
  caracal_mpi_test(NAME shmfam_red_np${_np}_node${_ns} NP ${_np} COMMAND $<TARGET_FILE:test_a2afam> ${_arg} ${_maybe}
                   PRELOAD ENV ${_env} ${_shm_red})
endforeach()
caracal_mpi_test(NAME shmfam_red_np3_tinychunks NP 3 COMMAND $<TARGET_FILE:test_a2afam> ${_shm_small} PRELOAD
                 ENV CARACAL_NODE_SIZE=3 CARACAL_SHM_SLOT=4k CARACAL_SHM_CHUNK=100 ${_shm_red})
# small slots and chunks: every block crosses many pipelined steps, pieces of all classes
caracal_mpi_test(NAME shmfam_gather_np3_tinychunks NP 3 COMMAND $<TARGET_FILE:test_gatherfam> ${_shm_small} PRELOAD
                 ENV CARACAL_NODE_SIZE=3 CARACAL_SHM_SLOT=4k CARACAL_SHM_CHUNK=1500 ${_shm_gf})
caracal_mpi_test(NAME shmfam_a2a_np3_tinychunks NP 3 COMMAND $<TARGET_FILE:test_a2afam> ${_shm_small} PRELOAD
                 ENV CARACAL_NODE_SIZE=3 CARACAL_SHM_SLOT=4k CARACAL_SHM_CHUNK=100 ${_shm_a2a})
# several node groups (and none): the shm rule falls back to the next matching rule, results still exact
caracal_mpi_test(NAME shmfam_gather_np4_node2_fallback NP 4 COMMAND $<TARGET_FILE:test_gatherfam> ${_shm_small} maybe
                 PRELOAD ENV CARACAL_NODE_SIZE=2 ${_shm_gf})
caracal_mpi_test(NAME shmfam_a2a_np3_node1_fallback NP 3 COMMAND $<TARGET_FILE:test_a2afam> ${_shm_small} maybe
                 PRELOAD ENV CARACAL_NODE_SIZE=1 ${_shm_a2a})
caracal_mpi_test(NAME shmfam_a2a_np5_node2_fallback NP 5 COMMAND $<TARGET_FILE:test_a2afam> small maybe
                 PRELOAD ENV CARACAL_NODE_SIZE=2 ${_shm_a2a})
caracal_mpi_test(NAME shmfam_gather_np2_noshm_fallback NP 2 COMMAND $<TARGET_FILE:test_gatherfam> maybe
                 PRELOAD ENV CARACAL_NODE_SIZE=2 CARACAL_SHM=0 ${_shm_gf})
# persistent: built at every start (not a steps program), started 1000 times
set(_shm_pers allgather,gather,scatter,alltoall,scan,exscan,reduce_scatter_block)
set(_shm_pers_rules CARACAL_ALLREDUCE=native@12,shm CARACAL_ALLGATHER=shm CARACAL_GATHER=shm CARACAL_SCATTER=shm
                    CARACAL_ALLTOALL=shm CARACAL_SCAN=shm CARACAL_EXSCAN=shm CARACAL_REDUCE_SCATTER_BLOCK=shm)
caracal_mpi_test(NAME shmfam_persist_np2 NP 2 COMMAND $<TARGET_FILE:test_persist> ${_shm_pers} 1000
                 PRELOAD ENV CARACAL_NODE_SIZE=2 ${_shm_pers_rules})
caracal_mpi_test(NAME shmfam_persist_np3 NP 3 COMMAND $<TARGET_FILE:test_persist> ${_shm_pers} 200
                 PRELOAD ENV CARACAL_NODE_SIZE=3 ${_shm_pers_rules})
# alltoall(v) "hier" with the node phases on each node's segment (a2afam.cmake's hier
# launches take them wherever a node group has slots): uneven node groups with every block
# crossing many pipelined and windowed steps, the point-to-point node phase kept covered
# without segments, and persistent alltoall rebuilt on the segment at every start
foreach(spec "3;2" "5;3" "7;3")
  list(GET spec 0 _np)
  list(GET spec 1 _ns)
  set(_arg ${_shm_small})
  if(_np GREATER 4)
    set(_arg small)
  endif()
  caracal_mpi_test(NAME shmfam_a2a_hier_np${_np}_node${_ns}_tinychunks NP ${_np} COMMAND $<TARGET_FILE:test_a2afam> ${_arg}
                   PRELOAD ENV CARACAL_NODE_SIZE=${_ns} CARACAL_SHM_SLOT=4k CARACAL_SHM_CHUNK=100 ${_a2a_hier})
endforeach()
caracal_mpi_test(NAME shmfam_a2a_hier_np5_node3_noshm NP 5 COMMAND $<TARGET_FILE:test_a2afam> small PRELOAD
                 ENV CARACAL_NODE_SIZE=3 CARACAL_SHM=0 ${_a2a_hier})
caracal_mpi_test(NAME shmfam_persist_alltoall_hier_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_persist> alltoall 200
                 PRELOAD ENV CARACAL_NODE_SIZE=2 CARACAL_ALLTOALL=hier)
