! Persistent requests from Fortran (Ssend_init, Recv_init, Startall, Waitall): a ring of
! 20-byte messages, three rounds; tests/python/test_profiler.py checks the exact numbers.
program prof_persistent_f
  use mpi
  implicit none
  integer :: r, n, ierr, rq(2), x(5), y(5), i
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  x = 0
  call MPI_Ssend_init(x, 5, MPI_INTEGER, mod(r + 1, n), 7, MPI_COMM_WORLD, rq(1), ierr)
  call MPI_Recv_init(y, 5, MPI_INTEGER, mod(r + n - 1, n), 7, MPI_COMM_WORLD, rq(2), ierr)
  do i = 1, 3
    call MPI_Startall(2, rq, ierr)
    call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Request_free(rq(1), ierr)
  call MPI_Request_free(rq(2), ierr)
  call MPI_Finalize(ierr)
end program prof_persistent_f
