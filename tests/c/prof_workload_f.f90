! The same known workload as prof_workload.c, from Fortran (mpif.h-style bindings via
! `use mpi`), so the profiler's Fortran entry points are checked with the same numbers.
program prof_workload_f
  use mpi
  implicit none
  integer, parameter :: k = 3
  integer :: r, n, p, i, j, ierr, nr
  integer :: ibuf(25), rbuf(25)
  double precision :: dsend(50, 0:63), drecv(50, 0:63)
  integer :: rq(128)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  ibuf = 0
  dsend = 0d0
  nr = 0

  do p = 0, n - 1
    do j = 1, k
      if (p /= r) call MPI_Send(ibuf, 25, MPI_INTEGER, p, 1, MPI_COMM_WORLD, ierr)
    end do
  end do
  do p = 0, n - 1
    do j = 1, k
      if (p /= r) call MPI_Recv(rbuf, 25, MPI_INTEGER, p, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end do
  end do
  call MPI_Send(ibuf, 25, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD, ierr)

  do p = 0, n - 1
    if (p /= r) then
      nr = nr + 1
      call MPI_Irecv(drecv(1, p), 50, MPI_DOUBLE_PRECISION, p, 2, MPI_COMM_WORLD, rq(nr), ierr)
    end if
  end do
  do p = 0, n - 1
    if (p /= r) then
      nr = nr + 1
      call MPI_Isend(dsend(1, p), 50, MPI_DOUBLE_PRECISION, p, 2, MPI_COMM_WORLD, rq(nr), ierr)
    end if
  end do
  call MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE, ierr)

  do i = 1, 2
    call MPI_Sendrecv(ibuf, 10, MPI_INTEGER, mod(r + 1, n), 3, rbuf, 10, MPI_INTEGER, mod(r + n - 1, n), 3, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end do

  do i = 0, 4
    call MPI_Bcast(dsend, 8, MPI_DOUBLE_PRECISION, mod(i, n), MPI_COMM_WORLD, ierr) ! SITE:bcast
  end do

  do i = 1, 2
    call MPI_Allreduce(ibuf, rbuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do

  call MPI_Pcontrol(0)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(ibuf, rbuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Sendrecv(ibuf, 10, MPI_INTEGER, mod(r + 1, n), 4, rbuf, 10, MPI_INTEGER, mod(r + n - 1, n), 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Pcontrol(1)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program prof_workload_f
