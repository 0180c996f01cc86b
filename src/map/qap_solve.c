/* Entry point: check the problem, run the chosen method, report an exact cost. */
#include "qap_internal.h"

#include <errno.h>

void caracal_qap_options_init(caracal_qap_options *o)
{
    o->method = CARACAL_QAP_AUTO;
    o->time_limit = 1.0;
    o->seed = 1;
    o->max_iterations = 0;
}

const char *caracal_qap_method_name(caracal_qap_method m)
{
    switch (m) {
    case CARACAL_QAP_AUTO: return "auto";
    case CARACAL_QAP_GRASP: return "grasp";
    case CARACAL_QAP_TABU: return "tabu";
    }
    return "unknown";
}

static int64_t max_abs(const int64_t *m, size_t len, int *bad)
{
    int64_t r = 1;  /* 1, not 0: the bound below must also cover differences of one matrix */
    for (size_t i = 0; i < len; i++) {
        if (m[i] == INT64_MIN) { *bad = 1; return r; }
        int64_t v = m[i] < 0 ? -m[i] : m[i];
        if (v > r) r = v;
    }
    return r;
}

/* The largest intermediate any method forms is below (n^2 + 8n + 64) * maxA * maxB
 * (costs, swap deltas, and the O(1) update terms); demand that fits with room. */
static int could_overflow(const caracal_qap_problem *pb)
{
    int bad = 0;
    size_t len = (size_t)pb->n * pb->n;
    __int128 ma = max_abs(pb->flow, len, &bad), mb = max_abs(pb->dist, len, &bad);
    __int128 n = pb->n;
    __int128 bound = (n * n + 8 * n + 64) * ma;
    if (bad || ma > ((__int128)1 << 61) || mb > ((__int128)1 << 61))
        return 1;
    return bound >= ((__int128)1 << 62) || bound * mb >= ((__int128)1 << 62);
}

int caracal_qap_solve(const caracal_qap_problem *pb, const caracal_qap_options *o,
                      int *perm, caracal_qap_result *res)
{
    if (!pb || !o || !perm || !res || pb->n < 1 || !pb->flow || !pb->dist ||
        o->max_iterations < 0 || o->time_limit != o->time_limit ||
        (o->method != CARACAL_QAP_AUTO && o->method != CARACAL_QAP_GRASP && o->method != CARACAL_QAP_TABU) ||
        (pb->n > 1 && o->time_limit <= 0 && o->max_iterations == 0)) {
        errno = EINVAL;
        return -1;
    }
    if (could_overflow(pb)) {
        errno = EOVERFLOW;
        return -1;
    }
    const double t0 = caracal_qap_now();
    caracal_qap_limits lim = {
        .deadline = o->time_limit > 0 ? t0 + o->time_limit : 0,
        .max_iterations = o->max_iterations,
    };
    caracal_qap_method m = o->method == CARACAL_QAP_AUTO ? CARACAL_QAP_TABU : o->method;
    long long it;
    if (pb->n == 1) {
        perm[0] = 0;
        it = 0;
    } else if (m == CARACAL_QAP_GRASP) {
        it = caracal_qap_grasp(pb, o->seed, &lim, perm);
    } else {
        it = caracal_qap_tabu(pb, o->seed, &lim, perm);
    }
    if (it < 0)
        return -1;
    res->cost = caracal_qap_cost(pb, perm);  /* never trust a running total */
    res->seconds = caracal_qap_now() - t0;
    res->iterations = it;
    res->method = m;
    return 0;
}
