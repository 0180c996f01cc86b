# caracal_mpi_test(NAME <name> NP <n> COMMAND <prog> [args...] [PRELOAD] [ENV VAR=VALUE ...]
#                  [BIND <cpus>] [EXPECT_LOG each|only <line>])
#   Runs <prog> under this build's launcher (build-*/caracal-mpiexec, cmake/CaracalMPI.cmake)
#   with <n> ranks. PRELOAD puts libcaracal
#   in LD_PRELOAD of the MPI processes (not of the launcher). ENV entries are
#   passed to every rank.
#   BIND runs each rank through tests/c/bind_rank.sh, bound to its entry of the
#   comma-separated CPU list (one per rank, '-' = unbound); a library that pins ranks
#   itself is told not to (CARACAL_MPI_UNPINNED_ENV: Intel MPI's I_MPI_PIN=0).
#   EXPECT_LOG passes only if the run succeeds and every rank printed the log line
#   "caracal[rank]: <line>" (tests/c/expect_log_line.sh; `only`: no other line of that
#   topic); add CARACAL_LOG and CARACAL_LOG_RANKS=all to ENV. Every such test is labelled
#   np<n> (ctest -L np4, -LE 'np([5-9]|[1-9][0-9])').
# caracal_launcher_env(<out-var> <preload> [VAR=VALUE ...]): the launcher arguments that give
#   every rank each VAR=VALUE, then LD_PRELOAD=<preload> unless <preload> is empty: `-x` for
#   Open MPI's mpiexec, `-genv VAR VALUE` for the MPICH family's (MPICH, Intel MPI).
function(caracal_launcher_env out preload)
  set(args)
  set(entries ${ARGN})
  if(preload)
    list(APPEND entries "LD_PRELOAD=${preload}")
  endif()
  foreach(e IN LISTS entries)
    if(CARACAL_MPI_FAMILY STREQUAL "openmpi")
      list(APPEND args -x ${e})
    else()
      string(REPLACE "=" ";" kv "${e}")
      list(GET kv 0 k)
      string(LENGTH "${k}=" klen)
      string(SUBSTRING "${e}" ${klen} -1 v)
      list(APPEND args -genv ${k} ${v})
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

function(caracal_mpi_test)
  cmake_parse_arguments(T "PRELOAD" "NAME;NP;BIND" "COMMAND;ENV;EXPECT_LOG" ${ARGN})
  set(preload)
  if(T_PRELOAD AND NOT T_BIND)
    set(preload ${CARACAL_PRELOAD_PREFIX}$<TARGET_FILE:caracal>)
  endif()
  if(T_BIND)
    # the test's binding is the only one: a library that pins ranks itself (Intel MPI) is told
    # not to (python/caracal/mpilibs.py, unpinned_env)
    list(APPEND T_ENV ${CARACAL_MPI_UNPINNED_ENV})
  endif()
  caracal_launcher_env(envargs "${preload}" ${T_ENV})
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
  # LABELS np<n>: the number of ranks, by which CI can choose (ctest -L / -LE)
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    TIMEOUT 300 LABELS np${T_NP})
endfunction()
