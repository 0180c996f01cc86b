/* What differs when the MPI library is SimGrid SMPI (`caracal simulate`, docs/simulate.md).
 *
 * Under SMPI every simulated rank is a coroutine of one host thread: a rank runs until it
 * makes a blocking MPI call, and simulated time moves only in MPI calls. Three things follow,
 * and this header (with core/under_smpi.c) is the only place that knows them:
 *  - waiting: Caracal's wait loop (test, spin, yield, nap) would spin forever (the clock stands
 *    still and no other rank runs) or, with SMPI's time injected into a failed MPI_Test, move
 *    the clock by made-up amounts. So the point-to-point tests of Caracal's tasks remember the
 *    requests they found incomplete, and a wait blocks in PMPI_Waitany on all of them: the rank
 *    resumes at the exact simulated time the first one completes, and since every pending
 *    request of the sweep is in the set, no order of completions can deadlock it.
 *  - shared memory: ranks of one simulated host are not processes sharing pages; the shm
 *    primitives cannot run (their flags would be waited on by spinning), so node levels run
 *    point-to-point.
 *  - building subgroups: SMPI 3.32's MPI_Comm_split on a large communicator is quadratic in
 *    its size (3 minutes at 4,096 ranks): sbgp/group_comm.c creates each level's communicators
 *    with MPI_Comm_create_group from the member list every rank already knows.
 * The hwloc socket level is skipped too: a simulated host has no packages, only the real one. */
#ifndef CARACAL_CORE_SMPI_H
#define CARACAL_CORE_SMPI_H
#include <mpi.h>
/* SMPI's mpi.h (through smpi/smpi.h) defines SMPI_SHARED_MALLOC; no real library's does */
#ifdef SMPI_SHARED_MALLOC
#define CARACAL_MPI_SMPI 1
#else
#define CARACAL_MPI_SMPI 0
#endif

/** Whether this build runs on SimGrid SMPI. */
static inline int caracal_smpi(void) { return CARACAL_MPI_SMPI; }

/** The bytes a receive's status says arrived. SMPI 3.32 aborts in MPI_Get_elements_x ("Not yet
 *  implemented"); its MPI_Get_count in MPI_BYTE is the same number (its messages are bytes). */
static inline int caracal_status_bytes(MPI_Status *st, MPI_Count *n)
{
#if CARACAL_MPI_SMPI
    int k = 0, rc = PMPI_Get_count(st, MPI_BYTE, &k);
    *n = k;
    return rc;
#else
    return PMPI_Get_elements_x(st, MPI_BYTE, n);
#endif
}

#if CARACAL_MPI_SMPI
/** PMPI_Test/PMPI_Testall that remember, for caracal_smpi_block, the requests found incomplete
 *  (only where the caller ignores statuses: a completion seen by the block has none to give).
 *  They also answer flag = 1 for MPI_REQUEST_NULL, which SMPI 3.32's MPI_Test with
 *  MPI_STATUS_IGNORE leaves unset (a task testing a finished request would wait forever). */
int caracal_smpi_test(MPI_Request *req, int *flag, MPI_Status *status);
int caracal_smpi_testall(int n, MPI_Request *reqs, int *flag, MPI_Status *statuses);
/** PMPI_Topo_test that SMPI 3.32 lacks (it aborts: "Not yet implemented"): MPI_CART where
 *  SMPI's MPI_Cartdim_get answers, else MPI_UNDEFINED (SMPI's other topologies, graphs, are
 *  not told apart: the rect rule asks only "Cartesian or not"). */
int caracal_smpi_topo_test(MPI_Comm comm, int *status);
/** PMPI_Pcontrol that SMPI 3.32 lacks (it aborts): MPI gives Pcontrol no effect of its own
 *  (it is for profilers, Caracal's among them), so success. */
static inline int caracal_smpi_pcontrol(int level) { (void)level; return MPI_SUCCESS; }
#if !defined(CARACAL_SMPI_IMPL) && !defined(CARACAL_SMPI_NO_REDIRECT)
#define PMPI_Test caracal_smpi_test
#define PMPI_Testall caracal_smpi_testall
#define PMPI_Topo_test caracal_smpi_topo_test
#define PMPI_Pcontrol caracal_smpi_pcontrol
#endif
#endif

#if CARACAL_MPI_SMPI
/** A progress sweep starts: forget the requests of the previous one. */
void caracal_smpi_sweep(void);
/** Block until one request of the last sweep completes (or, if there was none, a simulated
 *  microsecond passes). */
void caracal_smpi_block(void);
#else
/* every progress round calls these: with a real library they vanish at compile time */
static inline void caracal_smpi_sweep(void) {}
static inline void caracal_smpi_block(void) {}
#endif

#endif
