# Rectangular collectives on tori (src/coll/rect/, docs/collectives.md "Rectangular
# collectives on tori"). The trees without MPI: spanning and link-disjoint for every torus up
# to 4x4x4 and every root (tests/c/test_rect_trees.c, well under a second).
add_executable(test_rect_trees test_rect_trees.c ${PROJECT_SOURCE_DIR}/src/coll/rect/rect_trees.c)
target_include_directories(test_rect_trees PRIVATE ${PROJECT_SOURCE_DIR}/src)
add_test(NAME rect_trees COMMAND test_rect_trees)
# bcast, reduce, allreduce forced to `rect` (then native, so a rule passed over shows as a
# native call) on small tori, oversubscribed above 2 ranks (tests/c/test_rect.c)
add_executable(test_rect test_rect.c)
target_link_libraries(test_rect PRIVATE dl)
if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
  set(_rect_small)
else()
  set(_rect_small small)   # MPICH busy-waits when oversubscribed: the largest count from two roots
endif()
set(_rect_rules CARACAL_BCAST=rect,native CARACAL_REDUCE=rect,native CARACAL_ALLREDUCE=rect,native)
foreach(spec "4;4" "2x2;4" "2x3;6" "3x3;9" "2x2x2;8")
  list(GET spec 0 _dims)
  list(GET spec 1 _np)
  caracal_mpi_test(NAME rect_${_dims}_np${_np} NP ${_np} COMMAND $<TARGET_FILE:test_rect> ${_dims} ${_rect_small}
                   PRELOAD ENV ${_rect_rules})
endforeach()
# the log names the schedule and the torus; a rule passed over says why
caracal_mpi_test(NAME rect_log_np4 NP 4 COMMAND $<TARGET_FILE:test_rect> 2x2 brief PRELOAD
                 ENV ${_rect_rules} CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "bcast rect bytes=4 ranks=4 torus=2x2 trees=4")
caracal_mpi_test(NAME rect_log_passed_over_np4 NP 4 COMMAND $<TARGET_FILE:test_rect> 2x2 brief PRELOAD
                 ENV ${_rect_rules} CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 EXPECT_LOG each "reduce rect passed over: a non-commutative operator (each tree combines in its own order)")
# a torus declared in CARACAL_TOPOLOGY (its nodes permuted) makes rect run on communicators that
# are not Cartesian; the log marks it (declared)
caracal_mpi_test(NAME rect_declared_2x3_np6 NP 6 COMMAND $<TARGET_FILE:test_rect> 2x3 declared ${_rect_small} PRELOAD
                 ENV ${_rect_rules} CARACAL_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/data/topology6-torus2x3.json)
caracal_mpi_test(NAME rect_declared_log_np6 NP 6 COMMAND $<TARGET_FILE:test_rect> 2x3 declared brief PRELOAD
                 ENV ${_rect_rules} CARACAL_LOG=algo CARACAL_LOG_RANKS=all
                 CARACAL_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/data/topology6-torus2x3.json
                 EXPECT_LOG each "bcast rect bytes=4 ranks=6 torus=2x3 (declared) trees=4")
