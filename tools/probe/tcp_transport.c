/* Raw TCP transport (no MPI on the data path), MP_Lite-style channel bonding.
 *
 * The program still runs under mpiexec with 2 ranks, but MPI only carries the
 * set-up (listening addresses and ports) and the timing handshake. Rank 1
 * listens on one socket per stream, rank 0 connects. With --bind X..., stream i
 * uses X = bind[i % nbind] at both ends: an IPv4 address names that address on
 * both ranks (one machine: 127.0.0.1, 127.0.0.2), an interface name each rank's
 * own IPv4 address on its interface of that name (emulated hosts: cveth0,
 * cveth1, ... of caracal testbed, one link each). Rank 1 listens on its address
 * and sends it with the port; rank 0 binds its own address as the source and
 * connects to rank 1's, so every stream stays on its own link.
 * Every message is cut into `streams` contiguous chunks, one per socket, and
 * all chunks progress together through poll(): a stalled socket does not hold
 * the others back, which is what made MP_Lite's bonding beat kernel bonding. */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *addr_of(struct probe_ctx *c, int i)
{
    return c->o.nbind ? c->o.bind[i % c->o.nbind] : "127.0.0.1";
}

/* X of --bind on this rank: an IPv4 address as it is, else the IPv4 address of the
 * interface named X here. 0 on success. */
static int resolve(const char *x, struct in_addr *out)
{
    if (inet_pton(AF_INET, x, out) == 1)
        return 0;
    struct ifaddrs *all, *a;
    int found = 0;
    if (strlen(x) >= IF_NAMESIZE || getifaddrs(&all))
        return -1;
    for (a = all; a && !found; a = a->ifa_next)
        if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && !strcmp(a->ifa_name, x)) {
            *out = ((struct sockaddr_in *)a->ifa_addr)->sin_addr;
            found = 1;
        }
    freeifaddrs(all);
    return found ? 0 : -1;
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
    /* per stream: rank 1's listening port and address (network order) */
    uint32_t *where = calloc((size_t)k * 2, sizeof *where);
    struct in_addr *mine = calloc((size_t)k, sizeof *mine);
    int *lfd = calloc((size_t)k, sizeof *lfd);
    c->fds = calloc((size_t)k, sizeof *c->fds);
    for (int i = 0; i < k; i++) {
        lfd[i] = -1;
        c->fds[i] = -1;
    }
    for (int i = 0; i < k; i++) {
        if (resolve(addr_of(c, i), &mine[i])) {
            fprintf(stderr, "caracal-probe: --bind %s is neither an IPv4 address nor an interface with one%s\n",
                    addr_of(c, i), c->rank ? " (on rank 1)" : "");
            err = -1;
            break;
        }
        if (c->rank == 1) {
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = mine[i]};
            socklen_t len = sizeof a;
            lfd[i] = socket(AF_INET, SOCK_STREAM, 0);
            if (lfd[i] < 0 || bind(lfd[i], (struct sockaddr *)&a, sizeof a) || listen(lfd[i], 1) ||
                getsockname(lfd[i], (struct sockaddr *)&a, &len)) {
                err = fail("listen on", addr_of(c, i));
                break;
            }
            where[2 * i] = ntohs(a.sin_port);
            where[2 * i + 1] = a.sin_addr.s_addr;
        }
    }
    /* every rank must learn about a failure, or the other one waits forever */
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, c->comm);
    if (!err)
        MPI_Bcast(where, 2 * k, MPI_UINT32_T, 1, c->comm);
    /* rank 0 connects every stream first (each completes into its listener's backlog), and
     * rank 1 accepts only when all of them did: a failed connect never leaves rank 1
     * blocked in accept() */
    for (int i = 0; i < k && !err && c->rank == 0; i++) {
        struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr = mine[i]}, dst = {.sin_family = AF_INET};
        char to[INET_ADDRSTRLEN] = "?";
        dst.sin_addr.s_addr = where[2 * i + 1];
        dst.sin_port = htons((unsigned short)where[2 * i]);
        inet_ntop(AF_INET, &dst.sin_addr, to, sizeof to);
        c->fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (c->fds[i] < 0 || bind(c->fds[i], (struct sockaddr *)&src, sizeof src))
            err = fail("bind to", addr_of(c, i));
        else if (connect(c->fds[i], (struct sockaddr *)&dst, sizeof dst))
            err = fail("connect to", to);
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, c->comm);
    for (int i = 0; i < k && !err && c->rank == 1; i++) {
        c->fds[i] = accept(lfd[i], NULL, NULL);
        if (c->fds[i] < 0)
            err = fail("accept on", addr_of(c, i));
    }
    for (int i = 0; i < k && !err; i++)
        tune(c->fds[i]);
    for (int i = 0; i < k; i++)
        if (lfd[i] >= 0)
            close(lfd[i]);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, c->comm);
    free(where);
    free(mine);
    free(lfd);
    if (err)
        probe_tcp_teardown(c);
    return err;
}

void probe_tcp_teardown(struct probe_ctx *c)
{
    for (int i = 0; i < c->o.streams; i++)
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    free(c->fds);
    c->fds = NULL;
}

/* Move n bytes: chunk i of the message goes over socket i. All sockets progress
 * together; send and receive are the same loop with a different syscall. A message
 * below --stripe-min goes whole over socket 0 (as MP_Lite did): its time is wakeups and
 * system calls, one per chunk, not the links' rate. */
static int xfer(struct probe_ctx *c, char *buf, size_t n, int sending)
{
    int k = n < c->o.stripe_min ? 1 : c->o.streams;
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
