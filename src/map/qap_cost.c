/* Exact objective and the O(n) swap delta every method builds on. */
#include "qap_internal.h"

int64_t caracal_qap_cost(const caracal_qap_problem *pb, const int *perm)
{
    const int n = pb->n;
    int64_t c = 0;
    for (int i = 0; i < n; i++) {
        const int64_t *a = pb->flow + (size_t)i * n;
        const int64_t *b = pb->dist + (size_t)perm[i] * n;
        for (int j = 0; j < n; j++)
            c += a[j] * b[perm[j]];
    }
    return c;
}

/* Swapping r and s changes every term that touches row or column r or s.
 * Written out for general matrices: the symmetric shortcut (doubling one
 * term) is wrong as soon as A or B is asymmetric, and the diagonal terms
 * matter when a[i][i] or b[k][k] is non-zero. */
int64_t caracal_qap_swap_delta(const caracal_qap_problem *pb, const int *perm, int r, int s)
{
    const int n = pb->n;
    const int64_t *A = pb->flow, *B = pb->dist;
    const int pr = perm[r], ps = perm[s];
    const int64_t *ar = A + (size_t)r * n, *as = A + (size_t)s * n;
    const int64_t *bpr = B + (size_t)pr * n, *bps = B + (size_t)ps * n;
    int64_t d = (ar[r] - as[s]) * (bps[ps] - bpr[pr])
              + (ar[s] - as[r]) * (bps[pr] - bpr[ps]);
    for (int k = 0; k < n; k++) {
        if (k == r || k == s)
            continue;
        const int pk = perm[k];
        const int64_t *ak = A + (size_t)k * n, *bpk = B + (size_t)pk * n;
        d += (ak[r] - ak[s]) * (bpk[ps] - bpk[pr])
           + (ar[k] - as[k]) * (bps[pk] - bpr[pk]);
    }
    return d;
}

void caracal_qap_random_perm(caracal_qap_rng *r, int *perm, int n)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)caracal_qap_rng_below(r, (uint64_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
