/* Differential test of Caracal's collectives: every case runs through MPI_* (Caracal,
 * preloaded) and through PMPI_* (the native library) in the same run, on identical
 * inputs, and the results must agree: integers exactly, floating point within a
 * relative 1e-12 (inputs are small integers, so sums are in fact exact), and the gaps of
 * non-contiguous datatypes must be left untouched.
 *
 * Matrix: barrier, bcast, reduce, allreduce, blocking and nonblocking x datatype (int,
 * double, strided vector, struct) x operator (sum, max, user commutative, user
 * non-commutative) x count (0, 1, 7, 4 KiB, 1 MiB + 1 element) x root x communicator
 * (world, halves, odd split with reversed order, dup), plus nonblocking collectives on
 * several communicators mixed with native requests in MPI_Waitall/Waitany/Waitsome/
 * Testall. Argument "small" trims the matrix (oversubscribed runs).
 * Expects Caracal to run at least one collective itself unless CARACAL_COLL=0. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_INT, T_DOUBLE, T_VEC, T_STRUCT, NTYPES };
enum { O_SUM, O_MAX, O_USER, O_NONCOMM, NOPS };
static const char *tname[] = {"int", "double", "vector", "struct"};
static const char *oname[] = {"sum", "max", "usersum", "noncomm"};
static MPI_Datatype types[NTYPES];
static MPI_Op ops[NOPS];
static int rank, size, failures, cases;
static const char SENT = (char)0xA5;

typedef struct { int off; int is_double; } slot;
static const slot slots[NTYPES][2] = {{{0, 0}}, {{0, 1}}, {{0, 1}, {16, 1}}, {{0, 0}, {8, 1}}};
static const int nslots[NTYPES] = {1, 1, 2, 2};
static MPI_Aint extent_of(int t) { MPI_Aint lb, e; MPI_Type_get_extent(types[t], &lb, &e); return e; }

static int type_index(MPI_Datatype dt)
{
    for (int t = 0; t < NTYPES; t++)
        if (types[t] == dt)
            return t;
    return -1;
}

/* 2x2 matrices over Z/256 packed in 32 bits: associative, not commutative */
static uint32_t matmul(uint32_t a, uint32_t b)
{
    uint32_t a0 = a & 255, a1 = a >> 8 & 255, a2 = a >> 16 & 255, a3 = a >> 24;
    uint32_t b0 = b & 255, b1 = b >> 8 & 255, b2 = b >> 16 & 255, b3 = b >> 24;
    uint32_t c0 = (a0 * b0 + a1 * b2) & 255, c1 = (a0 * b1 + a1 * b3) & 255;
    uint32_t c2 = (a2 * b0 + a3 * b2) & 255, c3 = (a2 * b1 + a3 * b3) & 255;
    return c0 | c1 << 8 | c2 << 16 | c3 << 24;
}

