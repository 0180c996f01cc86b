/* caracal-probe: driver. Parses options, picks the mode, walks the size list
 * and prints one JSON object per line on rank 0's stdout (start, one per size,
 * end); `caracal probe` turns them into a progress bar, a table and the
 * caracal.probe/1 document. Bad options: one line on stderr, exit status 2. */
#include "probe.h"
#include "tool_args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double parse_double(const char *opt, const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || v > 3600)
        tool_usage_error("%s expects seconds (0 < S <= 3600), got '%s'", opt, s);
    return v;
}

static int one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return 1;
    return 0;
}

static void parse(int argc, char **argv, struct probe_opts *o)
{
    static const char *const modes[] = {"pingpong", "stream", "bidir", "put", "get",
                                        "integrity", "multipair", NULL};
    *o = (struct probe_opts){.mode = "pingpong", .transport = "mpi", .lo = 1, .hi = 1 << 20,
                             .per_octave = 2, .perturb = 3, .budget = 0.05, .trials = 5,
                             .min_reps = 8, .window = 16, .sync = "fence", .streams = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) tool_usage_error("%s needs a value", a); i++; } while (0)
        if (!strcmp(a, "--mode")) { NEEDV(); o->mode = v; }
        else if (!strcmp(a, "--transport")) { NEEDV(); o->transport = v; }
        else if (!strcmp(a, "--min")) { NEEDV(); o->lo = tool_parse_bytes(a, v); }
        else if (!strcmp(a, "--max")) { NEEDV(); o->hi = tool_parse_bytes(a, v); }
        else if (!strcmp(a, "--per-octave")) { NEEDV(); o->per_octave = (int)tool_parse_long(a, v, 1, 64); }
        else if (!strcmp(a, "--perturb")) { NEEDV(); o->perturb = (int)tool_parse_long(a, v, 0, 1 << 20); }
        else if (!strcmp(a, "--no-perturb")) o->perturb = 0;
        else if (!strcmp(a, "--nocache")) o->nocache = 1;
        else if (!strcmp(a, "--one-buffer")) o->one_buffer = 1;
        else if (!strcmp(a, "--budget")) { NEEDV(); o->budget = parse_double(a, v); }
        else if (!strcmp(a, "--trials")) { NEEDV(); o->trials = (int)tool_parse_long(a, v, 1, 1000); }
        else if (!strcmp(a, "--min-reps")) { NEEDV(); o->min_reps = tool_parse_long(a, v, 1, 1L << 30); }
        else if (!strcmp(a, "--window")) { NEEDV(); o->window = (int)tool_parse_long(a, v, 1, 4096); }
        else if (!strcmp(a, "--sync")) { NEEDV(); o->sync = v; }
        else if (!strcmp(a, "--pairs")) { NEEDV(); o->pairs = (int)tool_parse_long(a, v, 1, 1 << 20); }
        else if (!strcmp(a, "--streams")) { NEEDV(); o->streams = (int)tool_parse_long(a, v, 1, 64); }
        else if (!strcmp(a, "--stripe-min")) { NEEDV(); o->stripe_min = tool_parse_bytes(a, v); }
        else if (!strcmp(a, "--bind")) {
            NEEDV();
            if (o->nbind == PROBE_MAX_BIND)
                tool_usage_error("at most %d --bind addresses", PROBE_MAX_BIND);
            o->bind[o->nbind++] = v;
        }
        else if (!strcmp(a, "--print-sizes")) o->print_sizes = 1;
        else tool_usage_error("unknown option '%s' (see caracal probe --help)", a);
#undef NEEDV
    }
    if (!one_of(o->mode, modes))
        tool_usage_error("unknown mode '%s' (pingpong, stream, bidir, put, get, integrity, multipair)", o->mode);
    if (strcmp(o->transport, "mpi") && strcmp(o->transport, "tcp"))
        tool_usage_error("--transport is mpi or tcp, not '%s'", o->transport);
    if (strcmp(o->sync, "fence") && strcmp(o->sync, "lock"))
        tool_usage_error("--sync is fence or lock, not '%s'", o->sync);
    if (o->lo < 1)
        tool_usage_error("--min must be at least 1 byte");
    if (o->hi < o->lo)
        tool_usage_error("--max (%zu) is smaller than --min (%zu)", o->hi, o->lo);
    if (o->hi > (size_t)1 << 30)
        tool_usage_error("--max is at most 1G (MPI counts are int)");
    if (o->one_buffer && (strcmp(o->mode, "pingpong") || o->nocache || strcmp(o->transport, "mpi")))
        tool_usage_error("--one-buffer belongs to --mode pingpong over MPI without --nocache");
    if (!strcmp(o->transport, "tcp") && strcmp(o->mode, "pingpong") && strcmp(o->mode, "stream"))
        tool_usage_error("--transport tcp supports the pingpong and stream modes, not '%s'", o->mode);
}

