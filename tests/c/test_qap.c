/* QAP solver: exact answers on instances small enough to enumerate.
 * Built with the solver sources and CARACAL_QAP_SELFCHECK, so every tabu move
 * also checks the incrementally maintained deltas against fresh ones. */
#include "qap_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);      \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            failures++;                                          \
        }                                                        \
    } while (0)

/* Minimum over all n! permutations (Heap's algorithm), cost from scratch each time. */
static int64_t brute_force(const caracal_qap_problem *pb)
{
    int n = pb->n, p[16], c[16] = { 0 };
    for (int i = 0; i < n; i++)
        p[i] = i;
    int64_t best = caracal_qap_cost(pb, p);
    for (int i = 1; i < n;) {
        if (c[i] < i) {
            int j = i % 2 ? c[i] : 0, z = p[j];
            p[j] = p[i], p[i] = z;
            int64_t v = caracal_qap_cost(pb, p);
            if (v < best)
                best = v;
            c[i]++, i = 1;
        } else {
            c[i++] = 0;
        }
    }
    return best;
}

static int is_permutation(const int *p, int n)
{
    int seen[64] = { 0 };
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]])
            return 0;
        seen[p[i]] = 1;
    }
    return 1;
}

/* Random instance. kind 0: fully general (asymmetric, non-zero diagonals, some
 * negative flows); 1: both symmetric with zero diagonals; 2: A symmetric, B
 * general; 3: A general, B symmetric (the tabu search symmetrises those two). */
static void random_instance(caracal_qap_rng *r, int n, int kind, int64_t *A, int64_t *B)
{
    const int symA = kind == 1 || kind == 2, symB = kind == 1 || kind == 3;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            A[i * n + j] = (int64_t)caracal_qap_rng_below(r, 20) - (kind == 1 ? 0 : 4);
            B[i * n + j] = (int64_t)caracal_qap_rng_below(r, 50);
            if (kind == 1 && i == j)
                A[i * n + j] = B[i * n + j] = 0;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (symA) A[i * n + j] = A[j * n + i];
            if (symB) B[i * n + j] = B[j * n + i];
        }
}

static int64_t solve(const caracal_qap_problem *pb, caracal_qap_method m, long long iters,
                     uint64_t seed, int *perm)
{
    caracal_qap_options o;
    caracal_qap_options_init(&o);
    o.method = m, o.time_limit = 0, o.max_iterations = iters, o.seed = seed;
    caracal_qap_result res;
    int rc = caracal_qap_solve(pb, &o, perm, &res);
    CHECK(rc == 0, "solve failed: %s", strerror(errno));
    CHECK(res.method == (m == CARACAL_QAP_AUTO ? CARACAL_QAP_TABU : m), "wrong method reported");
    CHECK(is_permutation(perm, pb->n), "result is not a permutation (n=%d)", pb->n);
    CHECK(res.cost == caracal_qap_cost(pb, perm), "reported cost differs from the permutation's");
    return res.cost;
}

/* No single swap improves perm: what GRASP's descent promises. GRASP itself
 * may stop in such a local optimum; the stronger search must not. */
static int swap_local_optimum(const caracal_qap_problem *pb, const int *perm)
{
    for (int r = 0; r < pb->n; r++)
        for (int s = r + 1; s < pb->n; s++)
            if (caracal_qap_swap_delta(pb, perm, r, s) < 0)
                return 0;
    return 1;
}

static void test_brute_force(void)
{
    caracal_qap_rng r;
    caracal_qap_rng_seed(&r, 2024);
    int64_t A[81], B[81];
    int perm[9];
    for (int n = 2; n <= 9; n++)
        for (int sym = 0; sym < 4; sym++)
            for (int rep = 0; rep < 3; rep++) {
                random_instance(&r, n, sym, A, B);
                caracal_qap_problem pb = { n, A, B };
                int64_t opt = brute_force(&pb);
                for (uint64_t seed = 1; seed <= 2; seed++) {
                    int64_t t = solve(&pb, CARACAL_QAP_TABU, 3000, seed, perm);
                    int64_t a = solve(&pb, CARACAL_QAP_AUTO, 3000, seed, perm);
                    int64_t g = solve(&pb, CARACAL_QAP_GRASP, 50, seed, perm);
                    CHECK(t == opt && a == opt, "tabu n=%d sym=%d rep=%d seed=%llu: %lld, optimum %lld", n, sym, rep,
                          (unsigned long long)seed, (long long)t, (long long)opt);
                    CHECK(g >= opt && swap_local_optimum(&pb, perm), "grasp n=%d sym=%d rep=%d: %lld is not "
                          "a 2-exchange local optimum", n, sym, rep, (long long)g);
                }
            }
}

/* Worked by hand: identity costs 4*1 + 2*1 + 3*2 = 12; p = (1,2,0) costs
 * 4*B[1][2] + 2*B[2][0] + 3*B[0][1] = 4 + 4 + 3 = 11, the optimum. Reading B
 * transposed, or symmetrising A, changes these numbers. */
