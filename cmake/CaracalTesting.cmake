# caracal_mpi_test(NAME <name> NP <n> COMMAND <prog> [args...] [PRELOAD] [ENV VAR=VALUE ...])
#   Runs <prog> under this build's mpiexec with <n> ranks. PRELOAD puts libcaracal
#   in LD_PRELOAD of the MPI processes (not of the launcher). ENV entries are
#   passed to every rank.
function(caracal_mpi_test)
  cmake_parse_arguments(T "PRELOAD" "NAME;NP" "COMMAND;ENV" ${ARGN})
  set(envargs)
  if(CARACAL_MPI STREQUAL "openmpi")
    foreach(e IN LISTS T_ENV)
      list(APPEND envargs -x ${e})
    endforeach()
    if(T_PRELOAD)
      list(APPEND envargs -x LD_PRELOAD=$<TARGET_FILE:caracal>)
    endif()
  else()
    foreach(e IN LISTS T_ENV)
      string(REPLACE "=" ";" kv "${e}")
      list(GET kv 0 k)
      string(LENGTH "${k}=" klen)
      string(SUBSTRING "${e}" ${klen} -1 v)
      list(APPEND envargs -genv ${k} ${v})
    endforeach()
    if(T_PRELOAD)
      list(APPEND envargs -genv LD_PRELOAD $<TARGET_FILE:caracal>)
    endif()
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n ${T_NP} ${envargs} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    TIMEOUT 300)
endfunction()
