/* records: an out-of-core record store kept in the memory of the other ranks.
 *
 * The pattern of MPI Advisor's CFOUR case: each rank owns a set of
 * fixed-size records (default 128 KiB) that do not fit its own memory, so
 * they live on the other ranks; it reads and writes them at random with
 * point-to-point messages of exactly one record. Every rank is both a client
 * (its own records) and a server (the records others keep with it).
 *
 * Protocol, by tag:
 *   TAG_READ   client -> owner: {record id}            owner replies TAG_DATA
 *   TAG_DATA   owner -> client: the record (MPI_Send)
 *   TAG_WRITE  client -> owner: the record             owner replies TAG_ACK
 *   TAG_ACK    owner -> client: {status} (MPI_Send)
 * A client posts the receive for the reply before it sends the request, and
 * while it waits it serves incoming requests; a server answers with a
 * blocking MPI_Send only into such a pre-posted receive, and receives a
 * write with MPI_Recv only after MPI_Iprobe has seen it. No rank ever blocks
 * waiting for a rank that waits for it, at any number of ranks (1 rank talks
 * to itself). When a client is done it enters MPI_Ibarrier and keeps serving
 * until everybody is done.
 *
 * Check: a record holds (id, version) and a payload derived from both; each
 * record is written only by the rank it belongs to, which remembers the last
 * version it wrote. Every read must return exactly that version with an
 * intact payload; the owner rejects a write whose payload is damaged or
 * whose version does not increase. A final pass reads every record back. */
#include <mpi.h>
#include "example_args.h"
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_READ = 11, TAG_DATA, TAG_WRITE, TAG_ACK };
enum { ACK_OK = 0, ACK_NOT_MINE, ACK_DAMAGED, ACK_STALE };

static const char *usage =
    "usage: records [-h] [-s SIZE] [-r RECORDS] [-n OPS] [-w PERCENT] [-S SEED]\n"
    "  Out-of-core record store: every rank keeps RECORDS records of SIZE bytes\n"
    "  on the other ranks and reads or writes them at random, OPS times.\n"
    "  -s SIZE     record size in bytes, k/m suffix allowed (default 128k; >= 16, multiple of 8)\n"
    "  -r RECORDS  records per rank (default 16)\n"
    "  -n OPS      random reads and writes per rank (default 200)\n"
    "  -w PERCENT  share of writes among the operations (default 50)\n"
    "  -S SEED     random seed (default 1)\n";

static int rank, nranks;
static long rec_size, rec_per_rank;
static size_t words;             /* rec_size / 8 */
static uint64_t *store;          /* records this rank keeps, one after the other */
static long *slot_of;            /* record id -> index in store, -1 if kept elsewhere */
static uint64_t *scratch;        /* incoming writes land here before they are checked */
static long served_reads, served_writes, bad_writes;

