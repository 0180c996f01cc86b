/* Quadratic assignment: place n units (ranks) on n locations (cores) so that
 * heavy traffic travels short distances.
 *
 * Minimise  cost(p) = sum_{i,j} flow[i][j] * dist[p[i]][p[j]]
 * over permutations p (p[i] = location of unit i, 0-based). Both matrices may
 * be asymmetric and have non-zero diagonals; every method handles that.
 *
 * Costs are 64-bit integers: QAPLIB costs exceed 2^31. Results are
 * deterministic for a given seed; a time budget only decides where the search
 * stops, never which path it takes. */
#ifndef CARACAL_QAP_H
#define CARACAL_QAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A problem instance. Matrices are n*n, row-major; the solver only reads them. */
typedef struct caracal_qap_problem {
    int n;
    const int64_t *flow;  /* A: traffic between units i and j */
    const int64_t *dist;  /* B: distance (latency) between locations k and l */
} caracal_qap_problem;

typedef enum caracal_qap_method {
    CARACAL_QAP_AUTO = 0,   /* the best method we have (currently tabu) */
    CARACAL_QAP_GRASP,      /* randomised greedy construction + 2-exchange descent, repeated */
    CARACAL_QAP_TABU        /* robust tabu search with O(1) move-value updates */
} caracal_qap_method;

typedef struct caracal_qap_options {
    caracal_qap_method method;
    double time_limit;         /* seconds (CLOCK_MONOTONIC); <= 0 means no time limit */
    uint64_t seed;             /* same seed, same search path */
    long long max_iterations;  /* tabu: moves; grasp: constructions. 0 means no limit.
                                * With a limit and no time limit the result does not
                                * depend on machine speed at all. */
} caracal_qap_options;

typedef struct caracal_qap_result {
    int64_t cost;              /* recomputed from the returned permutation */
    double seconds;            /* wall-clock time spent */
    long long iterations;      /* moves (tabu) or constructions (grasp) performed */
    caracal_qap_method method; /* the method that actually ran (never AUTO) */
} caracal_qap_result;

/** Fill *o with the defaults: method auto, 1 second, seed 1, no iteration limit. */
void caracal_qap_options_init(caracal_qap_options *o);

/** Cost of permutation perm (perm[i] = location of unit i), exact, in O(n^2).
 *  perm must be a permutation of 0..n-1. */
int64_t caracal_qap_cost(const caracal_qap_problem *pb, const int *perm);

/** Solve pb. perm receives the best permutation found (n entries, 0-based).
 *  Needs at least one limit (time or iterations) unless n <= 1.
 *  Returns 0, or -1 with errno = EINVAL (bad problem or options), EOVERFLOW
 *  (entries so large that a cost could overflow 64 bits) or ENOMEM. */
int caracal_qap_solve(const caracal_qap_problem *pb, const caracal_qap_options *o,
                      int *perm, caracal_qap_result *res);

/** Name of a method ("auto", "grasp", "tabu"). */
const char *caracal_qap_method_name(caracal_qap_method m);

/** Read a QAPLIB .dat file: n, then matrix A (flow), then matrix B (dist), as
 *  whitespace-separated integers. The header line may carry one more integer
 *  after n (some distributed files put the known cost there; it is ignored).
 *  Anything else -- missing or extra numbers, a
 *  non-integer, n < 1 -- is an error. On success returns 0 and fills *pb with
 *  matrices to be released with caracal_qaplib_free. On failure returns -1 and
 *  writes one line (no newline) saying what and where into err. */
int caracal_qaplib_read(const char *path, caracal_qap_problem *pb, char *err, size_t errlen);
/** The same for a file's text already in memory (buf[0..len), not NUL-terminated);
 *  `name` stands for the path in messages. */
int caracal_qaplib_parse(const char *name, const char *buf, size_t len, caracal_qap_problem *pb, char *err,
                         size_t errlen);

/** Release the matrices of a problem filled by caracal_qaplib_read. */
void caracal_qaplib_free(caracal_qap_problem *pb);

#ifdef __cplusplus
}
#endif
#endif
