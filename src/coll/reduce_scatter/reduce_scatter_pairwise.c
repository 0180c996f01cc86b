/* Reduce-scatter "pairwise": in round k rank r sends its copy of block r+k to that rank and
 * receives the copy of its own block from r-k (mod n). The copies arrive from r-1 down to 0,
 * then from n-1 down to r+1, so two running results combine them in rank order for any
 * operator: low = x_0 op .. op x_{r-1} (each arrival is the new left operand), high =
 * x_{r+1} op .. op x_{n-1} likewise, and the block is low op (x_r op high). n-1 rounds,
 * one block in and out per round, three blocks of scratch. */
#include "coll/starts.h"
#include "coll/reduce_scatter/reduce_scatter.h"
#include "dtype.h"

long long caracal_rs_layout(caracal_steps *s, const caracal_rs_args *rs, int n, int **counts, int **displs)
{
    *counts = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    *displs = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    long long total = 0;
    for (int i = 0; i < n; i++) {
        (*counts)[i] = rs->counts ? rs->counts[i] : rs->block;
        (*displs)[i] = total > 0x7fffffff ? 0 : (int)total;
        total += (*counts)[i];
    }
    return total > 0x7fffffff ? -1 : total;
}

caracal_task *caracal_rs_pairwise(const caracal_ml_args *a, const caracal_rs_args *rs)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new(rs->name, h, a->tag);
    int *counts, *displs;
    if (caracal_rs_layout(s, rs, n, &counts, &displs) < 0) {
        caracal_task *t = caracal_steps_task(s); /* beyond int displacements: native (same on every rank) */
        t->destroy(t);
        return NULL;
    }
    MPI_Datatype dt = rs->dt;
    const char *vec = rs->sbuf == MPI_IN_PLACE ? rs->rbuf : rs->sbuf;
    int c = counts[r];
#define BLOCK(j) (vec + caracal_type_offset(dt, displs[j]))
    if (c == 0) { /* nothing to receive; still send the peers their blocks */
        for (int k = 1; k < n; k++) {
            caracal_steps_send(s, comm, (r + k) % n, BLOCK((r + k) % n), counts[(r + k) % n], dt);
            caracal_steps_next(s);
        }
        return caracal_steps_task(s);
    }
    char *low = caracal_steps_typed_scratch(s, c, dt), *high = caracal_steps_typed_scratch(s, c, dt);
    char *tmp = caracal_steps_typed_scratch(s, c, dt);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        int first = k == 1 || k == r + 1; /* the first copy of its half: straight into place */
        char *acc = from < r ? low : high;
        caracal_steps_send(s, comm, to, BLOCK(to), counts[to], dt);
        caracal_steps_recv(s, comm, from, first ? acc : tmp, c, dt);
        if (!first)
            caracal_steps_reduce(s, tmp, acc, c, dt, rs->op);
        caracal_steps_next(s);
    }
    if (r < n - 1)
        caracal_steps_reduce(s, BLOCK(r), high, c, dt, rs->op);
    else
        caracal_steps_typecopy(s, high, BLOCK(r), c, dt);
    if (r > 0)
        caracal_steps_reduce(s, low, high, c, dt, rs->op);
    caracal_steps_typecopy(s, rs->rbuf, high, c, dt);
    return caracal_steps_task(s);
}

CARACAL_START(caracal_start_reduce_scatter_pairwise)
{
    caracal_rs_args rs = {"reduce_scatter_pairwise", call->sbuf, call->rbuf, call->rcounts, 0, call->sdt, call->op};
    return caracal_rs_pairwise(a, &rs);
}
