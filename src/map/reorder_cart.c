/* MPI_Cart_create with reorder = 1: the grid's neighbour graph (one edge to each
 * neighbour along each dimension, wrapping where the dimension is periodic) placed
 * by QAP. Grids smaller than the communicator work as in MPI: the processes whose
 * new rank is outside the grid get MPI_COMM_NULL. */
#include "reorder.h"
#include "gen_funcs.h"
#include <stdlib.h>

/* Arguments the library would reject go to it unchanged, so that its own checks
 * and error handler see them (the same on every rank: MPI makes them agree). */
static int grid_size(MPI_Comm comm, int ndims, const int dims[])
{
    int size;
    if (comm == MPI_COMM_NULL || ndims < 0 || (ndims > 0 && !dims) || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -1;
    long long m = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return -1;
        m *= dims[d];
        if (m > size)
            return -1;
    }
    return (int)m;
}

static int64_t *grid_flow(int n, int m, int ndims, const int dims[], const int periods[])
{
    int64_t *flow = calloc((size_t)n * (size_t)n, sizeof *flow);
    if (!flow)
        return NULL;
    for (int i = 0; i < m; i++) {
        int stride = 1, rest = i;
        for (int d = ndims - 1; d >= 0; d--) { /* row-major: the last dimension varies fastest */
            int c = rest % dims[d];
            rest /= dims[d];
            for (int step = -1; step <= 1; step += 2) {
                int nc = c + step;
                if (nc < 0 || nc >= dims[d]) {
                    if (!periods || !periods[d])
                        continue;
                    nc = (nc + dims[d]) % dims[d];
                }
                caracal_reorder_edge(flow, n, i, i + (nc - c) * stride, 1);
            }
            stride *= dims[d];
        }
    }
    return flow;
}

int caracal_impl_MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                 MPI_Comm *comm_cart)
{
    int m = grid_size(comm_old, ndims, dims);
    MPI_Comm priv, mine;
    if (m < 0 || !caracal_reorder_begin(comm_old, reorder, 1, &priv))
        return PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    int me, n;
    PMPI_Comm_rank(priv, &me);
    PMPI_Comm_size(priv, &n);
    int64_t *flow = me == 0 ? grid_flow(n, m, ndims, dims, periods) : NULL;
    int rc = caracal_reorder_finish(&priv, flow, "MPI_Cart_create", &mine);
    free(flow);
    if (rc != MPI_SUCCESS)
        return PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
    rc = PMPI_Cart_create(mine, ndims, dims, periods, 0, comm_cart);
    PMPI_Comm_free(&mine);
    return rc;
}
