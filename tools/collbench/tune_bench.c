/* caracal-tune-bench: the measuring half of `caracal tune`.
 *
 *   caracal-tune-bench COLL --sizes 8,1K,64K --cands native,knomial:2,knomial:4 [--reps R] [--seed S]
 *                      [--pattern b2b|rotate|barrier]
 *
 * Linked with libcaracal, so MPI_<coll> is Caracal's entry point; between measurements
 * every rank switches the family's rules with caracal_set_rules() to one candidate (`native`
 * is the library's algorithm as the launch configured it, reached through Caracal's entry
 * like any native-selected call; `default` the selection the launch would make without
 * tuning; `pmpi` calls the library's PMPI_* entry directly, nothing of
 * Caracal in the way: the baseline of `caracal tune --verify`). All candidates of a size are timed in the same launch,
 * interleaved: each repetition visits them in a fresh random order (the same on every rank,
 * from the seed), so drift and the VM's speed modes hit them alike.
 *
 * One repetition of a candidate: one untimed call, a native barrier, then `iters` calls, the
 * slowest rank's time divided by iters. The calls follow the --pattern users' suites time: `b2b` (the
 * default: back to back from root 0, as `caracal tune` measures), `rotate` (back to back, the
 * root moving to the next rank on every call, as IMB-MPI1 runs its rooted benchmarks) or
 * `barrier` (a native barrier before every call, only the call timed, as the OSU benchmarks
 * do: no call can overlap the next). `iters` is calibrated per size so
 * that a repetition lasts about a millisecond. Output on rank 0: one JSON line per (size,
 * candidate) with median, quartiles and minimum in microseconds (schema caracal.tune-cell/1),
 * and a first line with the launch's facts. Exit status 2 with one line for bad arguments. */
#include "collbench.h"
#include "tool_args.h"
#include <caracal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CANDS 32

struct opts {
    const struct coll_op *op;
    const char *coll;
    size_t sizes[64];
    int nsizes;
    char *cands[MAX_CANDS];
    int ncands;
    int reps;
    unsigned seed;
    double target_s;
    int pattern; /* PAT_* */
};

enum { PAT_B2B, PAT_ROTATE, PAT_BARRIER };

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.reps = 15, .seed = 1, .target_s = 1e-3};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            if (o->coll)
                tool_usage_error("one collective only, got '%s' and '%s'", o->coll, a);
            o->coll = a;
            continue;
        }
        if (!v)
            tool_usage_error("%s needs a value", a);
        i++;
        if (!strcmp(a, "--sizes")) {
            char *copy = strdup(v), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o->nsizes == 64)
                    tool_usage_error("--sizes: at most 64 sizes");
                size_t b = tool_parse_bytes("--sizes", t);
                if (b > (1u << 26))
                    tool_usage_error("--sizes: '%s' is above 64M", t);
                o->sizes[o->nsizes++] = b;
            }
            free(copy);
        } else if (!strcmp(a, "--cands")) {
            char *copy = strdup(v), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o->ncands == MAX_CANDS)
                    tool_usage_error("--cands: at most %d candidates", MAX_CANDS);
                o->cands[o->ncands++] = strdup(t);
            }
            free(copy);
        } else if (!strcmp(a, "--reps"))
            o->reps = (int)tool_parse_long(a, v, 1, 10000);
        else if (!strcmp(a, "--seed"))
            o->seed = (unsigned)tool_parse_long(a, v, 0, 1L << 30);
        else if (!strcmp(a, "--pattern")) {
            if (!strcmp(v, "b2b"))
                o->pattern = PAT_B2B;
            else if (!strcmp(v, "rotate"))
                o->pattern = PAT_ROTATE;
            else if (!strcmp(v, "barrier"))
                o->pattern = PAT_BARRIER;
            else
                tool_usage_error("--pattern '%s': one of b2b, rotate, barrier", v);
        } else if (!strcmp(a, "--target-us"))
            o->target_s = tool_parse_long(a, v, 10, 10000000) * 1e-6;
        else
            tool_usage_error("unknown option '%s' (see caracal tune --help)", a);
    }
    if (!o->coll)
        tool_usage_error("which collective? (%s)", collbench_names());
    if (!(o->op = collbench_find(o->coll)))
        tool_usage_error("unknown collective '%s' (%s)", o->coll, collbench_names());
    if (!o->nsizes)
        o->sizes[o->nsizes++] = 8;
    if (!o->ncands)
        o->cands[o->ncands++] = strdup("native");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* switch to candidate c: pmpi bypasses Caracal, `default` is the selection as the launch
 * configured it (settings, rules file, built-in defaults), anything else a rule of the family */
static void use(const struct opts *o, int c)
{
    collbench_pmpi = !strcmp(o->cands[c], "pmpi");
    if (!collbench_pmpi)
        caracal_set_rules(o->coll, strcmp(o->cands[c], "default") ? o->cands[c] : NULL);
}

static double quantile(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? s[i] + (pos - i) * (s[i + 1] - s[i]) : s[n - 1];
}

