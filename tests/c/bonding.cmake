# Discovery (issue 13): caracal nodemap writes a "socket" level even where each host has one
# socket, identical to its "node" level. CARACAL_TOPOLOGY must then give the hierarchy the
# hostnames give: one level called "node" (the one that gets the shared-memory segment and
# the node/... rules), not "socket" (src/sbgp/hier.c: the upper name wins).
caracal_mpi_test(NAME topology_socket_is_node_np4 NP 4 COMMAND $<TARGET_FILE:test_init> PRELOAD
                 ENV CARACAL_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/data/topology4-socket-is-node.json
                     CARACAL_REORDER=0 ${_hier_log}
                 EXPECT_LOG only "hier ranks=4 node(2x2)={0,1}{2,3} top(1x2)={0,2}")
# ... and the node/shm rules apply to that level: exact results against native
caracal_mpi_test(NAME topology_socket_is_node_shm_np4 NP 4 COMMAND $<TARGET_FILE:test_coll> ${_coll_small} PRELOAD
                 ENV CARACAL_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/data/topology4-socket-is-node.json
                     CARACAL_REORDER=0 CARACAL_LOG=algo CARACAL_LOG_RANKS=all ${_shm}
                 EXPECT_LOG each "bcast knomial bytes=8 ranks=4 levels=node(2x2)+top(1x2) node=shm top=knomial")