static const char *mpi_library(void)
{
    static char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    v[strcspn(v, "\n,")] = 0;  /* first clause of the first line is the name and version */
    return v;
}

/* JSON strings we print come from argv and the MPI library: escape what JSON needs. */
static void put_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

typedef double (*run_fn)(struct probe_ctx *, size_t, long);

static run_fn pick(const struct probe_opts *o)
{
    int tcp = !strcmp(o->transport, "tcp");
    if (!strcmp(o->mode, "pingpong")) return tcp ? probe_tcp_pingpong : probe_pingpong;
    if (!strcmp(o->mode, "stream")) return tcp ? probe_tcp_stream : probe_stream;
    if (!strcmp(o->mode, "bidir")) return probe_bidir;
    if (!strcmp(o->mode, "put")) return probe_put;
    if (!strcmp(o->mode, "get")) return probe_get;
    if (!strcmp(o->mode, "multipair")) return probe_multipair;
    return NULL;
}

/* Rank 0 decides every repetition count and broadcasts it, so all ranks run
 * the same number of iterations; a returned time is only meaningful on rank 0. */
static double timed(struct probe_ctx *c, run_fn run, size_t n, long reps)
{
    double t = run(c, n, reps);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, c->comm);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Repetitions from a time budget: grow the count until a run takes an eighth of
 * one trial's share, then scale to the full share. The previous size's count is
 * the starting guess (sizes grow, so it only shrinks), keeping calibration
 * cheap. --min-reps keeps large sizes from being starved. */
static long calibrate(struct probe_ctx *c, run_fn run, size_t n, long guess)
{
    double share = c->o.budget / c->o.trials;
    long reps = guess > 0 ? guess : 1;
    for (;;) {
        double t = timed(c, run, n, reps);
        if (t >= share / 8 || reps >= (1L << 40))
            return (long)fmax((double)c->o.min_reps, ceil(reps * share / fmax(t, 1e-9)));
        long next = (long)fmin(reps * 64.0, ceil(reps * (share / 8) / fmax(t, 1e-9) * 1.2));
        reps = next > reps ? next : reps * 2;
    }
}

static void metrics(struct probe_ctx *c, size_t n, double per_rep, double *lat, double *bw, double *rate)
{
    const char *m = c->o.mode;
    double k = c->size / 2.0, w = c->o.window;
    if (!strcmp(m, "pingpong")) { *lat = per_rep / 2; *bw = n / *lat; *rate = 1 / *lat; }
    else if (!strcmp(m, "stream")) { *lat = per_rep / w; *bw = n / *lat; *rate = 1 / *lat; }
    else if (!strcmp(m, "bidir")) { *lat = per_rep; *bw = 2.0 * n / per_rep; *rate = 2 / per_rep; }
    else if (!strcmp(m, "multipair")) { *lat = per_rep / w; *bw = k * n / *lat; *rate = k / *lat; }
    else { *lat = per_rep; *bw = n / per_rep; *rate = 1 / per_rep; }  /* put, get */
}

static void measure(struct probe_ctx *c, size_t *sizes, size_t ns)
{
    run_fn run = pick(&c->o);
    int integrity = !strcmp(c->o.mode, "integrity");
    double *trial = malloc(sizeof *trial * (size_t)c->o.trials);
    long guess = 1;
    for (size_t i = 0; i < ns; i++) {
        size_t n = sizes[i];
        probe_buf_layout(&c->sbuf, n);
        probe_buf_layout(&c->rbuf, n);
        if (integrity) {
            size_t first = 0, bad = probe_integrity(c, n, c->o.trials, &first);
            if (c->rank == 0) {
                printf("{\"event\":\"point\",\"index\":%zu,\"size\":%zu,\"checked\":%d,\"bad_bytes\":%zu",
                       i, n, c->o.trials, bad);
                if (bad)
                    printf(",\"first_bad\":%zu", first);
                printf(",\"ok\":%s}\n", bad ? "false" : "true");
                fflush(stdout);
            }
            continue;
        }
        timed(c, run, n, 1);  /* warm-up: connection set-up, registration, page faults */
        long reps = calibrate(c, run, n, guess);
        guess = reps / 4 > 0 ? reps / 4 : 1;
        for (int t = 0; t < c->o.trials; t++)
            trial[t] = timed(c, run, n, reps) / reps;
        if (c->rank != 0)
            continue;
        qsort(trial, (size_t)c->o.trials, sizeof *trial, cmp_double);
        double med = c->o.trials % 2 ? trial[c->o.trials / 2]
                                     : (trial[c->o.trials / 2 - 1] + trial[c->o.trials / 2]) / 2;
        double lat, bw, rate, latm, bwm, ratem;
        metrics(c, n, trial[0], &lat, &bw, &rate);
        metrics(c, n, med, &latm, &bwm, &ratem);
        printf("{\"event\":\"point\",\"index\":%zu,\"size\":%zu,\"reps\":%ld,\"trials\":%d,"
               "\"latency_us\":%.6g,\"latency_us_median\":%.6g,"
               "\"bandwidth_MBps\":%.6g,\"bandwidth_MBps_median\":%.6g,"
               "\"msg_rate\":%.6g,\"msg_rate_median\":%.6g}\n",
               i, n, reps, c->o.trials, lat * 1e6, latm * 1e6, bw / 1e6, bwm / 1e6, rate, ratem);
        fflush(stdout);
    }
    free(trial);
}

