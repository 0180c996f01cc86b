# Alltoall, alltoallv, reduce_scatter, reduce_scatter_block, scan, exscan: Caracal's
# algorithms forced by rule (tests/c/test_a2afam.c checks every result from first principles
# and that Caracal ran each call). Three rule sets cover every algorithm; "hier" runs on
# several node shapes (CARACAL_NODE_SIZE, and a topology whose node groups interleave ranks).
add_executable(test_a2afam test_a2afam.c)
target_link_libraries(test_a2afam PRIVATE dl)
set(_a2a_hier CARACAL_ALLTOALL=hier CARACAL_ALLTOALLV=hier CARACAL_REDUCE_SCATTER=hier
              CARACAL_REDUCE_SCATTER_BLOCK=hier CARACAL_SCAN=hier CARACAL_EXSCAN=hier)
set(_a2a_pair CARACAL_ALLTOALL=pairwise CARACAL_ALLTOALLV=pairwise CARACAL_REDUCE_SCATTER=pairwise
              CARACAL_REDUCE_SCATTER_BLOCK=pairwise CARACAL_SCAN=recdbl CARACAL_EXSCAN=recdbl)
set(_a2a_alt CARACAL_ALLTOALL=bruck CARACAL_ALLTOALLV=pairwise CARACAL_REDUCE_SCATTER=rechalving
             CARACAL_REDUCE_SCATTER_BLOCK=rechalving CARACAL_SCAN=linear CARACAL_EXSCAN=linear)
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_a2a_small)
else()
  set(_a2a_small small)   # MPICH busy-polls when oversubscribed: trimmed matrix above 2 ranks
endif()
foreach(_set hier pair alt)
  caracal_mpi_test(NAME a2afam_${_set}_np1 NP 1 COMMAND $<TARGET_FILE:test_a2afam> PRELOAD ENV ${_a2a_${_set}})
  caracal_mpi_test(NAME a2afam_${_set}_np2_node1 NP 2 COMMAND $<TARGET_FILE:test_a2afam> PRELOAD
                   ENV CARACAL_NODE_SIZE=1 ${_a2a_${_set}})
  caracal_mpi_test(NAME a2afam_${_set}_np3_node2 NP 3 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                   ENV CARACAL_NODE_SIZE=2 ${_a2a_${_set}})
  caracal_mpi_test(NAME a2afam_${_set}_np4_node3 NP 4 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                   ENV CARACAL_NODE_SIZE=3 ${_a2a_${_set}})
  caracal_mpi_test(NAME a2afam_${_set}_np5_node2 NP 5 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                   ENV CARACAL_NODE_SIZE=2 ${_a2a_${_set}})
  caracal_mpi_test(NAME a2afam_${_set}_np8_node3 NP 8 COMMAND $<TARGET_FILE:test_a2afam> small PRELOAD
                   ENV CARACAL_NODE_SIZE=3 ${_a2a_${_set}})
endforeach()
# hier on more shapes: one node of all ranks, two full nodes, eight ranks in pairs
caracal_mpi_test(NAME a2afam_hier_np4_onenode NP 4 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD ENV ${_a2a_hier})
caracal_mpi_test(NAME a2afam_hier_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                 ENV CARACAL_NODE_SIZE=2 ${_a2a_hier})
caracal_mpi_test(NAME a2afam_hier_np8_node2 NP 8 COMMAND $<TARGET_FILE:test_a2afam> small PRELOAD
                 ENV CARACAL_NODE_SIZE=2 ${_a2a_hier})
caracal_mpi_test(NAME a2afam_hier_np5_node3 NP 5 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                 ENV CARACAL_NODE_SIZE=3 ${_a2a_hier})
# node groups {0,2} {1,3}: alltoall through leaders of interleaved groups, scan falls back to
# recdbl, reduce_scatter's non-commutative reduce runs one flat tree
caracal_mpi_test(NAME a2afam_hier_np4_interleaved NP 4 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                 ENV CARACAL_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/data/topology4-alternating.json
                     CARACAL_REORDER=0 ${_a2a_hier})
# CARACAL_COLL=force alone: "hier" is each family's default (first row of algorithms.def)
caracal_mpi_test(NAME a2afam_force_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_a2afam> ${_a2a_small} PRELOAD
                 ENV CARACAL_COLL=force CARACAL_NODE_SIZE=2)
