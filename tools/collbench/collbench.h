/* caracal-collbench: collective timing in ReproMPI's manner (see docs/probe-format.md,
 * caracal.bench/1). The collective goes through the ordinary MPI_* entry points,
 * so a preloaded libcaracal is what gets measured. */
#ifndef CARACAL_COLLBENCH_H
#define CARACAL_COLLBENCH_H

#include <mpi.h>
#include <stddef.h>

struct coll_op {
    const char *name;
    /* bytes actually moved per rank for a requested size (reductions use doubles) */
    size_t (*bytes)(size_t req);
    void (*run)(void *sbuf, void *rbuf, size_t bytes, int root, MPI_Comm comm);
};

/** Nonzero: the table's functions call PMPI_* (the library alone) instead of MPI_*. */
extern int collbench_pmpi;

const struct coll_op *collbench_find(const char *name);
const char *collbench_names(void);
/** The i-th collective of the table (NULL past the end). */
const struct coll_op *collbench_op(int i);

/* clock_sync.c: rank r's clock minus rank 0's, estimated from the ping-pong with
 * the shortest round trip; every rank gets its own offset and the smallest RTT. */
double collbench_clock_offset(MPI_Comm comm, int rounds, double *min_rtt);

#endif
