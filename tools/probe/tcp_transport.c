/* Raw TCP transport (no MPI on the data path), MP_Lite-style channel bonding.
 *
 * The program still runs under mpiexec with 2 ranks, but MPI only carries the
 * set-up (listening ports) and the timing handshake. Rank 1 listens on one
 * socket per stream, rank 0 connects. With --bind ADDR..., stream i uses
 * address bind[i % nbind] at both ends (listen address on rank 1, source and
 * destination on rank 0), so streams can run over different interfaces.
 * Every message is cut into `streams` contiguous chunks, one per socket, and
 * all chunks progress together through poll(): a stalled socket does not hold
 * the others back, which is what made MP_Lite's bonding beat kernel bonding. */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *addr_of(struct probe_ctx *c, int i)
{
    return c->o.nbind ? c->o.bind[i % c->o.nbind] : "127.0.0.1";
}

static int tune(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int fail(const char *what, const char *addr)
{
    fprintf(stderr, "caracal-probe: tcp %s %s: %s\n", what, addr, strerror(errno));
    return -1;
}

int probe_tcp_setup(struct probe_ctx *c)
{
    int k = c->o.streams, err = 0;
    int *ports = calloc((size_t)k, sizeof *ports);
    int *lfd = calloc((size_t)k, sizeof *lfd);
    c->fds = calloc((size_t)k, sizeof *c->fds);
    for (int i = 0; i < k; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET};
        if (inet_pton(AF_INET, addr_of(c, i), &a.sin_addr) != 1) {
            fprintf(stderr, "caracal-probe: --bind %s is not an IPv4 address\n", addr_of(c, i));
            err = -1;
            break;
        }
        if (c->rank == 1) {
            socklen_t len = sizeof a;
            lfd[i] = socket(AF_INET, SOCK_STREAM, 0);
            if (lfd[i] < 0 || bind(lfd[i], (struct sockaddr *)&a, sizeof a) || listen(lfd[i], 1) ||
                getsockname(lfd[i], (struct sockaddr *)&a, &len)) {
                err = fail("listen on", addr_of(c, i));
                break;
            }
            ports[i] = ntohs(a.sin_port);
        }
    }
    /* every rank must learn about a failure, or the other one waits forever */
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, c->comm);
    if (!err)
        MPI_Bcast(ports, k, MPI_INT, 1, c->comm);
    for (int i = 0; i < k && !err; i++) {
        if (c->rank == 0) {
            struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
            inet_pton(AF_INET, addr_of(c, i), &src.sin_addr);
            dst = src;
            dst.sin_port = htons((unsigned short)ports[i]);
            c->fds[i] = socket(AF_INET, SOCK_STREAM, 0);
            if (c->fds[i] < 0 || bind(c->fds[i], (struct sockaddr *)&src, sizeof src) ||
                connect(c->fds[i], (struct sockaddr *)&dst, sizeof dst))
                err = fail("connect to", addr_of(c, i));
        } else {
            c->fds[i] = accept(lfd[i], NULL, NULL);
            if (c->fds[i] < 0)
                err = fail("accept on", addr_of(c, i));
            close(lfd[i]);
        }
        if (!err)
            tune(c->fds[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, c->comm);
    free(ports);
    free(lfd);
    return err;
}

void probe_tcp_teardown(struct probe_ctx *c)
{
    for (int i = 0; i < c->o.streams; i++)
        if (c->fds[i] > 0)
            close(c->fds[i]);
    free(c->fds);
}

/* Move n bytes: chunk i of the message goes over socket i. All sockets progress
 * together; send and receive are the same loop with a different syscall. */
static int xfer(struct probe_ctx *c, char *buf, size_t n, int sending)
{
    int k = c->o.streams;
    size_t off[PROBE_MAX_BIND * 4 + 64], left[PROBE_MAX_BIND * 4 + 64];
    struct pollfd pf[PROBE_MAX_BIND * 4 + 64];
    size_t chunk = n / (size_t)k, pending = 0;
    for (int i = 0; i < k; i++) {
        off[i] = (size_t)i * chunk;
        left[i] = i == k - 1 ? n - off[i] : chunk;
        pending += left[i] > 0;
    }
    while (pending) {
        int np = 0, map[PROBE_MAX_BIND * 4 + 64];
        for (int i = 0; i < k; i++)
            if (left[i]) {
                pf[np] = (struct pollfd){.fd = c->fds[i], .events = sending ? POLLOUT : POLLIN};
                map[np++] = i;
            }
        /* one socket with work: skip poll, block in the syscall (lowest latency) */
        if (np > 1 && poll(pf, (nfds_t)np, -1) < 0 && errno != EINTR)
            return -1;
        for (int j = 0; j < np; j++) {
            int i = map[j];
            if (np > 1 && !(pf[j].revents & (POLLIN | POLLOUT | POLLERR | POLLHUP)))
                continue;
            ssize_t m = sending ? send(c->fds[i], buf + off[i], left[i], np > 1 ? MSG_DONTWAIT : 0)
                                : recv(c->fds[i], buf + off[i], left[i], np > 1 ? MSG_DONTWAIT : 0);
            if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                continue;
            if (m <= 0)
                return -1;
            off[i] += (size_t)m;
            left[i] -= (size_t)m;
            pending -= left[i] == 0;
        }
    }
    return 0;
}

static void die(void)
{
    fprintf(stderr, "caracal-probe: tcp transfer failed: %s\n", strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

double probe_tcp_pingpong(struct probe_ctx *c, size_t n, long reps)
{
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        char *s = probe_buf_slot(&c->sbuf), *d = probe_buf_slot(&c->rbuf);
        if (c->rank == 0) {
            if (xfer(c, s, n, 1) || xfer(c, d, n, 0)) die();
        } else {
            if (xfer(c, d, n, 0) || xfer(c, s, n, 1)) die();
        }
    }
    return MPI_Wtime() - t0;
}

/* stream over TCP: the socket buffers are the window; time at the receiver. */
double probe_tcp_stream(struct probe_ctx *c, size_t n, long reps)
{
    long msgs = reps * c->o.window;
    double t = 0;
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < msgs; r++) {
        if (c->rank == 0) {
            if (xfer(c, probe_buf_slot(&c->sbuf), n, 1)) die();
        } else {
            if (xfer(c, probe_buf_slot(&c->rbuf), n, 0)) die();
        }
    }
    if (c->rank == 1) {
        t = MPI_Wtime() - t0;
        MPI_Send(&t, 1, MPI_DOUBLE, 0, 3, c->comm);
    } else {
        MPI_Recv(&t, 1, MPI_DOUBLE, 1, 3, c->comm, MPI_STATUS_IGNORE);
    }
    return t;
}
