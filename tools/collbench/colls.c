/* The collectives collbench can time. Each calls the plain MPI_* function (Caracal's entry
 * when libcaracal is linked or preloaded), or the library's PMPI_* one when collbench_pmpi is
 * set: the native library with nothing of Caracal in the way, the baseline users compare with. */
#include "collbench.h"

#include <stdlib.h>
#include <string.h>

int collbench_pmpi;
#define CALL(f) (collbench_pmpi ? PMPI_##f : MPI_##f)

static size_t as_doubles(size_t req) { return req < 8 ? 8 : req / 8 * 8; }
static size_t as_bytes(size_t req) { return req; }
static size_t none(size_t req) { (void)req; return 0; }

static void barrier(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)s; (void)r; (void)n; (void)root;
    CALL(Barrier)(c);
}

static void bcast(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)r;
    CALL(Bcast)(s, (int)n, MPI_BYTE, root, c);
}

static void reduce(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    CALL(Reduce)(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, root, c);
}

static void allreduce(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Allreduce)(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, c);
}

static void allgather(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Allgather)(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, c);
}

static void alltoall(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Alltoall)(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, c);
}

/* v-variants with every rank's block the same size n: the arrays Caracal and the library see
 * are those of a uniform call, so they compare with the plain family at the same size */
static int *uniform(size_t n, MPI_Comm c, int displs)
{
    static int *counts, *offsets, cap;
    int size;
    PMPI_Comm_size(c, &size);
    if (size > cap) {
        free(counts);
        free(offsets);
        counts = malloc(sizeof *counts * (size_t)size);
        offsets = malloc(sizeof *offsets * (size_t)size);
        cap = size;
    }
    for (int i = 0; i < size; i++) {
        counts[i] = (int)n;
        offsets[i] = (int)(n * (size_t)i);
    }
    return displs ? offsets : counts;
}

static void allgatherv(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Allgatherv)(s, (int)n, MPI_BYTE, r, uniform(n, c, 0), uniform(n, c, 1), MPI_BYTE, c);
}

static void gather(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    CALL(Gather)(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, root, c);
}

static void gatherv(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    CALL(Gatherv)(s, (int)n, MPI_BYTE, r, uniform(n, c, 0), uniform(n, c, 1), MPI_BYTE, root, c);
}

static void scatter(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    CALL(Scatter)(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, root, c);
}

static void scatterv(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    CALL(Scatterv)(s, uniform(n, c, 0), uniform(n, c, 1), MPI_BYTE, r, (int)n, MPI_BYTE, root, c);
}

static void alltoallv(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    int *counts = uniform(n, c, 0), *displs = uniform(n, c, 1);
    CALL(Alltoallv)(s, counts, displs, MPI_BYTE, r, counts, displs, MPI_BYTE, c);
}

/* reduce_scatter(_block): n bytes of doubles per rank's block, as for allgather */
static void reduce_scatter(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Reduce_scatter)(s, r, uniform(n / 8, c, 0), MPI_DOUBLE, MPI_SUM, c);
}

static void reduce_scatter_block(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Reduce_scatter_block)(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, c);
}

static void scan(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Scan)(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, c);
}

static void exscan(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    CALL(Exscan)(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, c);
}

static const struct coll_op ops[] = {
    {"barrier", none, barrier},
    {"bcast", as_bytes, bcast},
    {"reduce", as_doubles, reduce},
    {"allreduce", as_doubles, allreduce},
    {"allgather", as_bytes, allgather},   /* size = block per rank */
    {"allgatherv", as_bytes, allgatherv}, /* every rank's block the same */
    {"gather", as_bytes, gather},
    {"gatherv", as_bytes, gatherv},
    {"scatter", as_bytes, scatter},
    {"scatterv", as_bytes, scatterv},
    {"alltoall", as_bytes, alltoall},     /* size = block per destination */
    {"alltoallv", as_bytes, alltoallv},
    {"reduce_scatter", as_doubles, reduce_scatter},             /* size = block per rank */
    {"reduce_scatter_block", as_doubles, reduce_scatter_block},
    {"scan", as_doubles, scan},
    {"exscan", as_doubles, exscan},
};

const struct coll_op *collbench_find(const char *name)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, name))
            return &ops[i];
    return NULL;
}

const char *collbench_names(void)
{
    return "barrier, bcast, reduce, allreduce, allgather, allgatherv, gather, gatherv, scatter, scatterv, "
           "alltoall, alltoallv, reduce_scatter, reduce_scatter_block, scan, exscan";
}

const struct coll_op *collbench_op(int i)
{
    return i >= 0 && i < (int)(sizeof ops / sizeof ops[0]) ? &ops[i] : NULL;
}
