/* caracal-collbench: time one collective over a list of sizes.
 *
 * Per repetition every rank starts together, then the repetition's time is the
 * maximum over ranks (the collective is done when its last rank is done).
 *   --sync window : ranks agree on start times T0 + i*W on rank 0's clock
 *                   (offsets estimated first); time = max(end) - start; a
 *                   repetition that some rank reached late is discarded.
 *   --sync barrier: MPI_Barrier, then local timing; time = max over ranks of
 *                   (end - own start). Biased: ranks leave a barrier at
 *                   different moments, and that skew is counted in.
 * Sizes are measured in a random order (seeded) so slow drift of the machine
 * does not line up with size. Output: JSON lines on rank 0's stdout. */
#include "collbench.h"
#include "tool_args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    const struct coll_op *op;
    size_t sizes[256];
    int nsizes;
    int reps, warmup, root, window_sync;
    double window_us;
    unsigned seed;
};

static void parse_sizes(struct opts *o, const char *s)
{
    char *copy = strdup(s), *save = NULL;
    o->nsizes = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned long long v;
        if (tool_bytes(t, &v))
            tool_usage_error("--sizes expects bytes separated by commas (e.g. 8,1K,1M), got '%s'", t);
        if (v > (1ULL << 28))
            tool_usage_error("--sizes: bad size '%s' (at most 256M)", t);
        if (o->nsizes == 256)
            tool_usage_error("--sizes: at most 256 sizes");
        o->sizes[o->nsizes++] = (size_t)v;
    }
    free(copy);
    if (!o->nsizes)
        tool_usage_error("--sizes is empty");
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.reps = 50, .warmup = 3, .window_sync = 1, .seed = 1};
    const char *coll = NULL;
    parse_sizes(o, "8,1K,64K");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            if (coll) tool_usage_error("one collective only, got '%s' and '%s'", coll, a);
            coll = a;
            continue;
        }
        if (!v) tool_usage_error("%s needs a value", a);
        i++;
        if (!strcmp(a, "--sizes")) parse_sizes(o, v);
        else if (!strcmp(a, "--reps")) o->reps = (int)tool_parse_long(a, v, 1, 1000000);
        else if (!strcmp(a, "--warmup")) o->warmup = (int)tool_parse_long(a, v, 0, 10000);
        else if (!strcmp(a, "--root")) o->root = (int)tool_parse_long(a, v, 0, 1 << 24);
        else if (!strcmp(a, "--seed")) o->seed = (unsigned)tool_parse_long(a, v, 0, 1L << 31);
        else if (!strcmp(a, "--window-us")) o->window_us = (double)tool_parse_long(a, v, 0, 10000000);
        else if (!strcmp(a, "--sync")) {
            if (strcmp(v, "window") && strcmp(v, "barrier"))
                tool_usage_error("--sync is window or barrier, not '%s'", v);
            o->window_sync = !strcmp(v, "window");
        } else tool_usage_error("unknown option '%s' (see caracal bench --help)", a);
    }
    if (!coll)
        tool_usage_error("which collective? (%s)", collbench_names());
    o->op = collbench_find(coll);
    if (!o->op)
        tool_usage_error("unknown collective '%s' (%s)", coll, collbench_names());
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]) : sorted[n - 1];
}

struct bench {
    struct opts o;
    int rank, size;
    double offset;          /* my clock minus rank 0's */
    char *sbuf, *rbuf;
};

static double gnow(const struct bench *b) { return MPI_Wtime() - b->offset; }

/* Barrier-synchronised repetitions; t[i] = max over ranks of local duration. */
static void run_barrier(struct bench *b, size_t n, int reps, double *t, int *valid)
{
    double *mine = calloc((size_t)reps, sizeof *mine);
    for (int i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        b->o.op->run(b->sbuf, b->rbuf, n, b->o.root, MPI_COMM_WORLD);
        mine[i] = MPI_Wtime() - t0;
    }
    MPI_Reduce(mine, t, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int i = 0; i < reps; i++)
        valid[i] = 1;
    free(mine);
}

