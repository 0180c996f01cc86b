# The 2.5D examples (examples/mm25d.c, lu25d.c) check their own result: mm25d equality
# with a serial product (integer entries, exact), lu25d |A(perm,:) - LU| within n eps of
# |L||U|. Every valid replication factor c at 1, 2, 4 and 8 ranks (p/c a square), odd n
# and a panel width that does not divide n, so blocks are uneven; half the runs with
# libcaracal preloaded (Caracal's collectives on the Cartesian sub-communicators).
# MPICH busy-polls when oversubscribed: sizes stay small.
if(TARGET mm25d AND TARGET lu25d)
  foreach(cfg 1:1 2:2 4:1 4:4 8:2 8:8)
    string(REPLACE ":" ";" _pc ${cfg})
    list(GET _pc 0 _np)
    list(GET _pc 1 _c)
    set(_pre)
    if(_c GREATER 1)
      set(_pre PRELOAD)
    endif()
    caracal_mpi_test(NAME example_mm25d_np${_np}_c${_c} NP ${_np} ${_pre}
                     COMMAND $<TARGET_FILE:mm25d> -n 13 -c ${_c} -b 3)
    caracal_mpi_test(NAME example_lu25d_np${_np}_c${_c} NP ${_np} ${_pre}
                     COMMAND $<TARGET_FILE:lu25d> -n 23 -c ${_c} -b 4)
  endforeach()
  foreach(cfg 4:1 8:2)
    string(REPLACE ":" ";" _pc ${cfg})
    list(GET _pc 0 _np)
    list(GET _pc 1 _c)
    caracal_mpi_test(NAME example_lu25d_partial_np${_np}_c${_c} NP ${_np}
                     COMMAND $<TARGET_FILE:lu25d> -n 21 -c ${_c} -b 3 -P partial)
  endforeach()
  # bad grid: one line, exit status 2 (checked by the message; ctest ignores the status here)
  caracal_mpi_test(NAME example_mm25d_bad_grid NP 4 COMMAND $<TARGET_FILE:mm25d> -c 2)
  set_tests_properties(example_mm25d_bad_grid PROPERTIES PASS_REGULAR_EXPRESSION "is not a square")
endif()

# ScaLAPACK's PDGETRF (examples/pdgetrf.c, built when Debian's ScaLAPACK for this MPI is
# installed): its solve's scaled residual below 16, on a 2x2 grid with Caracal preloaded
# (BLACS's collectives and point-to-point go through it) and a 1x3 grid without.
if(TARGET pdgetrf)
  caracal_mpi_test(NAME example_pdgetrf_np4 NP 4 PRELOAD COMMAND $<TARGET_FILE:pdgetrf> -n 37 -b 4)
  caracal_mpi_test(NAME example_pdgetrf_np3 NP 3 COMMAND $<TARGET_FILE:pdgetrf> -n 29 -b 5)
  set_tests_properties(example_pdgetrf_np4 example_pdgetrf_np3 PROPERTIES PASS_REGULAR_EXPRESSION "check=ok")
endif()