static void test_asymmetric_by_hand(void)
{
    const int64_t A[9] = { 1, 4, 0, 0, 0, 2, 3, 0, 0 };
    const int64_t B[9] = { 0, 1, 5, 6, 0, 1, 2, 8, 3 };
    const caracal_qap_problem pb = { 3, A, B };
    const int perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
    const int64_t costs[6] = { 12, 54, 58, 11, 16, 62 };
    for (int k = 0; k < 6; k++)
        CHECK(caracal_qap_cost(&pb, perms[k]) == costs[k], "cost of permutation %d", k);
    /* the O(n) swap delta against the difference of full costs */
    for (int k = 0; k < 6; k++)
        for (int r = 0; r < 3; r++)
            for (int s = r + 1; s < 3; s++) {
                int q[3] = { perms[k][0], perms[k][1], perms[k][2] };
                int64_t before = caracal_qap_cost(&pb, q), d = caracal_qap_swap_delta(&pb, q, r, s);
                int z = q[r]; q[r] = q[s]; q[s] = z;
                CHECK(before + d == caracal_qap_cost(&pb, q), "swap delta perm %d (%d,%d)", k, r, s);
            }
    int perm[3];
    for (caracal_qap_method m = CARACAL_QAP_AUTO; m <= CARACAL_QAP_TABU; m += 2) {
        CHECK(solve(&pb, m, 50, 7, perm) == 11, "%s misses the optimum 11", caracal_qap_method_name(m));
        CHECK(perm[0] == 1 && perm[1] == 2 && perm[2] == 0, "%s: wrong permutation", caracal_qap_method_name(m));
    }
    int64_t g = solve(&pb, CARACAL_QAP_GRASP, 20, 7, perm);
    CHECK(swap_local_optimum(&pb, perm) && g == caracal_qap_cost(&pb, perm), "grasp: not a local optimum");
}

static void test_tiny(void)
{
    int perm[2];
    const int64_t A1[1] = { 3 }, B1[1] = { -5 };
    const caracal_qap_problem one = { 1, A1, B1 };
    for (caracal_qap_method m = CARACAL_QAP_AUTO; m <= CARACAL_QAP_TABU; m++) {
        CHECK(solve(&one, m, 10, 1, perm) == -15 && perm[0] == 0, "n=1, %s", caracal_qap_method_name(m));
        /* n = 1 needs no limit at all */
        caracal_qap_options o = { .method = m };
        caracal_qap_result res;
        CHECK(caracal_qap_solve(&one, &o, perm, &res) == 0 && res.cost == -15, "n=1 without limits");
    }
    /* n = 2, asymmetric: identity 3*2 + 1*7 = 13, swapped 3*7 + 1*2 = 23 */
    const int64_t A2[4] = { 0, 3, 1, 0 }, B2[4] = { 0, 2, 7, 0 };
    const caracal_qap_problem two = { 2, A2, B2 };
    for (caracal_qap_method m = CARACAL_QAP_AUTO; m <= CARACAL_QAP_TABU; m++)
        CHECK(solve(&two, m, 10, 1, perm) == 13 && perm[0] == 0 && perm[1] == 1, "n=2, %s",
              caracal_qap_method_name(m));
    /* and the other way round: now swapping wins */
    const int64_t B3[4] = { 0, 7, 2, 0 };
    const caracal_qap_problem three = { 2, A2, B3 };
    CHECK(solve(&three, CARACAL_QAP_TABU, 10, 1, perm) == 13 && perm[0] == 1, "n=2 reversed");
}

static void test_determinism_and_errors(void)
{
    caracal_qap_rng r;
    caracal_qap_rng_seed(&r, 99);
    enum { N = 24 };
    static int64_t A[N * N], B[N * N];
    random_instance(&r, N, 0, A, B);
    caracal_qap_problem pb = { N, A, B };
    int p1[N], p2[N];
    for (caracal_qap_method m = CARACAL_QAP_GRASP; m <= CARACAL_QAP_TABU; m++) {
        int64_t c1 = solve(&pb, m, m == CARACAL_QAP_TABU ? 400 : 5, 5, p1);
        int64_t c2 = solve(&pb, m, m == CARACAL_QAP_TABU ? 400 : 5, 5, p2);
        CHECK(c1 == c2 && !memcmp(p1, p2, sizeof p1), "%s: same seed, different result",
              caracal_qap_method_name(m));
    }
    /* a time budget alone also works, and returns a valid answer */
    caracal_qap_options o;
    caracal_qap_options_init(&o);
    o.time_limit = 0.05;
    caracal_qap_result res;
    CHECK(caracal_qap_solve(&pb, &o, p1, &res) == 0 && is_permutation(p1, N) &&
          res.cost == caracal_qap_cost(&pb, p1), "time-limited solve");

    o.time_limit = 0, o.max_iterations = 0;
    errno = 0;
    CHECK(caracal_qap_solve(&pb, &o, p1, &res) == -1 && errno == EINVAL, "no limit must be EINVAL");
    o.max_iterations = 10;
    caracal_qap_problem bad = { 0, A, B };
    errno = 0;
    CHECK(caracal_qap_solve(&bad, &o, p1, &res) == -1 && errno == EINVAL, "n=0 must be EINVAL");
    const int64_t H[4] = { 0, INT64_C(1) << 40, 1, 0 }, K[4] = { 0, INT64_C(1) << 30, 1, 0 };
    caracal_qap_problem huge = { 2, H, K };
    errno = 0;
    CHECK(caracal_qap_solve(&huge, &o, p1, &res) == -1 && errno == EOVERFLOW, "overflow must be refused");
}

int main(void)
{
    test_asymmetric_by_hand();
    test_tiny();
    test_brute_force();
    test_determinism_and_errors();
    if (failures)
        fprintf(stderr, "test_qap: %d failure(s)\n", failures);
    else
        printf("test_qap: all passed\n");
    return failures != 0;
}
