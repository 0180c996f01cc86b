/* The collectives collbench can time. Each calls the plain MPI_* function. */
#include "collbench.h"

#include <string.h>

static size_t as_doubles(size_t req) { return req < 8 ? 8 : req / 8 * 8; }
static size_t as_bytes(size_t req) { return req; }
static size_t none(size_t req) { (void)req; return 0; }

static void barrier(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)s; (void)r; (void)n; (void)root;
    MPI_Barrier(c);
}

static void bcast(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)r;
    MPI_Bcast(s, (int)n, MPI_BYTE, root, c);
}

static void reduce(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    MPI_Reduce(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, root, c);
}

static void allreduce(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    MPI_Allreduce(s, r, (int)(n / 8), MPI_DOUBLE, MPI_SUM, c);
}

static void allgather(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    MPI_Allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, c);
}

static void alltoall(void *s, void *r, size_t n, int root, MPI_Comm c)
{
    (void)root;
    MPI_Alltoall(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, c);
}

static const struct coll_op ops[] = {
    {"barrier", none, barrier},
    {"bcast", as_bytes, bcast},
    {"reduce", as_doubles, reduce},
    {"allreduce", as_doubles, allreduce},
    {"allgather", as_bytes, allgather},   /* size = block per rank */
    {"alltoall", as_bytes, alltoall},     /* size = block per destination */
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
    return "barrier, bcast, reduce, allreduce, allgather, alltoall";
}
