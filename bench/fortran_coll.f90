! fortran_coll: Fortran collectives through Caracal vs the native library, Open MPI only.
!
!   mpiexec -n 2 -x LD_PRELOAD=build/lib/libcaracal.so build/bin/fortran_coll [rounds]
!
! Open MPI's PMPI_* Fortran entries are its native code (Caracal exports only the MPI_*
! names), so one run can interleave both: each round times ITERS back-to-back calls of
! MPI_X (Caracal's Fortran entry, then its algorithm) and of PMPI_X, and the ratio of
! the round is Caracal time / native time. Rank 0 prints one JSON line per case with the
! median ratio over the rounds and the median native microseconds per call. (On MPICH the
! PMPI_* Fortran entries call the C MPI_* functions, i.e. Caracal again: not comparable.)
program fortran_coll
  implicit none
  include 'mpif.h'
  integer, parameter :: iters = 2000, maxrounds = 99
  integer :: rounds, rank, ierr, c
  character(len=16) :: arg
  double precision :: a(1024), b(1024)
  integer :: counts(3) = [1, 128, 1024]

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  rounds = 15
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *, iostat=ierr) rounds
    if (ierr /= 0 .or. rounds < 1 .or. rounds > maxrounds) then
      if (rank == 0) print '(a)', 'fortran_coll: rounds must be 1-99'
      call MPI_FINALIZE(ierr)
      stop 2
    end if
  end if
  a = 1d0
  call run('barrier', 0, 0)
  do c = 1, 3
    call run('allreduce', 1, counts(c))
  end do
  do c = 1, 3
    call run('bcast', 2, counts(c))
  end do
  call MPI_FINALIZE(ierr)

contains

  ! kind 0 barrier, 1 allreduce (double precision sum), 2 bcast from rank 0
  subroutine run(name, kind, n)
    character(*), intent(in) :: name
    integer, intent(in) :: kind, n
    double precision :: tc, tn, ratio(maxrounds), native(maxrounds), t0
    integer :: r, i
    do r = 1, rounds
      call PMPI_BARRIER(MPI_COMM_WORLD, ierr)
      t0 = MPI_WTIME()
      do i = 1, iters
        select case (kind)
        case (0)
          call MPI_BARRIER(MPI_COMM_WORLD, ierr)
        case (1)
          call MPI_ALLREDUCE(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
        case default
          call MPI_BCAST(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
        end select
      end do
      tc = MPI_WTIME() - t0
      call PMPI_BARRIER(MPI_COMM_WORLD, ierr)
      t0 = MPI_WTIME()
      do i = 1, iters
        select case (kind)
        case (0)
          call PMPI_BARRIER(MPI_COMM_WORLD, ierr)
        case (1)
          call PMPI_ALLREDUCE(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
        case default
          call PMPI_BCAST(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
        end select
      end do
      tn = MPI_WTIME() - t0
      ratio(r) = tc / tn
      native(r) = tn / iters * 1d6
    end do
    if (rank == 0) print '(3a,i0,5a,i0,a)', '{"collective": "', name, '", "bytes": ', 8 * n, &
      ', "ratio": ', num(median(ratio(1:rounds))), ', "native_us": ', num(median(native(1:rounds))), &
      ', "rounds": ', rounds, '}'
  end subroutine run

  ! a JSON number (Fortran's f0.3 drops the leading zero)
  function num(x) result(s)
    double precision, intent(in) :: x
    character(len=:), allocatable :: s
    character(len=32) :: buf
    write (buf, '(f0.3)') x
    s = trim(adjustl(buf))
    if (s(1:1) == '.') s = '0' // s
  end function num

  function median(x) result(m)
    double precision, intent(in) :: x(:)
    double precision :: m, s(size(x)), t
    integer :: p, q
    s = x
    do p = 1, size(s)
      do q = p + 1, size(s)
        if (s(q) < s(p)) then
          t = s(p)
          s(p) = s(q)
          s(q) = t
        end if
      end do
    end do
    m = s((size(s) + 1) / 2)
  end function median

end program fortran_coll
