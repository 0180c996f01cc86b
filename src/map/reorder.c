/* The shared steps of every reordering constructor: decide (identically on every
 * rank), solve the QAP on rank 0, broadcast, split. See reorder.h. */
#include "reorder.h"
#include "qap.h"
#include "caracal.h"
#include "config.h"
#include "log.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Outcome of this process's last reordering constructor, for caracal_reorder_last(). */
static long long last_identity = -1, last_chosen = -1;

int caracal_reorder_last(long long *identity_cost, long long *chosen_cost)
{
    if (identity_cost)
        *identity_cost = last_identity;
    if (chosen_cost)
        *chosen_cost = last_chosen;
    return last_identity >= 0;
}

double caracal_reorder_time_budget(void)
{
    const char *s = caracal_setting_str(CARACAL_SET_REORDER_TIME);
    char *end;
    double t = strtod(s, &end);
    if (end == s || *end || !isfinite(t) || t <= 0) {
        static int warned;
        if (!warned++)
            caracal_warn_job("CARACAL_REORDER_TIME='%s' is not a positive number of seconds; using 0.05", s);
        t = 0.05;
    }
    return t;
}

int caracal_reorder_begin(MPI_Comm comm, int reorder, int local_ok, MPI_Comm *priv)
{
    /* reorder and comm must agree across ranks (MPI requires it), so this early
     * exit is taken by all ranks or none. */
    if (!reorder || comm == MPI_COMM_NULL)
        return 0;
    int inter = 0, size = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    PMPI_Comm_size(comm, &size);
    if (size <= 2 || size > CARACAL_REORDER_MAX_N)  /* n <= 2: every placement costs the same */
        return 0;
    if (PMPI_Comm_dup(comm, priv) != MPI_SUCCESS)
        return 0;
    /* Environment, a readable topology file and the local arguments may differ between
     * ranks: combine them so the decision is the same everywhere (design decision 3). */
    int mine = local_ok && caracal_setting_int(CARACAL_SET_REORDER) != 0, all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, *priv);
    if (!all) {
        PMPI_Comm_free(priv);
        return 0;
    }
    return 1;
}

/* Rank 0: perm[i] = process for node i; returns identity's and the chosen cost. */
static void solve(int n, const int64_t *flow, const int64_t *dist, int *perm, int64_t costs[2], const char *what)
{
    caracal_qap_problem pb = {n, flow, dist};
    for (int i = 0; i < n; i++)
        perm[i] = i;
    costs[0] = costs[1] = caracal_qap_cost(&pb, perm);
    caracal_qap_options o;
    caracal_qap_options_init(&o);
    o.method = CARACAL_QAP_TABU;
    o.seed = 1;
    o.time_limit = caracal_reorder_time_budget();
    o.max_iterations = 200LL * n; /* small and fixed: the same answer on any machine unless the clock stops it */
    int *best = malloc(sizeof(int) * (size_t)n);
    caracal_qap_result res = {0};
    if (!best || caracal_qap_solve(&pb, &o, best, &res)) {
        caracal_warn("%s: rank placement not solved (%s); ranks keep their order", what,
                     best && errno == EOVERFLOW ? "weights too large" : strerror(best ? errno : ENOMEM));
    } else if (res.cost < costs[0]) { /* ties keep the old order: no needless renumbering */
        memcpy(perm, best, sizeof(int) * (size_t)n);
        costs[1] = res.cost;
    }
    free(best);
    caracal_log("map", "%s: %d ranks, predicted cost %lld with ranks in order, %lld reordered (%lld tabu moves, %.3f s)",
                what, n, (long long)costs[0], (long long)costs[1], res.iterations, res.seconds);
}

int caracal_reorder_finish(MPI_Comm *priv, const int64_t *flow, const char *what, MPI_Comm *newcomm)
{
    int n, me;
    PMPI_Comm_size(*priv, &n);
    PMPI_Comm_rank(*priv, &me);
    int64_t *dist = caracal_reorder_distances(*priv);
    /* newrank[p] for every process p, then the two costs */
    long long *msg = malloc(sizeof(long long) * ((size_t)n + 2));
    int *perm = me == 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
    int ok = msg && (me != 0 || (perm && dist && flow)), all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, *priv);
    int rc;
    if (!all) {
        caracal_warn("%s: out of memory for rank placement; ranks keep their order", what);
        rc = PMPI_Comm_dup(*priv, newcomm);
    } else {
        if (me == 0) {
            int64_t costs[2];
            solve(n, flow, dist, perm, costs, what);
            for (int i = 0; i < n; i++)
                msg[perm[i]] = i;
            msg[n] = costs[0];
            msg[n + 1] = costs[1];
        }
        PMPI_Bcast(msg, n + 2, MPI_LONG_LONG, 0, *priv);
        last_identity = msg[n];
        last_chosen = msg[n + 1];
        rc = PMPI_Comm_split(*priv, 0, (int)msg[me], newcomm);
    }
    free(msg);
    free(perm);
    free(dist);
    PMPI_Comm_free(priv);
    return rc;
}