int main(int argc, char **argv)
{
    struct probe_ctx c = {.corrupt_size = -1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    tool_args_init("caracal-probe", c.rank);
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    parse(argc, argv, &c.o);

    size_t *sizes = NULL;
    size_t ns = probe_sizes(c.o.lo, c.o.hi, c.o.per_octave, c.o.perturb, &sizes);
    if (c.o.print_sizes) {
        if (c.rank == 0)
            for (size_t i = 0; i < ns; i++)
                printf("%zu\n", sizes[i]);
        free(sizes);
        MPI_Finalize();
        return 0;
    }

    int multipair = !strcmp(c.o.mode, "multipair");
    int need = multipair ? 2 * (c.o.pairs ? c.o.pairs : world / 2) : 2;
    if (world < 2)
        tool_usage_error("needs at least 2 ranks (caracal probe -n 2)");
    if (need > world || need < 2)
        tool_usage_error("--pairs %d needs %d ranks, the job has %d", c.o.pairs, need, world);
    if (multipair && !c.o.pairs && world % 2)
        tool_usage_error("multipair needs an even number of ranks, or --pairs");
    const char *hook = getenv("CARACAL_PROBE_CORRUPT");
    if (hook && *hook)
        c.corrupt_size = (long)tool_parse_bytes("CARACAL_PROBE_CORRUPT", hook);

    c.active = c.rank < need;
    MPI_Comm_split(MPI_COMM_WORLD, c.active ? 0 : MPI_UNDEFINED, c.rank, &c.comm);
    double t_start = MPI_Wtime();
    int rc = 0;
    if (c.active) {
        MPI_Comm_size(c.comm, &c.size);
        c.peer = multipair ? (c.rank + c.size / 2) % c.size : 1 - c.rank;
        size_t llc = probe_llc_bytes();
        c.region = 2 * llc;
        /* --one-buffer: NetPIPE's cache mode sends from and receives into the same
         * buffer; at 1 MiB that measures about 15% below two buffers here, so a
         * comparison with NetPIPE should use it. */
        if (probe_buf_init(&c.sbuf, c.region, c.o.hi, c.o.nocache) ||
            (!c.o.one_buffer && probe_buf_init(&c.rbuf, c.region, c.o.hi, c.o.nocache))) {
            fprintf(stderr, "caracal-probe: rank %d: out of memory for buffers\n", c.rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (c.o.one_buffer)
            c.rbuf = c.sbuf;  /* pingpong only: never in flight in both directions at once */
        int rma = !strcmp(c.o.mode, "put") || !strcmp(c.o.mode, "get");
        int tcp = !strcmp(c.o.transport, "tcp");
        if (rma)
            probe_rma_setup(&c);
        if (tcp && probe_tcp_setup(&c))
            rc = 1;
        if (c.rank == 0 && !rc) {
            char host[256] = "";
            gethostname(host, sizeof host - 1);
            printf("{\"event\":\"start\",\"mode\":\"%s\",\"transport\":\"%s\",\"ranks\":%d,"
                   "\"active_ranks\":%d,\"points\":%zu,\"llc_bytes\":%zu,\"region_bytes\":%zu,"
                   "\"hostname\":", c.o.mode, c.o.transport, world, c.size, ns, llc,
                   c.o.nocache ? c.sbuf.bytes : (size_t)0);
            put_json_string(host);
            printf(",\"mpi_library\":");
            put_json_string(mpi_library());
            printf(",\"corrupt_hook\":%ld}\n", c.corrupt_size);
            fflush(stdout);
        }
        if (!rc)
            measure(&c, sizes, ns);
        if (rma)
            probe_rma_teardown(&c);
        if (tcp && !rc)
            probe_tcp_teardown(&c);
        probe_buf_free(&c.sbuf);
        if (!c.o.one_buffer)
            probe_buf_free(&c.rbuf);
        MPI_Comm_free(&c.comm);
    }
    if (c.rank == 0 && !rc) {
        printf("{\"event\":\"end\",\"seconds\":%.6f}\n", MPI_Wtime() - t_start);
        fflush(stdout);
    }
    free(sizes);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
