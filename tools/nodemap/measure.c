/* Which pairs get measured, and when.
 *
 * Rounds: a round-robin tournament (circle method) splits all pairs into
 * n-1 (n even) or n (n odd) rounds of disjoint pairs; a barrier separates
 * rounds, so no two measurements share a process. A round is further split
 * into steps so that no node has more busy ranks than it has CPUs: a ping-pong
 * whose partner is descheduled measures the scheduler, not the network.
 * Ranks without a pair in a step sleep (quiet_barrier).
 *
 * Pruning (MC-MPI): phase 1 measures every pair inside a shared-memory group
 * (cheap) and every rank against each group's leader (the landmarks; with
 * --landmarks K only K of the leaders, spread evenly over the groups in rank
 * order: with one rank per node every rank leads a group, and landmarks that
 * are everybody would time every pair). Then,
 * for an unmeasured pair (p,q), if some r has rtt(p,r) >= ratio * rtt(r,q),
 * q sits much closer to r than p does, so rtt(p,q) ~ rtt(p,r): it is
 * estimated, not measured. Every rank holds the same matrices (allreduced)
 * and so takes the same decisions without further messages. Phase 2
 * measures whatever could not be estimated. */
#include "nodemap.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

int nm_round_count(int n)
{
    return n < 2 ? 0 : (n % 2 ? n : n - 1);
}

/* Partner of `rank` in `round`, or -1 (sits out). With m = n rounded up to
 * even, ranks below m-1 pair off by rank + partner = 2*round (mod m-1); the
 * one left over, rank == round, plays m-1 (a bye when n is odd). */
int nm_round_partner(int rank, int round, int n)
{
    int m = n % 2 ? n + 1 : n, k = m - 1;
    int p;
    if (rank == m - 1)
        p = round;
    else if (rank == round)
        p = m - 1;
    else
        p = ((2 * round - rank) % k + k) % k;
    return p < n ? p : -1;
}

/* End of a round. Ranks sleep while they wait instead of spinning in
 * MPI_Barrier: on a node with more ranks than cores, spinning bystanders
 * would steal the CPU from the pair being timed. */
static void quiet_barrier(MPI_Comm comm)
{
#ifdef SMPI_SHARED_MALLOC
    /* SimGrid SMPI (only its mpi.h defines this): simulated ranks steal no CPU from each
     * other, and every 50 us nap would be one more context switch of the whole simulation */
    MPI_Barrier(comm);
#else
    MPI_Request req;
    int done = 0;
    const struct timespec nap = {0, 50000};
    MPI_Ibarrier(comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&nap, NULL);
    }
#endif
}

typedef int (*pair_filter)(int p, int q, void *ctx);

/* Split this round's wanted pairs into steps, greedily in rank order, so
 * that the busy ranks of a node never exceed its CPUs (at least one pair per
 * step always fits). Every rank computes the same plan. Returns the number of
 * steps; *my_step is this rank's step or -1. */
static int plan_round(int n, int round, int me, const nm_place *pl, pair_filter want, void *ctx, int *my_step)
{
    int steps = 0, *load = calloc((size_t)n * (size_t)(n / 2 + 1), sizeof(int));
    *my_step = -1;
    for (int p = 0; p < n; p++) {
        int q = nm_round_partner(p, round, n);
        if (q <= p || !want(p, q, ctx))
            continue;
        int np = pl[p].node, nq = pl[q].node, s = 0;
        for (;; s++) {
            int *l = load + (size_t)s * n, busy_p = l[np] + 1 + (np == nq), busy_q = l[nq] + 1 + (np == nq);
            if ((l[np] == 0 && l[nq] == 0) || (busy_p <= pl[p].ncpus && busy_q <= pl[q].ncpus))
                break;
        }
        load[(size_t)s * n + np]++;
        load[(size_t)s * n + nq]++;
        steps = s + 1 > steps ? s + 1 : steps;
        if (p == me || q == me)
            *my_step = s;
    }
    free(load);
    return steps;
}

