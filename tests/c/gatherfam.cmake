# The gather family (allgather, allgatherv, gather, gatherv, scatter, scatterv):
# tests/c/test_gatherfam.c, first-principles results, each launch forcing one algorithm
# per family by rule (every call must run in Caracal) at 1-8 ranks and virtual node
# sizes 1-3 (uneven node groups), plus a topology with non-consecutive nodes.
add_executable(test_gatherfam test_gatherfam.c)
target_link_libraries(test_gatherfam PRIVATE dl)
set(_gf_hier CARACAL_ALLGATHER=hier CARACAL_ALLGATHERV=hier CARACAL_GATHER=hier CARACAL_GATHERV=hier
             CARACAL_SCATTER=hier CARACAL_SCATTERV=hier)
set(_gf_tree CARACAL_ALLGATHER=ring CARACAL_ALLGATHERV=ring CARACAL_GATHER=binomial CARACAL_GATHERV=binomial
             CARACAL_SCATTER=binomial CARACAL_SCATTERV=binomial)
set(_gf_flat CARACAL_ALLGATHER=bruck CARACAL_ALLGATHERV=bruck CARACAL_GATHER=linear CARACAL_GATHERV=linear
             CARACAL_SCATTER=linear CARACAL_SCATTERV=linear)
set(_gf_recdbl CARACAL_ALLGATHER=recdbl CARACAL_ALLGATHERV=ring CARACAL_GATHER=linear CARACAL_GATHERV=binomial
               CARACAL_SCATTER=binomial CARACAL_SCATTERV=linear)
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_gf_small)
else()
  set(_gf_small small)   # MPICH busy-waits when oversubscribed: fewer roots above 4 ranks
endif()
# name  ranks  node size  rule set
foreach(spec "hier;1;1;_gf_hier" "hier;3;2;_gf_hier" "hier;4;2;_gf_hier" "hier;5;2;_gf_hier" "hier;5;3;_gf_hier"
             "hier;8;3;_gf_hier" "hier;4;1;_gf_hier" "hier;3;3;_gf_hier"
             "tree;1;1;_gf_tree" "tree;2;1;_gf_tree" "tree;5;2;_gf_tree" "tree;8;3;_gf_tree"
             "flat;2;2;_gf_flat" "flat;3;1;_gf_flat" "flat;8;2;_gf_flat"
             "recdbl;4;2;_gf_recdbl" "recdbl;8;1;_gf_recdbl")
  list(GET spec 0 _n)
  list(GET spec 1 _np)
  list(GET spec 2 _ns)
  list(GET spec 3 _rules)
  set(_arg)
  if(_np GREATER 4)
    set(_arg ${_gf_small})
  endif()
  caracal_mpi_test(NAME gatherfam_${_n}_np${_np}_node${_ns} NP ${_np} COMMAND $<TARGET_FILE:test_gatherfam> ${_arg}
                   PRELOAD ENV CARACAL_NODE_SIZE=${_ns} ${${_rules}})
endforeach()
# nodes {0,2} and {1,3}: node groups that are not consecutive ranks
caracal_mpi_test(NAME gatherfam_hier_np4_alternating NP 4 COMMAND $<TARGET_FILE:test_gatherfam> PRELOAD
                 ENV CARACAL_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/data/topology4-alternating.json ${_gf_hier})
# CARACAL_COLL=force: each family's default Caracal schedule (hier), and rules choosing by size
caracal_mpi_test(NAME gatherfam_force_np4_node2 NP 4 COMMAND $<TARGET_FILE:test_gatherfam> PRELOAD
                 ENV CARACAL_NODE_SIZE=2 CARACAL_COLL=force)
caracal_mpi_test(NAME gatherfam_bysize_np3_node2 NP 3 COMMAND $<TARGET_FILE:test_gatherfam> PRELOAD
                 ENV CARACAL_NODE_SIZE=2 CARACAL_ALLGATHER=bruck@-1k,hier CARACAL_ALLGATHERV=hier
                     CARACAL_GATHER=linear@64k-,hier CARACAL_GATHERV=binomial CARACAL_SCATTER=hier@-64,binomial
                     CARACAL_SCATTERV=hier)