static void apply(void *in, void *inout, int *len, MPI_Datatype *dt, int noncomm)
{
    int t = type_index(*dt);
    if (t < 0) { fprintf(stderr, "user op: unknown datatype\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
    MPI_Aint e = extent_of(t);
    for (int i = 0; i < *len; i++)
        for (int s = 0; s < nslots[t]; s++) {
            char *a = (char *)in + i * e + slots[t][s].off, *b = (char *)inout + i * e + slots[t][s].off;
            if (slots[t][s].is_double) {
                double x, y;
                memcpy(&x, a, 8); memcpy(&y, b, 8);
                y = noncomm ? (double)matmul((uint32_t)x, (uint32_t)y) : x + y;
                memcpy(b, &y, 8);
            } else {
                int x, y;
                memcpy(&x, a, 4); memcpy(&y, b, 4);
                y = noncomm ? (int)matmul((uint32_t)x, (uint32_t)y) : x + y;
                memcpy(b, &y, 4);
            }
        }
}
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) { apply(in, inout, len, dt, 0); }
static void user_noncomm(void *in, void *inout, int *len, MPI_Datatype *dt) { apply(in, inout, len, dt, 1); }

static char *alloc_buf(int t, int count)
{
    size_t n = (size_t)(count ? count : 1) * extent_of(t);
    char *b = malloc(n);
    memset(b, SENT, n);
    return b;
}

static void fill(char *b, int t, int count, int seed, int full)
{
    MPI_Aint e = extent_of(t);
    for (int i = 0; i < count; i++)
        for (int s = 0; s < nslots[t]; s++) {
            uint32_t h = (uint32_t)(rank + 1) * 2654435761u ^ ((uint32_t)i * 40503u + (uint32_t)s * 977u + (uint32_t)seed * 7919u);
            h ^= h >> 13;
            uint32_t v = full ? h : h % 1000;
            char *p = b + i * e + slots[t][s].off;
            if (slots[t][s].is_double) { double d = v; memcpy(p, &d, 8); }
            else { int x = (int)v; memcpy(p, &x, 4); }
        }
}

static int same(const char *a, const char *b, int t, int count)
{
    MPI_Aint e = extent_of(t);
    for (int i = 0; i < count; i++) {
        for (MPI_Aint k = 0; k < e; k++) {
            int in_slot = 0;
            for (int s = 0; s < nslots[t]; s++) {
                int w = slots[t][s].is_double ? 8 : 4;
                in_slot |= k >= slots[t][s].off && k < slots[t][s].off + w;
            }
            if (!in_slot && (a[i * e + k] != SENT || b[i * e + k] != SENT))
                return 0; /* a gap was written */
        }
        for (int s = 0; s < nslots[t]; s++) {
            const char *p = a + i * e + slots[t][s].off, *q = b + i * e + slots[t][s].off;
            if (slots[t][s].is_double) {
                double x, y;
                memcpy(&x, p, 8); memcpy(&y, q, 8);
                if (fabs(x - y) > 1e-12 * fabs(y)) return 0;
            } else if (memcmp(p, q, 4)) {
                return 0;
            }
        }
    }
    return 1;
}

static void check(int ok, const char *what, const char *cname, int t, int o, int count, int root, int nb)
{
    cases++;
    if (ok)
        return;
    failures++;
    if (failures < 20)
        fprintf(stderr, "FAIL rank %d: %s%s comm=%s type=%s op=%s count=%d root=%d\n", rank, nb ? "I" : "", what,
                cname, tname[t], o >= 0 ? oname[o] : "-", count, root);
}

static int op_ok(int t, int o) { return o >= O_USER || t <= T_DOUBLE; } /* predefined ops: predefined types only */

static void run_case(MPI_Comm comm, const char *cname, int coll, int t, int o, int count, int root, int nb)
{
    int me;
    MPI_Comm_rank(comm, &me);
    int full = o == O_NONCOMM, seed = count + 31 * t + 131 * o + root;
    char *send = alloc_buf(t, count), *mine = alloc_buf(t, count), *ref = alloc_buf(t, count);
    MPI_Request req = MPI_REQUEST_NULL;
    int ok = 1;
    switch (coll) {
    case 0: /* bcast */
        if (me == root) { fill(mine, t, count, seed, full); fill(ref, t, count, seed, full); }
        if (nb) { MPI_Ibcast(mine, count, types[t], root, comm, &req); MPI_Wait(&req, MPI_STATUS_IGNORE); }
        else MPI_Bcast(mine, count, types[t], root, comm);
        PMPI_Bcast(ref, count, types[t], root, comm);
        ok = same(mine, ref, t, count);
        check(ok, "bcast", cname, t, -1, count, root, nb);
        break;
    case 1: { /* reduce; at the root also in place (not for 1 MiB: native MPICH 4.0.2 crashes on
               * MPI_Reduce with MPI_IN_PLACE at a non-zero root for large counts) */
        int inplace = me == root && count % 2 == 1 && count < 100000;
        fill(send, t, count, seed, full);
        if (inplace) fill(mine, t, count, seed, full);
        const void *sb = inplace ? MPI_IN_PLACE : send;
        if (nb) { MPI_Ireduce(sb, mine, count, types[t], ops[o], root, comm, &req); MPI_Wait(&req, MPI_STATUS_IGNORE); }
        else MPI_Reduce(sb, mine, count, types[t], ops[o], root, comm);
        PMPI_Reduce(send, ref, count, types[t], ops[o], root, comm);
        ok = me != root || same(mine, ref, t, count);
        check(ok, "reduce", cname, t, o, count, root, nb);
        break;
    }
    case 2: { /* allreduce; odd counts in place */
        int inplace = count % 2 == 1;
        fill(send, t, count, seed, full);
        if (inplace) fill(mine, t, count, seed, full);
        const void *sb = inplace ? MPI_IN_PLACE : send;
        if (nb) { MPI_Iallreduce(sb, mine, count, types[t], ops[o], comm, &req); MPI_Wait(&req, MPI_STATUS_IGNORE); }
        else MPI_Allreduce(sb, mine, count, types[t], ops[o], comm);
        PMPI_Allreduce(send, ref, count, types[t], ops[o], comm);
        ok = same(mine, ref, t, count);
        check(ok, "allreduce", cname, t, o, count, -1, nb);
        break;
    }
    }
    free(send); free(mine); free(ref);
}

/* barrier: nobody leaves before everybody has entered (checked with a one-sided flag
 * pattern through PMPI: each rank sends "entered" to rank 0 before the barrier; after the
 * barrier rank 0 must have all of them without waiting for more) */
static void barrier_case(MPI_Comm comm, const char *cname, int nb)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int token = 1, ok = 1;
    MPI_Request sreq;
    PMPI_Isend(&token, 1, MPI_INT, 0, 99, comm, &sreq);
    if (nb) { MPI_Request r; MPI_Ibarrier(comm, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
    else MPI_Barrier(comm);
    if (me == 0) {
        for (int i = 0; i < n; i++) { /* every "entered" message was sent before its barrier */
            int flag = 0, got;
            for (int spin = 0; spin < 100000 && !flag; spin++)
                PMPI_Iprobe(MPI_ANY_SOURCE, 99, comm, &flag, MPI_STATUS_IGNORE);
            if (!flag) { ok = 0; break; }
            PMPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 99, comm, MPI_STATUS_IGNORE);
        }
    }
    PMPI_Wait(&sreq, MPI_STATUS_IGNORE);
    PMPI_Barrier(comm);
    check(ok, "barrier", cname, 0, -1, 0, -1, nb);
}

/* Many nonblocking collectives outstanding at once on different communicators, mixed
 * with native point-to-point requests, completed by Waitall, Waitany, Waitsome, Testall. */
static void mixed_case(MPI_Comm *comms, int ncomm)
{
    enum { PER = 3 };
    int nreq = ncomm * PER + 2, count = 1000;
    MPI_Request *req = malloc(nreq * sizeof *req);
    int *bufs = malloc((size_t)ncomm * PER * count * sizeof(int)), *refs = malloc((size_t)ncomm * PER * count * sizeof(int));
    int *srcs = malloc((size_t)ncomm * count * sizeof(int));
    for (int mode = 0; mode < 4; mode++) {
        int k = 0;
        for (int c = 0; c < ncomm; c++) {
            int me;
            MPI_Comm_rank(comms[c], &me);
            int *b = bufs + (size_t)(c * PER) * count, *src = srcs + (size_t)c * count;
            for (int i = 0; i < count; i++) { src[i] = me * 3 + i + mode; b[i] = me == 0 ? i * 5 + mode : -1; }
            MPI_Ibcast(b, count, MPI_INT, 0, comms[c], &req[k++]);
            MPI_Iallreduce(src, b + count, count, MPI_INT, MPI_SUM, comms[c], &req[k++]);
            MPI_Ibarrier(comms[c], &req[k++]);
        }
        int right = (rank + 1) % size, left = (rank + size - 1) % size, out = rank * 7 + mode, in = -1;
        MPI_Irecv(&in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &req[k++]);
        if (mode == 0) {
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        } else if (mode == 1) {
            for (int done = 0; done < k; done++) {
                int idx;
                MPI_Waitany(k, req, &idx, MPI_STATUS_IGNORE);
                if (idx == MPI_UNDEFINED) { check(0, "waitany-undefined", "mixed", 0, -1, 0, -1, 1); break; }
            }
        } else if (mode == 2) {
            int left_ = k, *idx = malloc(k * sizeof *idx);
            while (left_ > 0) {
                int outc;
                MPI_Waitsome(k, req, &outc, idx, MPI_STATUSES_IGNORE);
                if (outc == MPI_UNDEFINED) break;
                left_ -= outc;
            }
            free(idx);
            check(left_ == 0, "waitsome", "mixed", 0, -1, 0, -1, 1);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Testall(k, req, &flag, MPI_STATUSES_IGNORE);
        }
        check(in == left * 7 + mode, "p2p-mixed", "world", 0, -1, 1, -1, 1);
        for (int c = 0; c < ncomm; c++) {
            int me;
            MPI_Comm_rank(comms[c], &me);
            int *b = bufs + (size_t)(c * PER) * count, *r = refs + (size_t)(c * PER) * count, *src = srcs + (size_t)c * count;
            for (int i = 0; i < count; i++) r[i] = i * 5 + mode;
            PMPI_Allreduce(src, r + count, count, MPI_INT, MPI_SUM, comms[c]);
            check(!memcmp(b, r, count * sizeof(int)), "ibcast-mixed", "several", 0, -1, count, 0, 1);
            check(!memcmp(b + count, r + count, count * sizeof(int)), "iallreduce-mixed", "several", 0, O_SUM, count, -1, 1);
        }
    }
    free(req); free(bufs); free(refs); free(srcs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int small = argc > 1 && !strcmp(argv[1], "small");

    types[T_INT] = MPI_INT;
    types[T_DOUBLE] = MPI_DOUBLE;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &types[T_VEC]);
    MPI_Type_commit(&types[T_VEC]);
    {
        struct s { int i; double d; };
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, 8};
        MPI_Datatype tt[2] = {MPI_INT, MPI_DOUBLE}, tmp;
        MPI_Type_create_struct(2, bl, disp, tt, &tmp);
        MPI_Type_create_resized(tmp, 0, sizeof(struct s), &types[T_STRUCT]);
        MPI_Type_commit(&types[T_STRUCT]);
        MPI_Type_free(&tmp);
    }
    ops[O_SUM] = MPI_SUM;
    ops[O_MAX] = MPI_MAX;
    MPI_Op_create(user_sum, 1, &ops[O_USER]);
    MPI_Op_create(user_noncomm, 0, &ops[O_NONCOMM]);

    MPI_Comm comms[4];
    const char *cnames[4] = {"world", "halves", "oddsplit", "dup"};
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 1, -rank, &comms[2]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[3]);

    for (int c = 0; c < 4; c++) {
        int n;
        MPI_Comm_size(comms[c], &n);
        for (int nb = 0; nb < 2; nb++)
            barrier_case(comms[c], cnames[c], nb);
        int roots[3] = {0, n - 1, n / 2}, nroots = n > 2 ? 3 : n;
        for (int t = 0; t < NTYPES; t++) {
            int counts[5] = {0, 1, 7, (int)(4096 / extent_of(t)), (int)((1 << 20) / extent_of(t)) + 1};
            for (int ci = 0; ci < 5; ci++) {
                int count = counts[ci], big = ci == 4;
                if (big && (t == T_VEC || (small && t != T_INT) || c == 3))
                    continue;
                if (small && ci == 3 && t != T_DOUBLE)
                    continue;
                for (int nb = 0; nb < 2; nb++) {
                    if ((big || small) && nb != (t + c) % 2)
                        continue; /* large/small matrix: alternate blocking and nonblocking */
                    for (int r = 0; r < nroots; r++)
                        if (!(big && r > 0))
                            run_case(comms[c], cnames[c], 0, t, -1, count, roots[r], nb);
                    for (int o = 0; o < NOPS; o++) {
                        if (!op_ok(t, o) || (big && o != O_SUM && o != O_NONCOMM) || (small && o == O_MAX))
                            continue;
                        for (int r = 0; r < nroots; r++)
                            if (!((big || small) && r > 0) || r == 1)
                                run_case(comms[c], cnames[c], 1, t, o, count, roots[r], nb);
                        run_case(comms[c], cnames[c], 2, t, o, count, -1, nb);
                    }
                }
            }
        }
    }
    mixed_case(comms, 4);

    /* intercommunicators go to the native library: same result, and Caracal does not count it */
    if (size >= 2) {
        MPI_Comm inter;
        MPI_Intercomm_create(comms[1], 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 77, &inter);
        long (*count_fn)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
        long before = count_fn ? count_fn() : 0;
        int v = rank + 1, got = -1, ref = -2;
        MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, inter);
        PMPI_Allreduce(&v, &ref, 1, MPI_INT, MPI_SUM, inter);
        check(got == ref && (!count_fn || count_fn() == before), "allreduce-intercomm", "inter", 0, O_SUM, 1, -1, 0);
        MPI_Comm_free(&inter);
    }

    long (*ran)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    const char *off = getenv("CARACAL_COLL");
    int expect = !(off && !strcmp(off, "0"));
    long nran = ran ? ran() : -1;
    if (expect && nran <= 0) {
        fprintf(stderr, "rank %d: Caracal ran no collective itself (caracal_coll_count %ld)\n", rank, nran);
        failures++;
    }
    int total;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_coll: %d ranks, %d cases per rank, %ld run by Caracal on rank 0, %d failures\n", size, cases,
               nran, total);
    for (int c = 1; c < 4; c++)
        MPI_Comm_free(&comms[c]);
    MPI_Op_free(&ops[O_USER]);
    MPI_Op_free(&ops[O_NONCOMM]);
    MPI_Type_free(&types[T_VEC]);
    MPI_Type_free(&types[T_STRUCT]);
    MPI_Finalize();
    return total ? 1 : 0;
}
