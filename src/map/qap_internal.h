/* Shared by the QAP methods; nothing here is exported from libcaracal. */
#ifndef CARACAL_QAP_INTERNAL_H
#define CARACAL_QAP_INTERNAL_H

#include "qap.h"

#include <time.h>

#define CARACAL_QAP_HIDDEN __attribute__((visibility("hidden")))

/* xoshiro256** seeded through splitmix64: fast, and the same stream on every
 * platform, which is what makes a seed reproducible. */
typedef struct { uint64_t s[4]; } caracal_qap_rng;

static inline uint64_t caracal_qap_rng_next(caracal_qap_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t out = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return out;
}

static inline void caracal_qap_rng_seed(caracal_qap_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        r->s[i] = z ^ (z >> 31);
    }
}

/* Uniform in [0, bound), bound > 0. The tiny modulo bias is irrelevant here. */
static inline uint64_t caracal_qap_rng_below(caracal_qap_rng *r, uint64_t bound)
{
    return caracal_qap_rng_next(r) % bound;
}

/* Uniform double in [0, 1). */
static inline double caracal_qap_rng_unit(caracal_qap_rng *r)
{
    return (double)(caracal_qap_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static inline double caracal_qap_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* When to stop: whichever limit comes first. */
typedef struct {
    double deadline;          /* absolute CLOCK_MONOTONIC time, or 0 for none */
    long long max_iterations; /* 0 for none */
} caracal_qap_limits;

static inline int caracal_qap_out_of_time(const caracal_qap_limits *l)
{
    return l->deadline > 0 && caracal_qap_now() >= l->deadline;
}

/* Random permutation of 0..n-1 (Fisher-Yates). */
CARACAL_QAP_HIDDEN void caracal_qap_random_perm(caracal_qap_rng *r, int *perm, int n);

/* Cost change of swapping the locations of units r and s in perm, in O(n).
 * Full asymmetric formula, diagonals included. */
CARACAL_QAP_HIDDEN int64_t caracal_qap_swap_delta(const caracal_qap_problem *pb, const int *perm,
                                                  int r, int s);

/* The methods. Each writes its best permutation to perm and returns the
 * number of iterations, or -1 with errno = ENOMEM. */
CARACAL_QAP_HIDDEN long long caracal_qap_grasp(const caracal_qap_problem *pb, uint64_t seed,
                                               const caracal_qap_limits *lim, int *perm);
CARACAL_QAP_HIDDEN long long caracal_qap_tabu(const caracal_qap_problem *pb, uint64_t seed,
                                              const caracal_qap_limits *lim, int *perm);

#endif