static int bad_usage(const char *fmt, const char *arg)
{
    return example_bad_usage("records", rank, fmt, arg);
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Rank c's record j has id c * rec_per_rank + j and lives on one of the
 * other ranks, spread round-robin (on its own rank when running alone). */
static int owner_of(long id)
{
    long c = id / rec_per_rank, j = id % rec_per_rank;
    return nranks == 1 ? 0 : (int)((c + 1 + j % (nranks - 1)) % nranks);
}

static void fill(uint64_t *r, long id, uint64_t version)
{
    r[0] = (uint64_t)id;
    r[1] = version;
    uint64_t base = mix(((uint64_t)id << 32) ^ version);
    for (size_t w = 2; w < words; w++)
        r[w] = mix(base + w);
}

/* 0 if r is an intact record; otherwise says what is wrong in why. */
static int damaged(const uint64_t *r, char *why, size_t len)
{
    uint64_t base = mix((r[0] << 32) ^ r[1]);
    for (size_t w = 2; w < words; w++) {
        if (r[w] != mix(base + w)) {
            snprintf(why, len, "payload word %zu does not match (id %llu, version %llu)", w,
                     (unsigned long long)r[0], (unsigned long long)r[1]);
            return 1;
        }
    }
    return 0;
}

/* Answer at most one pending request of each kind; returns how many. */
static int serve(void)
{
    int flag, done = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_READ, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
        int64_t id;
        MPI_Recv(&id, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_READ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long s = id >= 0 && id < nranks * rec_per_rank ? slot_of[id] : -1;
        if (s < 0) {  /* only a bug on the client side can get here */
            fprintf(stderr, "records: rank %d asked rank %d for record %lld, which it does not keep\n",
                    st.MPI_SOURCE, rank, (long long)id);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Send(store + (size_t)s * words, (int)rec_size, MPI_BYTE, st.MPI_SOURCE, TAG_DATA, MPI_COMM_WORLD);
        served_reads++;
        done++;
    }
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_WRITE, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
        MPI_Recv(scratch, (int)rec_size, MPI_BYTE, st.MPI_SOURCE, TAG_WRITE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int64_t status = ACK_OK;
        uint64_t id = scratch[0];
        long s = id < (uint64_t)(nranks * rec_per_rank) ? slot_of[id] : -1;
        char why[160];
        if (s < 0)
            status = ACK_NOT_MINE;
        else if (damaged(scratch, why, sizeof why))
            status = ACK_DAMAGED;
        else if (scratch[1] <= store[(size_t)s * words + 1])
            status = ACK_STALE;
        else
            memcpy(store + (size_t)s * words, scratch, (size_t)rec_size);
        if (status != ACK_OK)
            bad_writes++;
        MPI_Send(&status, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_ACK, MPI_COMM_WORLD);
        served_writes++;
        done++;
    }
    return done;
}

/* Wait for n <= 2 requests while serving everybody else's. */
static void wait_serving(int n, MPI_Request *req)
{
    for (;;) {
        int flag;
        MPI_Status st[2];  /* not MPI_STATUSES_IGNORE: gcc's bounds check trips on MPICH's prototype */
        MPI_Testall(n, req, &flag, st);
        if (flag)
            return;
        if (!serve())
            sched_yield();  /* oversubscribed ranks: let the one we wait for run */
    }
}

static uint64_t *buf;
static uint64_t *version;        /* last version written of each of my records */
static long errors;

static void report_error(const char *fmt, long id, const char *detail)
{
    if (errors++ < 5) {
        fprintf(stderr, "records: rank %d: record %ld: ", rank, id);
        fprintf(stderr, fmt, detail);
        fputc('\n', stderr);
    }
}

static void do_read(long j)
{
    long id = rank * rec_per_rank + j;
    int owner = owner_of(id);
    int64_t req_id = id;
    MPI_Request req[2];
    MPI_Irecv(buf, (int)rec_size, MPI_BYTE, owner, TAG_DATA, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&req_id, 1, MPI_INT64_T, owner, TAG_READ, MPI_COMM_WORLD, &req[1]);
    wait_serving(2, req);
    char why[160];
    if (buf[0] != (uint64_t)id) {
        snprintf(why, sizeof why, "read returned record %llu", (unsigned long long)buf[0]);
        report_error("%s", id, why);
    } else if (buf[1] != version[j]) {
        snprintf(why, sizeof why, "read returned version %llu, last written %llu",
                 (unsigned long long)buf[1], (unsigned long long)version[j]);
        report_error("%s", id, why);
    } else if (damaged(buf, why, sizeof why)) {
        report_error("%s", id, why);
    }
}

static void do_write(long j)
{
    long id = rank * rec_per_rank + j;
    int owner = owner_of(id);
    int64_t status = -1;
    fill(buf, id, ++version[j]);
    MPI_Request req[2];
    MPI_Irecv(&status, 1, MPI_INT64_T, owner, TAG_ACK, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(buf, (int)rec_size, MPI_BYTE, owner, TAG_WRITE, MPI_COMM_WORLD, &req[1]);
    wait_serving(2, req);
    if (status != ACK_OK) {
        static const char *what[] = {"ok", "owner does not keep it", "owner found it damaged",
                                     "owner has a newer version"};
        report_error("write rejected: %s", id, status > 0 && status <= ACK_STALE ? what[status] : "bad status");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    long ops = 200, write_pct = 50, seed = 1;
    rec_size = 128 * 1024;
    rec_per_rank = 16;
    for (int a = 1; a < argc; a++) {
        const char *opt = argv[a];
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            if (rank == 0)
                fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (opt[0] != '-' || !strchr("srnwS", opt[1]) || opt[2])
            return bad_usage(opt[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", opt);
        if (a + 1 >= argc)
            return bad_usage("missing value for %s", opt);
        const char *v = argv[++a];
        switch (opt[1]) {
        case 's':
            if (example_parse_long(v, 16, 1L << 26, &rec_size) || rec_size % 8)
                return bad_usage("bad record size '%s', expected 16..64m bytes, a multiple of 8", v);
            break;
        case 'r':
            if (example_parse_long(v, 1, 1L << 20, &rec_per_rank))
                return bad_usage("bad records per rank '%s', expected 1..1048576", v);
            break;
        case 'n':
            if (example_parse_long(v, 0, LONG_MAX, &ops))
                return bad_usage("bad operation count '%s', expected an integer >= 0", v);
            break;
        case 'w':
            if (example_parse_long(v, 0, 100, &write_pct))
                return bad_usage("bad write percentage '%s', expected 0..100", v);
            break;
        case 'S':
            if (example_parse_long(v, 0, LONG_MAX, &seed))
                return bad_usage("bad seed '%s', expected an integer >= 0", v);
            break;
        }
    }
    words = (size_t)rec_size / 8;

    /* Every rank knows where every record lives, so it can size its store. */
    long total = nranks * rec_per_rank, kept = 0;
    slot_of = malloc((size_t)total * sizeof *slot_of);
    for (long id = 0; slot_of && id < total; id++)
        slot_of[id] = owner_of(id) == rank ? kept++ : -1;
    store = malloc((size_t)(kept ? kept : 1) * (size_t)rec_size);
    scratch = malloc((size_t)rec_size);
    buf = malloc((size_t)rec_size);
    version = calloc((size_t)rec_per_rank, sizeof *version);
    if (!slot_of || !store || !scratch || !buf || !version) {
        fprintf(stderr, "records: rank %d: out of memory for %ld records of %ld bytes\n", rank, kept, rec_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long id = 0; id < total; id++)
        if (slot_of[id] >= 0)
            fill(store + (size_t)slot_of[id] * words, id, 0);

    uint64_t rng = mix((uint64_t)seed * 0x100000001b3ull + (uint64_t)rank);
    double t_read = 0, t_write = 0;
    long n_read = 0, n_write = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < ops; i++) {
        rng = mix(rng);
        long j = (long)(rng % (uint64_t)rec_per_rank);
        int write = (long)((rng >> 32) % 100) < write_pct;
        double t = MPI_Wtime();
        if (write) {
            do_write(j);
            t_write += MPI_Wtime() - t;
            n_write++;
        } else {
            do_read(j);
            t_read += MPI_Wtime() - t;
            n_read++;
        }
    }
    double elapsed = MPI_Wtime() - t0;
    for (long j = 0; j < rec_per_rank; j++)  /* final state: every record as last written */
        do_read(j);

    MPI_Request done;
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    wait_serving(1, &done);

    /* Aggregate bandwidth: each client's bytes over its own time, summed. */
    double mb = (double)rec_size / 1e6;
    double mine[4] = {t_read > 0 ? n_read * mb / t_read : 0, t_write > 0 ? n_write * mb / t_write : 0,
                      elapsed, 0};
    double sums[4];
    long counts[4] = {n_read, n_write, errors + bad_writes, served_reads + served_writes}, totals[4];
    MPI_Reduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine[2], &sums[2], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(counts, totals, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = totals[2] == 0 && totals[3] == totals[0] + totals[1] + nranks * rec_per_rank;
    if (rank == 0) {
        if (totals[3] != totals[0] + totals[1] + nranks * rec_per_rank)
            fprintf(stderr, "records: %ld requests served, %ld issued\n", totals[3],
                    totals[0] + totals[1] + nranks * rec_per_rank);
        printf("records: ranks=%d record=%ld B records/rank=%ld ops/rank=%ld reads=%ld %.1f MB/s "
               "writes=%ld %.1f MB/s time=%.3f s check=%s\n",
               nranks, rec_size, rec_per_rank, ops, totals[0], sums[0], totals[1], sums[1], sums[2],
               ok ? "ok" : "FAILED");
    }
    free(slot_of);
    free(store);
    free(scratch);
    free(buf);
    free(version);
    MPI_Finalize();
    return ok ? 0 : 1;
}
