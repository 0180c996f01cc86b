/* caracal-probe: NetPIPE-class point-to-point measurement (see docs/probe-format.md).
 * Shared declarations between the driver (probe_main.c), the size list (sizes.c),
 * buffer handling (buffers.c), the modes (mode_*.c) and raw TCP (tcp_transport.c). */
#ifndef CARACAL_PROBE_H
#define CARACAL_PROBE_H

#include <mpi.h>
#include <stddef.h>

#define PROBE_MAX_BIND 16

struct probe_opts {
    const char *mode;       /* pingpong stream bidir put get integrity multipair */
    const char *transport;  /* mpi or tcp */
    size_t lo, hi;          /* size range, bytes */
    int per_octave;         /* base points per doubling */
    int perturb;            /* +-bytes around each base point, 0 = off */
    int nocache;            /* rotate buffers through more memory than the LLC */
    int one_buffer;         /* pingpong: send from and receive into one buffer, as NetPIPE does */
    double budget;          /* seconds of measurement per size (all trials together) */
    int trials;             /* independent timed runs per size; best and median reported */
    long min_reps;          /* floor so large sizes are not starved */
    int window;             /* messages in flight per repetition (stream, multipair) */
    const char *sync;       /* fence or lock (put, get) */
    int pairs;              /* multipair: number of pairs, 0 = all ranks */
    int streams;            /* tcp: sockets per message */
    size_t stripe_min;      /* tcp: messages below this go over stream 0 only (0: stripe all) */
    const char *bind[PROBE_MAX_BIND];
    int nbind;
    int print_sizes;        /* print the size list and exit (no measurement) */
};

/* A buffer region: one slot reused (cache) or many slots rotated (nocache). */
struct probe_buf {
    char *base;
    size_t bytes;           /* allocated */
    size_t stride;          /* distance between slots */
    size_t nslots;
    size_t next;
    int rotate;             /* 1 = --nocache: walk the slots; 0 = always slot 0 */
};

struct probe_ctx {
    struct probe_opts o;
    int rank, size;
    int active;             /* this rank takes part in the current mode */
    int peer;               /* partner rank (pairs) */
    MPI_Comm comm;          /* the ranks taking part */
    size_t region;          /* bytes per buffer region (>= 2 x LLC with nocache) */
    struct probe_buf sbuf, rbuf;
    MPI_Win win;            /* put/get */
    int *fds;               /* tcp: one socket per stream */
    long corrupt_size;      /* test-only hook, -1 = off */
};

/* sizes.c */
size_t probe_sizes(size_t lo, size_t hi, int per_octave, int perturb, size_t **out);

/* buffers.c */
size_t probe_llc_bytes(void);
int probe_buf_init(struct probe_buf *b, size_t region, size_t maxsize, int nocache);
void probe_buf_layout(struct probe_buf *b, size_t size);
char *probe_buf_slot(struct probe_buf *b);
void probe_buf_free(struct probe_buf *b);
void probe_fill(char *p, size_t n, unsigned seed);
size_t probe_check(const char *p, size_t n, unsigned seed, size_t *first_bad);
void probe_corrupt_hook(struct probe_ctx *c, char *p, size_t n);

/* The modes: run `reps` repetitions of one size; return elapsed seconds,
 * meaningful on rank 0 (the reporting rank). */
double probe_pingpong(struct probe_ctx *c, size_t n, long reps);
double probe_stream(struct probe_ctx *c, size_t n, long reps);
double probe_bidir(struct probe_ctx *c, size_t n, long reps);
int probe_rma_setup(struct probe_ctx *c);
double probe_put(struct probe_ctx *c, size_t n, long reps);
double probe_get(struct probe_ctx *c, size_t n, long reps);
void probe_rma_teardown(struct probe_ctx *c);
double probe_multipair(struct probe_ctx *c, size_t n, long reps);
/* integrity: returns bad bytes seen (on rank 0, summed over both ends) */
size_t probe_integrity(struct probe_ctx *c, size_t n, long reps, size_t *first_bad);

/* tcp_transport.c */
int probe_tcp_setup(struct probe_ctx *c);
double probe_tcp_pingpong(struct probe_ctx *c, size_t n, long reps);
double probe_tcp_stream(struct probe_ctx *c, size_t n, long reps);
void probe_tcp_teardown(struct probe_ctx *c);

#endif
