# MPI-4 persistent collectives (src/coll/persistent.c; tests/c/test_persist.c): every family
# with Caracal algorithms, 1000 starts per request with the inputs changed before each,
# results from first principles, Startall with native persistent point-to-point and a
# persistent collective that the rules send native (12-byte allreduce), Request_free.
# Families listed `name:native` have no Caracal algorithm yet: the pass-through to the
# library's own *_init is checked the same way (drop `:native` when their algorithms land).
add_executable(test_persist test_persist.c)
target_link_libraries(test_persist PRIVATE dl)
set(_pers_fams barrier,bcast,reduce,allreduce)
# MPICH busy-polls: above 2 ranks on this 2-core machine a start costs milliseconds, so its
# 3- and 4-rank runs make 200 starts per request (1000 everywhere else)
if(CARACAL_MPI_FAMILY STREQUAL "mpich")
  set(_pers_iters_big 200)
else()
  set(_pers_iters_big 1000)
endif()
set(_pers_p2p CARACAL_BARRIER=hier CARACAL_BCAST=knomial CARACAL_REDUCE=knomial
              CARACAL_ALLREDUCE=native@12,recdbl CARACAL_GATHER=binomial)
set(_pers_shm CARACAL_BARRIER=node/shm,hier CARACAL_BCAST=node/shm,knomial CARACAL_REDUCE=node/shm,knomial
              CARACAL_ALLREDUCE=native@12,node/shm,recdbl CARACAL_GATHER=hier)
caracal_mpi_test(NAME persist_np2_flat NP 2 COMMAND $<TARGET_FILE:test_persist> ${_pers_fams} 1000 cap PRELOAD
                 ENV CARACAL_NODE_SIZE=1 ${_pers_p2p})
caracal_mpi_test(NAME persist_np2_shm NP 2 COMMAND $<TARGET_FILE:test_persist> ${_pers_fams} 1000 PRELOAD
                 ENV CARACAL_NODE_SIZE=2 ${_pers_shm})
caracal_mpi_test(NAME persist_np3_node2 NP 3 COMMAND $<TARGET_FILE:test_persist> ${_pers_fams} ${_pers_iters_big} PRELOAD
                 ENV CARACAL_NODE_SIZE=2 CARACAL_BCAST=knomial:3 CARACAL_REDUCE=knomial_seg CARACAL_BARRIER=hier:3
                     CARACAL_ALLREDUCE=native@12,ring CARACAL_SEGMENT_SIZE=16k)
caracal_mpi_test(NAME persist_np3_flat_nary NP 3 COMMAND $<TARGET_FILE:test_persist> ${_pers_fams} ${_pers_iters_big} PRELOAD
                 ENV CARACAL_NODE_SIZE=1 CARACAL_BCAST=nary:1 CARACAL_REDUCE=knomial:3 CARACAL_BARRIER=hier
                     CARACAL_ALLREDUCE=native@12,ring)
caracal_mpi_test(NAME persist_np4_node2_shm NP 4 COMMAND $<TARGET_FILE:test_persist> ${_pers_fams} ${_pers_iters_big} PRELOAD
                 ENV CARACAL_NODE_SIZE=2 ${_pers_shm})
caracal_mpi_test(NAME persist_np4_flat NP 4 COMMAND $<TARGET_FILE:test_persist> ${_pers_fams} ${_pers_iters_big} PRELOAD
                 ENV CARACAL_NODE_SIZE=1 CARACAL_BCAST=sequential CARACAL_REDUCE=knomial CARACAL_BARRIER=hier
                     CARACAL_ALLREDUCE=native@12,recdbl)
