! Caracal's collectives and requests from Fortran. Built three times (tests/c/CMakeLists.txt):
! -DFBIND_MPIF (include 'mpif.h'), -DFBIND_MPI (use mpi), -DFBIND_F08 (use mpi_f08).
!
! Every case calls the Fortran binding with inputs whose result is known exactly
! (integers, and doubles holding small multiples of 1/2, so every sum is exact), checks
! the result, and checks that Caracal's own algorithm ran the call: caracal_coll_count()
! (include/caracal.h) must grow by one per collective. Run with CARACAL_<COLL> rules that
! send every size to Caracal. Cases: barrier, bcast, reduce, allreduce (integer, double
! precision, MAX, MPI_IN_PLACE, a strided vector type whose gaps must stay untouched,
! MPI_BOTTOM with an absolute-address type), and the nonblocking forms completed with
! MPI_WAIT, MPI_TEST, MPI_WAITALL (mixed with native point-to-point requests),
! MPI_WAITANY, MPI_WAITSOME and MPI_TESTALL. Prints "test_coll_f: N cases passed" and
! exits 0, or prints each failure and exits 1.
program test_coll_f
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
#define HANDLE(kind) type(kind)
#define STATUS_ONE type(MPI_Status) :: st
#define STATUS_ARRAY(n) type(MPI_Status) :: sts(n)
#else
#define HANDLE(kind) integer
#define STATUS_ONE integer :: st(MPI_STATUS_SIZE)
#define STATUS_ARRAY(n) integer :: sts(MPI_STATUS_SIZE, n)
#endif
  ! caracal_coll_count() from the preloaded libcaracal, found with dlsym (RTLD_DEFAULT is
  ! NULL in glibc): linking libcaracal would let the linker drop the MPI Fortran library
  ! whose entries libcaracal forwards to.
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
  procedure(count_fn), pointer :: caracal_coll_count
  type(c_funptr) :: fp
  integer, parameter :: n = 1000, nsmall = 7
  integer :: rank, size, ierr, failures, cases, root, i
  integer(c_long) :: ran

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  failures = 0
  cases = 0
  fp = dlsym(c_null_ptr, "caracal_coll_count" // c_null_char)
  if (.not. c_associated(fp)) then
    print '(a)', 'test_coll_f: caracal_coll_count not found: run with libcaracal preloaded'
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  call c_f_procpointer(fp, caracal_coll_count)

  call blocking()
  call nonblocking()
  call derived()

  call MPI_ALLREDUCE(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (failures == 0) then
      print '(a, i0, a)', 'test_coll_f: ', cases, ' cases passed'
    else
      print '(a, i0, a)', 'test_coll_f: ', failures, ' failures'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (failures /= 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    cases = cases + 1
    if (.not. ok) then
      failures = failures + 1
      print '(a, i0, 2a)', 'test_coll_f: rank ', rank, ': FAILED ', what
    end if
  end subroutine check

  ! Caracal ran exactly `expected` collectives since the last call (then resets the mark)
  subroutine check_ran(expected, what)
    integer, intent(in) :: expected
    character(*), intent(in) :: what
    integer(c_long) :: now
    now = caracal_coll_count()
    call check(now - ran == expected, what // ': Caracal did not run it')
    ran = now
  end subroutine check_ran

  subroutine blocking()
    integer :: ib(nsmall), ir(nsmall), iexp(nsmall)
    double precision :: db(n), dr(n)
    HANDLE(MPI_Comm) :: comm
#if defined(FBIND_F08)
    type(MPI_Request) :: rq_noerr
#endif

    ran = caracal_coll_count()
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_BARRIER ierror')
    call check_ran(1, 'MPI_BARRIER')
#if defined(FBIND_F08)
    call MPI_Barrier(MPI_COMM_WORLD) ! IERROR is optional in mpi_f08: the entry gets NULL
    call check_ran(1, 'MPI_Barrier without ierror')
    call MPI_Iallreduce(MPI_IN_PLACE, ierr, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, rq_noerr)
    call MPI_Wait(rq_noerr, MPI_STATUS_IGNORE)
    call check_ran(1, 'MPI_Iallreduce without ierror')
#endif

    do root = 0, size - 1
      ib = -1
      if (rank == root) ib = [(root * 100 + i, i = 1, nsmall)]
      call MPI_BCAST(ib, nsmall, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
      call check(all(ib == [(root * 100 + i, i = 1, nsmall)]) .and. ierr == MPI_SUCCESS, 'MPI_BCAST integer')
      call check_ran(1, 'MPI_BCAST integer')
    end do
    db = -1d0
    root = size - 1
    if (rank == root) db = [(i * 0.5d0, i = 1, n)]
    call MPI_BCAST(db, n, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD, ierr)
    call check(all(db == [(i * 0.5d0, i = 1, n)]), 'MPI_BCAST double precision')
    call check_ran(1, 'MPI_BCAST double precision')

    ! reduce: integer sum at every root, double precision max, MPI_IN_PLACE at the root
    ib = [(rank * 3 + i, i = 1, nsmall)]
    iexp = [(3 * (size * (size - 1) / 2) + size * i, i = 1, nsmall)]
    do root = 0, size - 1
      ir = -1
      call MPI_REDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
      if (rank == root) call check(all(ir == iexp), 'MPI_REDUCE integer sum')
      if (rank /= root) call check(all(ir == -1), 'MPI_REDUCE touched a non-root receive buffer')
      call check_ran(1, 'MPI_REDUCE integer')
    end do
    db = [((rank + 1) * 0.5d0 + i, i = 1, n)]
    dr = 0d0
    call MPI_REDUCE(db, dr, n, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(all(dr == [(size * 0.5d0 + i, i = 1, n)]), 'MPI_REDUCE double precision max')
    call check_ran(1, 'MPI_REDUCE double precision')
    root = size - 1
    ir = ib
    if (rank == root) then
      call MPI_REDUCE(MPI_IN_PLACE, ir, nsmall, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
      call check(all(ir == iexp), 'MPI_REDUCE MPI_IN_PLACE')
    else
      call MPI_REDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    end if
    call check_ran(1, 'MPI_REDUCE MPI_IN_PLACE')

    ! allreduce: integer, double precision, MPI_IN_PLACE, a duplicated communicator
    ir = -1
    call MPI_ALLREDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(ir == iexp), 'MPI_ALLREDUCE integer sum')
    call check_ran(1, 'MPI_ALLREDUCE integer')
    db = [(rank * 0.5d0 + i, i = 1, n)]
    dr = -1d0
    call MPI_ALLREDUCE(db, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(dr == [(0.25d0 * size * (size - 1) + size * i, i = 1, n)]), 'MPI_ALLREDUCE double precision sum')
    call check_ran(1, 'MPI_ALLREDUCE double precision')
    call MPI_ALLREDUCE(MPI_IN_PLACE, db, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(db == dr), 'MPI_ALLREDUCE MPI_IN_PLACE')
    call check_ran(1, 'MPI_ALLREDUCE MPI_IN_PLACE')
    call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
    ir = ib
    call MPI_ALLREDUCE(MPI_IN_PLACE, ir, nsmall, MPI_INTEGER, MPI_MAX, comm, ierr)
    call check(all(ir == [((size - 1) * 3 + i, i = 1, nsmall)]), 'MPI_ALLREDUCE MAX in place on a dup')
    call check_ran(1, 'MPI_ALLREDUCE dup')
    call MPI_COMM_FREE(comm, ierr)
  end subroutine blocking

  subroutine nonblocking()
    integer, parameter :: nr = 6
    integer :: ib(nsmall), ir(nsmall), iexp(nsmall), ir2(nsmall), p2p_in, p2p_out, idx, outcount, k
    integer :: indices(nr), ndone
    double precision :: db(n), dr(n)
    HANDLE(MPI_Request) :: rq, rqs(nr)
    logical :: flag
    STATUS_ONE
    STATUS_ARRAY(nr)

    ! MPI_IBARRIER + MPI_WAIT: the request comes back MPI_REQUEST_NULL
    ran = caracal_coll_count()
    call MPI_IBARRIER(MPI_COMM_WORLD, rq, ierr)
    call MPI_WAIT(rq, st, ierr)
    call check(rq == MPI_REQUEST_NULL .and. ierr == MPI_SUCCESS, 'MPI_IBARRIER + MPI_WAIT')
    call check_ran(1, 'MPI_IBARRIER')

    ! MPI_IBCAST completed by polling MPI_TEST
    db = -1d0
    if (rank == 0) db = [(i * 0.5d0, i = 1, n)]
    call MPI_IBCAST(db, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, rq, ierr)
    flag = .false.
    k = 0
    do while (.not. flag)
      call MPI_TEST(rq, flag, MPI_STATUS_IGNORE, ierr)
      k = k + 1
    end do
    call check(rq == MPI_REQUEST_NULL, 'MPI_TEST left the request')
    call check(all(db == [(i * 0.5d0, i = 1, n)]), 'MPI_IBCAST + MPI_TEST')
    call check_ran(1, 'MPI_IBCAST')

    ! two collectives and a native ring exchange in one MPI_WAITALL with statuses
    ib = [(rank * 3 + i, i = 1, nsmall)]
    iexp = [(3 * (size * (size - 1) / 2) + size * i, i = 1, nsmall)]
    db = [(rank * 0.5d0 + i, i = 1, n)]
    ir = -1
    dr = -1d0
    p2p_out = rank
    p2p_in = -1
    call MPI_IALLREDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rqs(1), ierr)
    call MPI_IRECV(p2p_in, 1, MPI_INTEGER, mod(rank + size - 1, size), 7, MPI_COMM_WORLD, rqs(2), ierr)
    call MPI_IREDUCE(db, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, rqs(3), ierr)
    call MPI_ISEND(p2p_out, 1, MPI_INTEGER, mod(rank + 1, size), 7, MPI_COMM_WORLD, rqs(4), ierr)
    call MPI_WAITALL(4, rqs, sts, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_WAITALL ierror')
    call check(all(ir == iexp), 'MPI_IALLREDUCE in MPI_WAITALL')
    if (rank == 0) call check(all(dr == [(0.25d0 * size * (size - 1) + size * i, i = 1, n)]), &
                              'MPI_IREDUCE in MPI_WAITALL')
    call check(p2p_in == mod(rank + size - 1, size), 'MPI_IRECV in MPI_WAITALL')
#if defined(FBIND_F08)
    call check(sts(2)%MPI_SOURCE == mod(rank + size - 1, size) .and. sts(2)%MPI_TAG == 7, 'MPI_WAITALL status')
#else
    call check(sts(MPI_SOURCE, 2) == mod(rank + size - 1, size) .and. sts(MPI_TAG, 2) == 7, 'MPI_WAITALL status')
#endif
    call check(all(rqs(1:4) == MPI_REQUEST_NULL), 'MPI_WAITALL left requests')
    call check_ran(2, 'MPI_IALLREDUCE + MPI_IREDUCE')

    ! MPI_WAITANY once per request: each 1-based index once. (Not checked: MPI_UNDEFINED
    ! once none is active; MPICH 4.0's own mpif.h MPI_WAITANY returns MPI_UNDEFINED + 1.)
    ir = -1
    ir2 = -1
    call MPI_IALLREDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, rqs(1), ierr)
    call MPI_IBARRIER(MPI_COMM_WORLD, rqs(2), ierr)
    call MPI_IALLREDUCE(MPI_IN_PLACE, ir2, nsmall, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, rqs(3), ierr)
    indices = 0
    do k = 1, 3
      call MPI_WAITANY(3, rqs, idx, st, ierr)
      call check(idx >= 1 .and. idx <= 3, 'MPI_WAITANY index range')
      if (idx >= 1 .and. idx <= 3) indices(idx) = indices(idx) + 1
    end do
    call check(all(indices(1:3) == 1) .and. all(rqs(1:3) == MPI_REQUEST_NULL), 'MPI_WAITANY completions')
    call check(all(ir == [((size - 1) * 3 + i, i = 1, nsmall)]), 'MPI_IALLREDUCE MAX (MPI_WAITANY)')
    call check(all(ir2 == -1), 'MPI_IALLREDUCE MPI_IN_PLACE MIN (MPI_WAITANY)')
    call check_ran(3, 'MPI_WAITANY collectives')

    ! MPI_WAITSOME, then MPI_TESTALL polling
    ir = -1
    ir2 = ib
    call MPI_IBCAST(ib, nsmall, MPI_INTEGER, size - 1, MPI_COMM_WORLD, rqs(1), ierr)
    call MPI_IALLREDUCE(ir2, ir, nsmall, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rqs(2), ierr)
    ndone = 0
    do while (ndone < 2)
      call MPI_WAITSOME(2, rqs, outcount, indices, sts, ierr)
      call check(outcount >= 1 .and. all(indices(1:outcount) >= 1) .and. all(indices(1:outcount) <= 2), &
                 'MPI_WAITSOME indices')
      ndone = ndone + outcount
    end do
    call check(all(ib == [((size - 1) * 3 + i, i = 1, nsmall)]), 'MPI_IBCAST (MPI_WAITSOME)')
    call check(all(ir == iexp), 'MPI_IALLREDUCE (MPI_WAITSOME)')
    call check_ran(2, 'MPI_WAITSOME collectives')
    ir = -1
    call MPI_IBARRIER(MPI_COMM_WORLD, rqs(1), ierr)
    call MPI_IALLREDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rqs(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_TESTALL(2, rqs, flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call check(all(ir == [(3 * (size - 1) * size + size * i, i = 1, nsmall)]), 'MPI_IALLREDUCE (MPI_TESTALL)')
    call check(all(rqs(1:2) == MPI_REQUEST_NULL), 'MPI_TESTALL left requests')
    call check_ran(2, 'MPI_TESTALL collectives')

    ! MPI_REQUEST_GET_STATUS (request unchanged), then MPI_TESTANY and MPI_TESTSOME polling
    ir = -1
    call MPI_IALLREDUCE(ib, ir, nsmall, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rqs(1), ierr)
    call MPI_IBARRIER(MPI_COMM_WORLD, rqs(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_REQUEST_GET_STATUS(rqs(1), flag, st, ierr)
    end do
    call check(rqs(1) /= MPI_REQUEST_NULL, 'MPI_REQUEST_GET_STATUS freed the request')
    indices = 0
    do while (any(rqs(1:2) /= MPI_REQUEST_NULL))
      call MPI_TESTANY(2, rqs, idx, flag, MPI_STATUS_IGNORE, ierr)
      if (flag .and. idx /= MPI_UNDEFINED) then
        call check(idx >= 1 .and. idx <= 2, 'MPI_TESTANY index range')
        if (idx >= 1 .and. idx <= 2) indices(idx) = indices(idx) + 1
      end if
    end do
    call check(all(indices(1:2) == 1), 'MPI_TESTANY completions')
    call check(all(ir == [(3 * (size - 1) * size + size * i, i = 1, nsmall)]), 'MPI_IALLREDUCE (MPI_TESTANY)')
    call check_ran(2, 'MPI_TESTANY collectives')
    ir2 = -1
    if (rank == 0) ir2 = [(i * 11, i = 1, nsmall)]
    call MPI_IBCAST(ir2, nsmall, MPI_INTEGER, 0, MPI_COMM_WORLD, rqs(1), ierr)
    call MPI_IBARRIER(MPI_COMM_WORLD, rqs(2), ierr)
    ndone = 0
    do while (ndone < 2)
      call MPI_TESTSOME(2, rqs, outcount, indices, sts, ierr)
      if (outcount == MPI_UNDEFINED) then
        call check(.false., 'MPI_TESTSOME: MPI_UNDEFINED with active requests')
        exit
      end if
      if (outcount > 0) call check(all(indices(1:outcount) >= 1 .and. indices(1:outcount) <= 2), &
                                   'MPI_TESTSOME indices')
      ndone = ndone + outcount
    end do
    call check(all(ir2 == [(i * 11, i = 1, nsmall)]), 'MPI_IBCAST (MPI_TESTSOME)')
    call check_ran(2, 'MPI_TESTSOME collectives')
  end subroutine nonblocking

  ! Fortran datatypes through Caracal's packing: a strided vector (the gaps must be left
  ! alone) and MPI_BOTTOM with absolute addresses
  subroutine derived()
    integer, parameter :: m = 300
    double precision :: vs(2, m), vr(2, m)
    integer :: blen(1)
    integer, volatile :: ib(nsmall) ! changed through MPI_BOTTOM, out of the compiler's sight
    integer(kind=MPI_ADDRESS_KIND) :: disp(1)
    HANDLE(MPI_Datatype) :: vec, absolute
    HANDLE(MPI_Op) :: vsum
#if defined(FBIND_F08)
    procedure(MPI_User_function) :: vector_sum
#else
    external :: vector_sum
#endif

    ! predefined operators take predefined datatypes only (Open MPI enforces it): a user
    ! operator sums the vector
    call MPI_TYPE_VECTOR(m, 1, 2, MPI_DOUBLE_PRECISION, vec, ierr)
    call MPI_TYPE_COMMIT(vec, ierr)
    call MPI_OP_CREATE(vector_sum, .true., vsum, ierr)
    vs(1, :) = [(rank + i * 0.5d0, i = 1, m)]
    vs(2, :) = -7d0
    vr = -9d0
    ran = caracal_coll_count()
    call MPI_ALLREDUCE(vs, vr, 1, vec, vsum, MPI_COMM_WORLD, ierr)
    call check(all(vr(1, :) == [(0.5d0 * size * (size - 1) + size * i * 0.5d0, i = 1, m)]), &
               'MPI_ALLREDUCE strided vector')
    call check(all(vr(2, :) == -9d0), 'MPI_ALLREDUCE strided vector: gaps written')
    call check_ran(1, 'MPI_ALLREDUCE strided vector')
    vr(1, :) = -1d0
    if (rank == 0) vr(1, :) = [(i * 2d0, i = 1, m)]
    call MPI_BCAST(vr, 1, vec, 0, MPI_COMM_WORLD, ierr)
    call check(all(vr(1, :) == [(i * 2d0, i = 1, m)]) .and. all(vr(2, :) == -9d0), 'MPI_BCAST strided vector')
    call check_ran(1, 'MPI_BCAST strided vector')
    call MPI_TYPE_FREE(vec, ierr)
    call MPI_OP_FREE(vsum, ierr)

    ib = -1
    if (rank == 0) ib = [(40 + i, i = 1, nsmall)]
    call MPI_GET_ADDRESS(ib, disp(1), ierr)
    blen(1) = nsmall
    call MPI_TYPE_CREATE_HINDEXED(1, blen, disp, MPI_INTEGER, absolute, ierr)
    call MPI_TYPE_COMMIT(absolute, ierr)
    call MPI_BCAST(MPI_BOTTOM, 1, absolute, 0, MPI_COMM_WORLD, ierr)
    call check(all(ib == [(40 + i, i = 1, nsmall)]), 'MPI_BCAST MPI_BOTTOM')
    call check_ran(1, 'MPI_BCAST MPI_BOTTOM')
    call MPI_TYPE_FREE(absolute, ierr)
  end subroutine derived

end program test_coll_f

! The user operator of derived(): len elements of MPI_TYPE_VECTOR(300, 1, 2, double
! precision) (extent 599 doubles), element-wise sums of the 300 doubles each holds.
#if defined(FBIND_F08)
subroutine vector_sum(invec, inoutvec, len, datatype)
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  type(c_ptr), value :: invec, inoutvec
  integer :: len
  type(MPI_Datatype) :: datatype
  double precision, pointer :: a(:), b(:)
  call c_f_pointer(invec, a, [599 * len])
  call c_f_pointer(inoutvec, b, [599 * len])
  call add(a, b, len)
end subroutine vector_sum
#else
subroutine vector_sum(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  double precision :: invec(599 * len), inoutvec(599 * len)
  call add(invec, inoutvec, len)
end subroutine vector_sum
#endif

subroutine add(a, b, len)
  implicit none
  integer :: len, k, j
  double precision :: a(599 * len), b(599 * len)
  do k = 0, len - 1
    do j = 0, 299
      b(k * 599 + 2 * j + 1) = b(k * 599 + 2 * j + 1) + a(k * 599 + 2 * j + 1)
    end do
  end do
end subroutine add