/* seconds per call: the slowest rank's time in the calls / iters */
static double time_calls(const struct opts *o, void *s, void *r, size_t n, int iters)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t = 0, tmax;
    if (o->pattern == PAT_BARRIER) {
        for (int i = 0; i < iters; i++) {
            PMPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            o->op->run(s, r, n, 0, MPI_COMM_WORLD);
            t += MPI_Wtime() - t0;
        }
    } else {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            o->op->run(s, r, n, o->pattern == PAT_ROTATE ? i % size : 0, MPI_COMM_WORLD);
        t = MPI_Wtime() - t0;
    }
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax / iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tool_args_init("caracal-tune-bench", rank);
    struct opts o;
    parse(argc, argv, &o);
    for (int c = 0; c < o.ncands; c++) /* every candidate must be a rule the selection takes */
        if (strcmp(o.cands[c], "pmpi") && strcmp(o.cands[c], "default") && caracal_set_rules(o.coll, o.cands[c]) != 0)
            tool_usage_error("'%s' is not a rule of %s's selection (see caracal info --algorithms)", o.cands[c], o.coll);
    size_t maxb = 8;
    for (int i = 0; i < o.nsizes; i++)
        if (o.op->bytes(o.sizes[i]) > maxb)
            maxb = o.op->bytes(o.sizes[i]);
    char *sbuf = calloc(size, maxb), *rbuf = calloc(size, maxb);
    double *t = malloc(sizeof *t * (size_t)o.reps * o.ncands);
    int *order = malloc(sizeof *order * o.ncands);
    if (!sbuf || !rbuf || !t || !order) {
        fprintf(stderr, "caracal-tune-bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        printf("{\"schema\": \"caracal.tune-launch/1\", \"coll\": \"%s\", \"ranks\": %d, \"reps\": %d, "
               "\"pattern\": \"%s\"}\n", o.coll, size, o.reps,
               o.pattern == PAT_ROTATE ? "rotate" : o.pattern == PAT_BARRIER ? "barrier" : "b2b");
    srand(o.seed);
    for (int si = 0; si < o.nsizes; si++) {
        size_t n = o.op->bytes(o.sizes[si]);
        /* warm up every candidate (builds hierarchies and segments), then calibrate on the
         * first; rank 0's count for everyone */
        for (int c = 0; c < o.ncands; c++) {
            use(&o, c);
            time_calls(&o, sbuf, rbuf, n, 2);
        }
        use(&o, 0);
        /* the fastest of five tries: one stall of a loaded machine would otherwise make a
         * repetition a single call (its time then the barrier's skew, not the call's) */
        double one = time_calls(&o, sbuf, rbuf, n, 3);
        for (int k = 0; k < 4; k++) {
            double again = time_calls(&o, sbuf, rbuf, n, 3);
            one = again < one ? again : one;
        }
        int iters = one > 0 ? (int)(o.target_s / one) : 1000;
        iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
        PMPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
        for (int rep = 0; rep < o.reps; rep++) {
            for (int c = 0; c < o.ncands; c++)
                order[c] = c;
            for (int c = o.ncands - 1; c > 0; c--) { /* the same shuffle on every rank */
                int j = rand() % (c + 1), x = order[c];
                order[c] = order[j];
                order[j] = x;
            }
            for (int k = 0; k < o.ncands; k++) {
                int c = order[k];
                use(&o, c);
                /* one untimed call first: what the previous candidate left behind (its data in
                 * the caches, a first call's rule walk) is paid here, not by whichever
                 * candidate happens to follow a slow one (defaults_check at 1 MiB: a native
                 * call that followed shm in 4 of 5 repetitions timed 1.08-1.10x the library) */
                time_calls(&o, sbuf, rbuf, n, 1);
                t[c * o.reps + rep] = time_calls(&o, sbuf, rbuf, n, iters);
            }
        }
        if (rank == 0)
            for (int c = 0; c < o.ncands; c++) {
                double *v = t + c * o.reps;
                /* every repetition in its order too: candidates of one repetition ran side by
                 * side, so `caracal tune --verify` pairs them (a ratio per repetition) */
                printf("{\"schema\": \"caracal.tune-cell/1\", \"coll\": \"%s\", \"ranks\": %d, \"bytes\": %zu, "
                       "\"cand\": \"%s\", \"iters\": %d, \"reps_us\": [",
                       o.coll, size, o.sizes[si], o.cands[c], iters);
                for (int rep = 0; rep < o.reps; rep++)
                    printf("%s%.4f", rep ? "," : "", 1e6 * v[rep]);
                qsort(v, o.reps, sizeof *v, cmp_double);
                printf("], \"median_us\": %.4f, \"p25_us\": %.4f, \"p75_us\": %.4f, \"min_us\": %.4f}\n",
                       1e6 * quantile(v, o.reps, 0.5), 1e6 * quantile(v, o.reps, 0.25), 1e6 * quantile(v, o.reps, 0.75),
                       1e6 * v[0]);
            }
        fflush(stdout);
    }
    caracal_set_rules(o.coll, NULL);
    free(sbuf);
    free(rbuf);
    free(t);
    free(order);
    for (int c = 0; c < o.ncands; c++)
        free(o.cands[c]);
    MPI_Finalize();
    return 0;
}
