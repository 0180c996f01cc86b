# caracal_mpi_test(NAME <name> NP <n> COMMAND <prog> [args...] [PRELOAD] [ENV VAR=VALUE ...]
#                  [BIND <cpus>] [EXPECT_LOG each|only <line>])
#   Runs <prog> under this build's launcher (build-*/caracal-mpiexec, cmake/CaracalMPI.cmake)
#   with <n> ranks. PRELOAD puts libcaracal
#   in LD_PRELOAD of the MPI processes (not of the launcher). ENV entries are
#   passed to every rank.
#   BIND runs each rank through tests/c/bind_rank.sh, bound to its entry of the
#   comma-separated CPU list (one per rank, '-' = unbound).
#   EXPECT_LOG passes only if the run succeeds and every rank printed the log line
#   "caracal[rank]: <line>" (tests/c/expect_log_line.sh; `only`: no other line of that
#   topic); add CARACAL_LOG and CARACAL_LOG_RANKS=all to ENV.
function(caracal_mpi_test)
  cmake_parse_arguments(T "PRELOAD" "NAME;NP;BIND" "COMMAND;ENV;EXPECT_LOG" ${ARGN})
  set(envargs)
  if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
    foreach(e IN LISTS T_ENV)
      list(APPEND envargs -x ${e})
    endforeach()
    if(T_PRELOAD AND NOT T_BIND)
      list(APPEND envargs -x LD_PRELOAD=${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>)
    endif()
  else()
    foreach(e IN LISTS T_ENV)
      string(REPLACE "=" ";" kv "${e}")
      list(GET kv 0 k)
      string(LENGTH "${k}=" klen)
      string(SUBSTRING "${e}" ${klen} -1 v)
      list(APPEND envargs -genv ${k} ${v})
    endforeach()
    if(T_PRELOAD AND NOT T_BIND)
      list(APPEND envargs -genv LD_PRELOAD ${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>)
    endif()
  endif()
  set(wrap)
  if(T_BIND)
    set(preload -)
    if(T_PRELOAD)
      set(preload ${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>)
    endif()
    set(wrap ${PROJECT_SOURCE_DIR}/tests/c/bind_rank.sh ${T_BIND} ${preload})
  endif()
  set(expect)
  if(T_EXPECT_LOG)
    set(expect ${PROJECT_SOURCE_DIR}/tests/c/expect_log_line.sh ${T_EXPECT_LOG})
    list(INSERT expect 2 ${T_NP})
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${expect} ${CARACAL_MPIEXEC} ${CARACAL_MPIEXEC_FLAGS} -n ${T_NP} ${envargs} ${wrap} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    TIMEOUT 300)
endfunction()
