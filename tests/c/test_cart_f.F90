! Caracal's reordering topology constructors from Fortran. Built for mpif.h
! (-DFBIND_MPIF) and mpi_f08 (-DFBIND_F08); run on 4 ranks with CARACAL_TOPOLOGY =
! tests/c/data/topology4-alternating.json (hosts a b a b), where a reordered line of 4 is
! cheaper than the identity.
!   MPI_CART_CREATE(reorder=.true.), a non-periodic line: Caracal must report a cheaper
!     placement (caracal_reorder_last, include/caracal.h); MPI_CART_GET gives back the
!     dims and .FALSE. periods; the ends of MPI_CART_SHIFT are MPI_PROC_NULL.
!   The same line periodic: periods .TRUE., and the shift wraps around.
!   MPI_DIST_GRAPH_CREATE_ADJACENT and MPI_DIST_GRAPH_CREATE (MPI_UNWEIGHTED,
!     reorder=.true.): the graph is unweighted; MPI_GRAPH_CREATE(reorder=.true.): a ring.
! Prints "test_cart_f: N cases passed" and exits 0, or prints each failure and exits 1.
program test_cart_f
#if defined(FBIND_F08)
  use mpi_f08
#endif
  use, intrinsic :: iso_c_binding, only: c_int, c_long_long, c_ptr, c_funptr, c_char, c_null_ptr, &
                                         c_null_char, c_associated, c_f_procpointer
  implicit none
#if defined(FBIND_MPIF)
  include 'mpif.h'
#endif
#if defined(FBIND_F08)
#define HANDLE(kind) type(kind)
#else
#define HANDLE(kind) integer
#endif
  ! caracal_reorder_last() from the preloaded libcaracal (see test_coll_f.F90)
  abstract interface
    function reorder_last_fn(identity_cost, chosen_cost) bind(C)
      import :: c_int, c_long_long
      integer(c_long_long) :: identity_cost, chosen_cost
      integer(c_int) :: reorder_last_fn
    end function reorder_last_fn
  end interface
  interface
    function dlsym(handle, name) bind(C, name="dlsym")
      import :: c_ptr, c_funptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: name(*)
      type(c_funptr) :: dlsym
    end function dlsym
  end interface
  procedure(reorder_last_fn), pointer :: caracal_reorder_last
  type(c_funptr) :: fp
  integer :: rank, size, ierr, failures, cases

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  failures = 0
  cases = 0
  fp = dlsym(c_null_ptr, "caracal_reorder_last" // c_null_char)
  if (.not. c_associated(fp)) then
    print '(a)', 'test_cart_f: caracal_reorder_last not found: run with libcaracal preloaded'
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  call c_f_procpointer(fp, caracal_reorder_last)

  call line(.false.)
  call line(.true.)
  call ring_graph()

  call MPI_ALLREDUCE(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (failures == 0) then
      print '(a, i0, a)', 'test_cart_f: ', cases, ' cases passed'
    else
      print '(a, i0, a)', 'test_cart_f: ', failures, ' failures'
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
      print '(a, i0, 2a)', 'test_cart_f: rank ', rank, ': FAILED ', what
    end if
  end subroutine check

  subroutine line(periodic)
    logical, intent(in) :: periodic
    HANDLE(MPI_Comm) :: cart
    integer :: dims(1), coords(1), me, n, src, dst
    logical :: periods(1)
    integer(c_long_long) :: before, after
    integer(c_int) :: did

    dims(1) = size
    periods(1) = periodic
    call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, periods, .true., cart, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_CART_CREATE ierror')
    did = caracal_reorder_last(before, after)
    if (.not. periodic) call check(did == 1 .and. after < before, 'MPI_CART_CREATE: Caracal did not reorder the line')
    if (did == 1) call check(after <= before, 'MPI_CART_CREATE: placement worse than the identity')
    call MPI_COMM_SIZE(cart, n, ierr)
    call MPI_COMM_RANK(cart, me, ierr)
    call check(n == size, 'MPI_CART_CREATE size')
    dims = 0
    periods = .not. periodic
    call MPI_CART_GET(cart, 1, dims, periods, coords, ierr)
    call check(dims(1) == size .and. (periods(1) .eqv. periodic) .and. coords(1) == me, 'MPI_CART_GET')
    call MPI_CART_SHIFT(cart, 0, 1, src, dst, ierr)
    if (periodic) then
      call check(src == mod(me + n - 1, n) .and. dst == mod(me + 1, n), 'MPI_CART_SHIFT periodic')
    else if (me == 0) then
      call check(src == MPI_PROC_NULL .and. dst == 1, 'MPI_CART_SHIFT first')
    else if (me == n - 1) then
      call check(src == n - 2 .and. dst == MPI_PROC_NULL, 'MPI_CART_SHIFT last')
    end if
    call MPI_COMM_FREE(cart, ierr)
  end subroutine line

  subroutine ring_graph()
    HANDLE(MPI_Comm) :: dg
    integer :: sources(1), dests(1), indeg, outdeg, n
    logical :: weighted

    sources(1) = mod(rank + size - 1, size)
    dests(1) = mod(rank + 1, size)
    call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, sources, MPI_UNWEIGHTED, 1, dests, MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .true., dg, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_DIST_GRAPH_CREATE_ADJACENT ierror')
    call MPI_COMM_SIZE(dg, n, ierr)
    call check(n == size, 'MPI_DIST_GRAPH_CREATE_ADJACENT size')
    weighted = .true.
    call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, indeg, outdeg, weighted, ierr)
    call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT (MPI_UNWEIGHTED)')
    call MPI_COMM_FREE(dg, ierr)

    ! the same ring given edge by edge (each rank its outgoing one)
    sources(1) = rank
    call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, sources, [1], dests, MPI_UNWEIGHTED, MPI_INFO_NULL, .true., dg, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_DIST_GRAPH_CREATE ierror')
    weighted = .true.
    call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, indeg, outdeg, weighted, ierr)
    call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, 'MPI_DIST_GRAPH_CREATE neighbours (MPI_UNWEIGHTED)')
    call MPI_COMM_FREE(dg, ierr)

    ! and as an MPI_GRAPH_CREATE ring: node i's edges are i-1 and i+1
    call graph_ring()
  end subroutine ring_graph

  subroutine graph_ring()
    HANDLE(MPI_Comm) :: g
    integer :: index(size), edges(2 * size), i, nnodes, nedges, nn, me
    do i = 0, size - 1
      index(i + 1) = 2 * (i + 1)
      edges(2 * i + 1) = mod(i + size - 1, size)
      edges(2 * i + 2) = mod(i + 1, size)
    end do
    call MPI_GRAPH_CREATE(MPI_COMM_WORLD, size, index, edges, .true., g, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_GRAPH_CREATE ierror')
    call MPI_GRAPHDIMS_GET(g, nnodes, nedges, ierr)
    call check(nnodes == size .and. nedges == 2 * size, 'MPI_GRAPHDIMS_GET')
    call MPI_COMM_RANK(g, me, ierr)
    call MPI_GRAPH_NEIGHBORS_COUNT(g, me, nn, ierr)
    call check(nn == 2, 'MPI_GRAPH_NEIGHBORS_COUNT')
    call MPI_COMM_FREE(g, ierr)
  end subroutine graph_ring

end program test_cart_f
