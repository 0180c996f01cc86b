! MPI-4 persistent collectives from Fortran (MPICH 4: MPI_ALLREDUCE_INIT, MPI_BCAST_INIT),
! through the converting Fortran entries gen_wrappers.py generates for the *_init calls and
! MPI_START, MPI_STARTALL, MPI_REQUEST_FREE. Built per binding (-DFBIND_MPIF, -DFBIND_MPI,
! -DFBIND_F08). 50 starts of a persistent allreduce with the input changed before each,
! then 20 MPI_STARTALLs of it with a persistent bcast, every result exact, the handles
! valid after each completion and MPI_REQUEST_NULL after MPI_REQUEST_FREE, and
! caracal_coll_persistent_starts() grown by exactly 90 (every start ran Caracal's algorithm;
! a start that missed Caracal's MPI_START would never complete). Exits 1 on a failure.
program test_persist_f
#if defined(FBIND_F08)
  use mpi_f08
#elif defined(FBIND_MPI)
  use mpi
#endif
  use, intrinsic :: iso_c_binding, only: c_long, c_ptr, c_funptr, c_char, c_null_ptr, c_null_char, &
                                         c_associated, c_f_procpointer
  implicit none
#if defined(FBIND_MPIF)
  include 'mpif.h'
#endif
#if defined(FBIND_F08)
  type(MPI_Request) :: reqs(2)
#else
  integer :: reqs(2)
#endif
  abstract interface
    function count_fn() bind(C)
      import :: c_long
      integer(c_long) :: count_fn
    end function count_fn
  end interface
  interface
    function dlsym(handle, name) bind(C, name="dlsym")
      import :: c_ptr, c_funptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: name(*)
      type(c_funptr) :: dlsym
    end function dlsym
  end interface
  procedure(count_fn), pointer :: starts
  type(c_funptr) :: fp
  integer, parameter :: n = 100
  integer :: a(n), b(n), c(n), rank, size, ierr, failures, it, i, r, expect, total
  integer(c_long) :: before

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  fp = dlsym(c_null_ptr, "caracal_coll_persistent_starts" // c_null_char)
  if (.not. c_associated(fp)) then
    print *, "caracal_coll_persistent_starts not found (run with LD_PRELOAD=libcaracal.so)"
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  call c_f_procpointer(fp, starts)
  failures = 0
  before = starts()

  call MPI_ALLREDUCE_INIT(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(1), ierr)
  do it = 1, 50
    do i = 1, n
      a(i) = rank * 1000 + i + 7 * it
    end do
    b = -1
    call MPI_START(reqs(1), ierr)
    call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
    call check_sum(it)
  end do

  call MPI_BCAST_INIT(c, n, MPI_INTEGER, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(2), ierr)
  do it = 1, 20
    do i = 1, n
      a(i) = rank * 1000 + i + 7 * it
      c(i) = -1
      if (rank == size - 1) c(i) = i * it
    end do
    b = -1
    call MPI_STARTALL(2, reqs, ierr)
    call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check_sum(it)
    do i = 1, n
      if (c(i) /= i * it) then
        failures = failures + 1
        exit
      end if
    end do
  end do
  if (reqs(1) == MPI_REQUEST_NULL .or. reqs(2) == MPI_REQUEST_NULL) failures = failures + 1
  call MPI_REQUEST_FREE(reqs(1), ierr)
  call MPI_REQUEST_FREE(reqs(2), ierr)
  if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) failures = failures + 1
  if (starts() - before /= 90) then
    print *, "rank", rank, ": persistent starts through Caracal:", starts() - before, "expected 90"
    failures = failures + 1
  end if

  call MPI_ALLREDUCE(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print *, "test_persist_f: failures", total
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1

contains
  subroutine check_sum(it)
    integer, intent(in) :: it
    do i = 1, n
      expect = 0
      do r = 0, size - 1
        expect = expect + r * 1000 + i + 7 * it
      end do
      if (b(i) /= expect) then
        print *, "rank", rank, ": start", it, "b(", i, ") =", b(i), "expected", expect
        failures = failures + 1
        return
      end if
    end do
  end subroutine check_sum
end program test_persist_f