/* Measure latency of every pair the filter selects, round by round, step by
 * step; results land in L on the timing side only (the caller shares them). */
static int run_rounds(MPI_Comm comm, const nm_place *pl, int n, pair_filter want, void *ctx, const nm_options *o, double *L)
{
    int me, count = 0;
    MPI_Comm_rank(comm, &me);
    for (int r = 0; r < nm_round_count(n); r++) {
        int mine, steps = plan_round(n, r, me, pl, want, ctx, &mine);
        int peer = nm_round_partner(me, r, n);
        for (int s = 0; s < steps; s++) {
            if (s == mine) {
                double t = nm_pingpong_latency(comm, me, peer, o->reps, o->warmup);
                if (me < peer) {
                    if (t <= 0)
                        t = MPI_Wtick();  /* below timer resolution: still positive */
                    L[me * n + peer] = L[peer * n + me] = t;
                }
            }
            quiet_barrier(comm);
        }
    }
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n; q++)
            count += want(p, q, ctx);
    return count;
}

typedef struct {
    const nm_place *pl;
    const nm_options *o;
    const unsigned char *state;
    const unsigned char *landmark; /* [n] 1 for the ranks every rank is timed against */
    int n;
} phase_ctx;

/* The landmarks: every group's leader, or K of them (group i of g taken when
 * floor(i*K/g) steps up), so they are spread over the groups in rank order. */
static unsigned char *pick_landmarks(int n, const nm_place *pl, int k)
{
    unsigned char *lm = calloc((size_t)n, 1);
    int groups = 0;
    for (int p = 0; p < n; p++)
        groups += pl[p].node == p;
    for (int p = 0, i = 0; p < n; p++) {
        if (pl[p].node != p)
            continue;
        lm[p] = k <= 0 || k >= groups || (long)i * k / groups != (long)(i - 1) * k / groups || i == 0;
        i++;
    }
    return lm;
}

static int want_phase1(int p, int q, void *c)
{
    const phase_ctx *x = c;
    if (!x->o->prune)
        return 1;
    /* same group, or one of them is a landmark */
    return x->pl[p].node == x->pl[q].node || x->landmark[p] || x->landmark[q];
}

static int want_phase2(int p, int q, void *c)
{
    const phase_ctx *x = c;
    return x->state[p * x->n + q] == NM_UNKNOWN;
}

static void share(MPI_Comm comm, int n, double *L, unsigned char *state, const double *mine, int (*want)(int, int, void *), void *ctx)
{
    double *sum = malloc(sizeof(double) * (size_t)n * n);
    /* Exactly one rank (the pair's lower rank) contributes each entry, so the
     * sum is that value, bit for bit the same everywhere. */
    MPI_Allreduce(mine, sum, n * n, MPI_DOUBLE, MPI_SUM, comm);
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n; q++)
            if (want(p, q, ctx)) {  /* decide before touching state: want may read it */
                L[p * n + q] = L[q * n + p] = sum[p * n + q];
                state[p * n + q] = state[q * n + p] = NM_MEASURED;
            }
    free(sum);
}

/* Try to estimate (p,q) through a third rank; best = largest ratio. */
static int estimate(int n, const double *L, const unsigned char *st, int p, int q, double ratio, double *out)
{
    double best = 0;
    for (int r = 0; r < n; r++) {
        if (r == p || r == q || st[p * n + r] != NM_MEASURED || st[r * n + q] != NM_MEASURED)
            continue;
        double pr = L[p * n + r], rq = L[r * n + q];
        /* far(p,r) vs near(r,q): then p..q ~ p..r; and the mirror case */
        if (rq > 0 && pr / rq >= ratio && pr / rq > best) {
            best = pr / rq;
            *out = pr;
        }
        if (pr > 0 && rq / pr >= ratio && rq / pr > best) {
            best = rq / pr;
            *out = rq;
        }
    }
    return best > 0;
}