# The families beyond the first four, each forced to one of its Caracal algorithms (steps
# programs: built at the first start, rewound at the next), two configurations.
set(_pers_more allgather,gather,scatter,alltoall,scan,exscan,reduce_scatter_block)
caracal_mpi_test(NAME persist_np3_node2_more_families NP 3 COMMAND $<TARGET_FILE:test_persist> barrier,${_pers_more} ${_pers_iters_big} PRELOAD
                 ENV CARACAL_NODE_SIZE=2 ${_pers_p2p} CARACAL_ALLGATHER=hier CARACAL_SCATTER=binomial
                     CARACAL_ALLTOALL=hier CARACAL_SCAN=hier CARACAL_EXSCAN=hier CARACAL_REDUCE_SCATTER_BLOCK=hier)
caracal_mpi_test(NAME persist_np4_flat_more_families NP 4 COMMAND $<TARGET_FILE:test_persist> barrier,${_pers_more} ${_pers_iters_big} PRELOAD
                 ENV CARACAL_NODE_SIZE=1 ${_pers_p2p} CARACAL_ALLGATHER=bruck CARACAL_GATHER=linear CARACAL_SCATTER=linear
                     CARACAL_ALLTOALL=pairwise CARACAL_SCAN=recdbl CARACAL_EXSCAN=linear CARACAL_REDUCE_SCATTER_BLOCK=rechalving)
caracal_mpi_test(NAME persist_np2_more_families NP 2 COMMAND $<TARGET_FILE:test_persist> barrier,${_pers_more} 1000 PRELOAD
                 ENV CARACAL_NODE_SIZE=1 ${_pers_p2p} CARACAL_ALLGATHER=ring CARACAL_SCATTER=hier CARACAL_ALLTOALL=bruck
                     CARACAL_SCAN=linear CARACAL_EXSCAN=recdbl CARACAL_REDUCE_SCATTER_BLOCK=pairwise)
# From Fortran (MPICH: Open MPI 4.1's Fortran MPIX_*_init call PMPIX_* directly and run
# natively; docs/collectives.md), through each binding, where the library has Fortran bindings.
if(CARACAL_MPI_FAMILY STREQUAL "mpich" AND CARACAL_MPI_FC)
  foreach(b mpif mpi f08)
    add_executable(test_persist_f_${b} test_persist_f.F90)
    target_compile_definitions(test_persist_f_${b} PRIVATE ${_fbind_${b}})
    if(b STREQUAL "mpif")
      target_compile_options(test_persist_f_${b} PRIVATE -fallow-argument-mismatch)
    endif()
    set_target_properties(test_persist_f_${b} PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fmod_persist_${b})
    caracal_mpi_test(NAME persist_f_${b}_np2 NP 2 COMMAND $<TARGET_FILE:test_persist_f_${b}> PRELOAD
                     ENV CARACAL_NODE_SIZE=1 ${_pers_p2p})
  endforeach()
endif()
# MPI-4 large-count collectives (src/coll/large_count.c; MPICH only: Open MPI 4.1 has none;
# tests/c/test_count_c.c, beside tests/c/test_large_count.c): data within INT_MAX bytes runs
# Caracal's algorithms, also when ranks describe it with different counts; the persistent
# _init_c; one run moves 2^31 + 9 bytes (2 GiB per rank) with the root's count 1 of a
# contiguous type and the other's 2^31 + 9 MPI_BYTE: every rank must take the library's path.
if(CARACAL_MPI_HAS_LARGE_COUNT)
  add_executable(test_count_c test_count_c.c)
  target_link_libraries(test_count_c PRIVATE dl)
  caracal_mpi_test(NAME count_c_np2 NP 2 COMMAND $<TARGET_FILE:test_count_c> PRELOAD
                   ENV CARACAL_NODE_SIZE=1 ${_pers_p2p})
  caracal_mpi_test(NAME count_c_np3_node2 NP 3 COMMAND $<TARGET_FILE:test_count_c> PRELOAD
                   ENV CARACAL_NODE_SIZE=2 ${_pers_shm})
  caracal_mpi_test(NAME count_c_big_np2 NP 2 COMMAND $<TARGET_FILE:test_count_c> big PRELOAD
                   ENV CARACAL_NODE_SIZE=1 ${_pers_p2p})
endif()
