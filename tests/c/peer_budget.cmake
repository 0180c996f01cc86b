# CARACAL_PEER_BUDGET (issue 19): 8 ranks as 8 or 4 "nodes" (CARACAL_NODE_SIZE), results
# exact and each rank's off-node peers, counted by Caracal, within the budget (test_peer_budget.c).
add_executable(test_peer_budget test_peer_budget.c)
target_link_libraries(test_peer_budget PRIVATE caracal)
# one rank per node, budget 2: the rules' native calls go to Caracal's hierarchical schedules,
# whose leaders' binomial/recursive-doubling/dissemination (3-6 peers over 8) become chains
# and alltoall's leader exchange (7 peers) a ring
caracal_mpi_test(NAME peer_budget_np8_node1 NP 8 COMMAND $<TARGET_FILE:test_peer_budget> 2
                 ENV CARACAL_NODE_SIZE=1 CARACAL_PEER_BUDGET=2)
# 4 nodes of 2, budget 2, and a flat alltoall rule (pairwise: 6 off-node peers each): members
# talk to no other node, alltoall runs node-aggregated, its leaders' blocks hopping by 1 and 3
caracal_mpi_test(NAME peer_budget_np8_node2 NP 8 COMMAND $<TARGET_FILE:test_peer_budget> 2
                 ENV CARACAL_NODE_SIZE=2 CARACAL_PEER_BUDGET=2 CARACAL_ALLTOALL=pairwise)
# budget 4 over 8 leaders: alltoall's blocks hop by 1 and 3 (radix 3: 4 peers, not 7)
caracal_mpi_test(NAME peer_budget_b4_np8_node1 NP 8 COMMAND $<TARGET_FILE:test_peer_budget> 4
                 ENV CARACAL_NODE_SIZE=1 CARACAL_PEER_BUDGET=4)
# uneven nodes (2, 2, 2, 1: blocks of different sizes hop) and the point-to-point node phase
caracal_mpi_test(NAME peer_budget_np7_node2_noshm NP 7 COMMAND $<TARGET_FILE:test_peer_budget> 2
                 ENV CARACAL_NODE_SIZE=2 CARACAL_PEER_BUDGET=2 CARACAL_SHM=0)
# no budget, Caracal's schedules by rule: the counts of the unbudgeted primitives, above 2
set(_pb_rules CARACAL_BARRIER=hier CARACAL_BCAST=knomial:2 CARACAL_REDUCE=knomial:2 CARACAL_ALLREDUCE=recdbl
    CARACAL_ALLTOALL=hier CARACAL_ALLTOALLV=hier)
caracal_mpi_test(NAME peer_budget_none_np8_node1 NP 8 COMMAND $<TARGET_FILE:test_peer_budget> 0
                 ENV CARACAL_NODE_SIZE=1 ${_pb_rules})
# bad values: one warning per job, the default (no budget) in force
caracal_launcher_env(_pb_env "" CARACAL_NODE_SIZE=1 ${_pb_rules} CARACAL_PEER_BUDGET=1)
add_test(NAME peer_budget_refused_one_np4
         COMMAND ${PROJECT_SOURCE_DIR}/tests/c/expect_lines.sh 1 "CARACAL_PEER_BUDGET=1 is refused"
                 ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n 4 ${_pb_env} $<TARGET_FILE:test_peer_budget> 0)
caracal_launcher_env(_pb_env2 "" CARACAL_NODE_SIZE=1 ${_pb_rules} CARACAL_PEER_BUDGET=two)
add_test(NAME peer_budget_refused_word_np4
         COMMAND ${PROJECT_SOURCE_DIR}/tests/c/expect_lines.sh 1 "CARACAL_PEER_BUDGET=two is refused"
                 ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n 4 ${_pb_env2} $<TARGET_FILE:test_peer_budget> 0)
set_tests_properties(peer_budget_refused_one_np4 peer_budget_refused_word_np4 PROPERTIES TIMEOUT 300 LABELS np4
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
# alltoall's hop exchange over every case of test_a2afam (types, in place, nonblocking,
# persistent): 5 leaders, budget 2 -> radix 4 (hops of 1 and 4, positions with two digits)
caracal_mpi_test(NAME peer_budget_a2afam_np5_node1 NP 5 COMMAND $<TARGET_FILE:test_a2afam> small PRELOAD
                 ENV CARACAL_NODE_SIZE=1 CARACAL_PEER_BUDGET=2 CARACAL_ALLTOALL=hier CARACAL_ALLTOALLV=hier)
# the radix-k top-level primitives under a budget: 8 leaders, dissemination:4 (7 peers) and
# recmul:4 (4 peers) exceed budget 2 and become chains; under budget 4 recmul:4 fits and stays
caracal_mpi_test(NAME peer_budget_radix_np8_node1 NP 8 COMMAND $<TARGET_FILE:test_peer_budget> 2
                 ENV CARACAL_NODE_SIZE=1 CARACAL_PEER_BUDGET=2 "CARACAL_BARRIER=top/dissemination:4,hier"
                     CARACAL_ALLREDUCE=recmul:4)
caracal_mpi_test(NAME peer_budget_radix_b4_np8_node2 NP 8 COMMAND $<TARGET_FILE:test_peer_budget> 4
                 ENV CARACAL_NODE_SIZE=2 CARACAL_PEER_BUDGET=4 "CARACAL_BARRIER=top/dissemination:3,hier"
                     CARACAL_ALLREDUCE=recmul:4)