void nm_measure_latency(MPI_Comm comm, const nm_place *pl, const nm_options *o, nm_latency *lat)
{
    int n = lat->n;
    size_t nn = (size_t)n * n;
    double *mine = calloc(nn, sizeof(double));
    memset(lat->state, NM_UNKNOWN, nn);
    memset(lat->L, 0, nn * sizeof(double));
    unsigned char *landmark = pick_landmarks(n, pl, o->landmarks);
    phase_ctx ctx = {pl, o, lat->state, landmark, n};

    lat->measured = run_rounds(comm, pl, n, want_phase1, &ctx, o, mine);
    share(comm, n, lat->L, lat->state, mine, want_phase1, &ctx);

    lat->estimated = 0;
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n; q++) {
            double v = 0;
            if (lat->state[p * n + q] == NM_UNKNOWN && estimate(n, lat->L, lat->state, p, q, o->ratio, &v))
                lat->L[p * n + q] = lat->L[q * n + p] = v, lat->estimated++;
        }
    /* Mark estimates only after the pass, so an estimate never feeds another. */
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++)
            if (p != q && lat->state[p * n + q] == NM_UNKNOWN && lat->L[p * n + q] > 0)
                lat->state[p * n + q] = NM_ESTIMATED;

    memset(mine, 0, nn * sizeof(double));
    lat->measured += run_rounds(comm, pl, n, want_phase2, &ctx, o, mine);
    share(comm, n, lat->L, lat->state, mine, want_phase2, &ctx);
    free(mine), free(landmark);
}

/* Bandwidth for a sample: pairs are classed by the lowest level that holds
 * both (nlevels = none); the first bw_per_class pairs of each class in rank
 * order are measured, in disjoint rounds like latency. */
static int pair_class(const nm_level *levels, int nlevels, int p, int q)
{
    for (int l = 0; l < nlevels; l++)
        if (levels[l].group[p] == levels[l].group[q])
            return l;
    return nlevels;
}

typedef struct {
    const unsigned char *pick;
    int n;
} pick_ctx;

static int want_picked(int p, int q, void *c)
{
    const pick_ctx *x = c;
    return x->pick[p * x->n + q];
}

int nm_measure_bandwidth(MPI_Comm comm, const nm_place *pl, const nm_level *levels, int nlevels, const nm_options *o,
                         nm_bw *out, int max)
{
    int n, me, count = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    if (o->bw_size <= 0 || n < 2)
        return 0;
    int per[NM_MAX_LEVELS + 1] = {0};
    unsigned char *pick = calloc((size_t)n * n, 1);
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n; q++) {
            int c = pair_class(levels, nlevels, p, q);
            if (per[c] < o->bw_per_class && count < max) {
                per[c]++;
                pick[p * n + q] = 1;
                out[count].p = p, out[count].q = q, out[count].bytes_per_s = out[count].latency = 0;
                count++;
            }
        }
    char *buf = malloc((size_t)o->bw_size);
    memset(buf, 1, (size_t)o->bw_size);
    double *t = calloc((size_t)n * n, sizeof(double)), *sum = calloc((size_t)n * n, sizeof(double));
    pick_ctx ctx = {pick, n};
    for (int r = 0; r < nm_round_count(n); r++) {
        int mine, steps = plan_round(n, r, me, pl, want_picked, &ctx, &mine);
        int peer = nm_round_partner(me, r, n);
        for (int s = 0; s < steps; s++) {
            if (s == mine) {
                double v = nm_pingpong_time(comm, me, peer, buf, (int)o->bw_size, o->bw_reps);
                if (me < peer)
                    t[me * n + peer] = v > 0 ? v : MPI_Wtick();
            }
            quiet_barrier(comm);
        }
    }
    MPI_Allreduce(t, sum, n * n, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < count; i++) {
        out[i].latency = sum[out[i].p * n + out[i].q];
        out[i].bytes_per_s = (double)o->bw_size / out[i].latency;
    }
    free(buf), free(t), free(sum), free(pick);
    return count;
}