/* Window-synchronised repetitions; returns nothing, fills t and valid on rank 0. */
static void run_window(struct bench *b, size_t n, int reps, double w, double *t, int *valid)
{
    double *end = malloc(sizeof *end * (size_t)reps);
    int *late = calloc((size_t)reps, sizeof *late);
    double t0 = 0;
    if (b->rank == 0)
        t0 = gnow(b) + 1e-3 + 4 * w;   /* room for the broadcast itself */
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < reps; i++) {
        double start = t0 + i * w;
        if (gnow(b) > start)
            late[i] = 1;
        while (gnow(b) < start)
            ;  /* spin: sleeping would add wake-up jitter to the start */
        b->o.op->run(b->sbuf, b->rbuf, n, b->o.root, MPI_COMM_WORLD);
        end[i] = gnow(b) - start;
    }
    MPI_Reduce(b->rank == 0 ? MPI_IN_PLACE : end, end, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(b->rank == 0 ? MPI_IN_PLACE : late, late, reps, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (b->rank == 0)
        for (int i = 0; i < reps; i++) {
            t[i] = end[i];
            valid[i] = !late[i];
        }
    free(end);
    free(late);
}

/* Window-synchronised repetitions until `want` started on time or 4 * want were run;
 * returns how many were run (t and valid hold that many, on rank 0). A late start means
 * a rank was descheduled (a loaded machine) or the window is too short. With one absolute
 * schedule every later repetition would then be late too, so each batch starts from a
 * freshly agreed start time, and the window doubles after a batch that was mostly late. */
static int run_window_until(struct bench *b, size_t n, int want, double *w, double *t, int *valid)
{
    int tried = 0, on_time = 0, cap = 4 * want;
    while (on_time < want && tried < cap) {
        int batch = want - on_time < cap - tried ? want - on_time : cap - tried;
        run_window(b, n, batch, *w, t + tried, valid + tried);
        int late = 0;
        if (b->rank == 0)
            for (int i = tried; i < tried + batch; i++)
                late += !valid[i];
        MPI_Bcast(&late, 1, MPI_INT, 0, MPI_COMM_WORLD);
        on_time += batch - late;
        tried += batch;
        if (2 * late > batch)
            *w *= 2;
    }
    return tried;
}

/* Window length: twice the slowest warm-up repetition plus the clock error,
 * unless the user fixed it with --window-us. */
static double pick_window(struct bench *b, size_t n, double rtt)
{
    if (b->o.window_us > 0)
        return b->o.window_us * 1e-6;
    int k = 5;
    double t[5];
    int v[5];
    run_barrier(b, n, k, t, v);
    double w = 0;
    if (b->rank == 0) {
        for (int i = 0; i < k; i++)
            w = fmax(w, t[i]);
        w = 2 * w + rtt + 20e-6;
    }
    MPI_Bcast(&w, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return w;
}

static void shuffle(int *idx, int n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 12345u;
    for (int i = n - 1; i > 0; i--) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        int j = (int)(x % (unsigned)(i + 1)), tmp = idx[i];
        idx[i] = idx[j];
        idx[j] = tmp;
    }
}

int main(int argc, char **argv)
{
    struct bench b;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    tool_args_init("caracal-collbench", b.rank);
    parse(argc, argv, &b.o);
    if (b.o.root >= b.size)
        tool_usage_error("--root %d is not a rank of this %d-rank job", b.o.root, b.size);

    size_t maxb = 8;
    for (int i = 0; i < b.o.nsizes; i++)
        if (b.o.op->bytes(b.o.sizes[i]) > maxb)
            maxb = b.o.op->bytes(b.o.sizes[i]);
    size_t per = maxb * (size_t)b.size;  /* allgather/alltoall need a block per rank */
    b.sbuf = calloc(1, per);
    b.rbuf = calloc(1, per);
    if (!b.sbuf || !b.rbuf) {
        fprintf(stderr, "caracal-collbench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    double rtt = 0;
    b.offset = b.o.window_sync ? collbench_clock_offset(MPI_COMM_WORLD, 20, &rtt) : 0;
    double max_off = fabs(b.offset);
    MPI_Allreduce(MPI_IN_PLACE, &max_off, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const char *pre = getenv("LD_PRELOAD");
    int caracal = pre && strstr(pre, "libcaracal");
    if (b.rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n,\"\\")] = 0;
        for (char *q = lib; *q; q++)
            if ((unsigned char)*q < 0x20)
                *q = ' ';  /* MPICH puts a tab in it; JSON strings cannot hold one raw */
        printf("{\"event\":\"start\",\"coll\":\"%s\",\"ranks\":%d,\"points\":%d,\"reps\":%d,"
               "\"sync\":\"%s\",\"clock_max_offset_us\":%.3f,\"clock_min_rtt_us\":%.3f,"
               "\"seed\":%u,\"caracal_preloaded\":%s,\"mpi_library\":\"%s\"}\n",
               b.o.op->name, b.size, b.o.nsizes, b.o.reps, b.o.window_sync ? "window" : "barrier",
               max_off * 1e6, rtt * 1e6, b.o.seed, caracal ? "true" : "false", lib);
        fflush(stdout);
    }

    int *order = malloc(sizeof *order * (size_t)b.o.nsizes);
    for (int i = 0; i < b.o.nsizes; i++)
        order[i] = i;
    shuffle(order, b.o.nsizes, b.o.seed);
    size_t cap = 4 * (size_t)b.o.reps;  /* window sync re-runs late repetitions, up to 4x */
    double *t = malloc(sizeof *t * cap), *ok = malloc(sizeof *ok * cap);
    int *valid = malloc(sizeof *valid * cap);
    double t_start = MPI_Wtime();
    for (int k = 0; k < b.o.nsizes; k++) {
        size_t req = b.o.sizes[order[k]], n = b.o.op->bytes(req);
        for (int i = 0; i < b.o.warmup; i++)
            b.o.op->run(b.sbuf, b.rbuf, n, b.o.root, MPI_COMM_WORLD);
        double w = 0;
        int ran = b.o.reps;
        if (b.o.window_sync) {
            w = pick_window(&b, n, rtt);
            ran = run_window_until(&b, n, b.o.reps, &w, t, valid);
        } else {
            run_barrier(&b, n, b.o.reps, t, valid);
        }
        if (b.rank != 0)
            continue;
        int nv = 0;
        for (int i = 0; i < ran; i++)
            if (valid[i])
                ok[nv++] = t[i];
        printf("{\"event\":\"point\",\"index\":%d,\"order\":%d,\"size\":%zu,\"bytes\":%zu,"
               "\"reps\":%d,\"valid\":%d,\"window_us\":%.3f",
               order[k], k, req, n, ran, nv, w * 1e6);
        if (nv) {
            qsort(ok, (size_t)nv, sizeof *ok, cmp_double);
            printf(",\"min_us\":%.4f,\"median_us\":%.4f,\"p90_us\":%.4f,\"max_us\":%.4f,\"samples_us\":[",
                   ok[0] * 1e6, quantile(ok, nv, 0.5) * 1e6, quantile(ok, nv, 0.9) * 1e6, ok[nv - 1] * 1e6);
            for (int i = 0; i < nv; i++)
                printf("%s%.4f", i ? "," : "", ok[i] * 1e6);
            printf("]");
        }
        printf("}\n");
        fflush(stdout);
    }
    if (b.rank == 0) {
        printf("{\"event\":\"end\",\"seconds\":%.6f}\n", MPI_Wtime() - t_start);
        fflush(stdout);
    }
    free(order); free(t); free(ok); free(valid);
    free(b.sbuf); free(b.rbuf);
    MPI_Finalize();
    return 0;
}
