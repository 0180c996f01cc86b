/* The node group's shared-memory segment: creation, mapping, unlinking. */
#define _GNU_SOURCE
#include "segment.h"
#include "config.h"
#include "log.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

/* A value every member can read in every other member's address space: the single-copy
 * test reads it through process_vm_readv. */
static const uint64_t cma_magic = 0x63617261636d6121ull;

static int cma_read_ok(const caracal_shm_seg *s, int r)
{
    uint64_t v = 0;
    struct iovec local = {&v, sizeof v}, remote = {(void *)(uintptr_t)s->info[r].probe, sizeof v};
    return process_vm_readv((pid_t)s->info[r].pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof v && v == cma_magic;
}

/* A per-collective single-copy switch: 0/off/no, 1/on/yes, or auto (only in groups of more
 * than 2: at 2 members pipelined copy-in/copy-out measured faster for bcast, and the split
 * allreduce for allreduce; bench/results/coll-assessment.md). */
static int per_coll(int setting, int n)
{
    const char *v = caracal_setting_str(setting);
    if (!strcmp(v, "auto") || !*v)
        return n > 2;
    return !(!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"));
}

/* Single copy needs the kernel's permission to read a peer's memory (Yama ptrace_scope,
 * same user namespace and credentials, CONFIG_CROSS_MEMORY_ATTACH). Find out once, by
 * doing it, and agree: a step must take the same protocol on every member. */
static void cma_setup(caracal_shm_seg *s, MPI_Comm comm)
{
    const char *mode = caracal_setting_str(CARACAL_SET_SHM_CMA);
    int want = strcmp(mode, "0") && strcmp(mode, "off") && strcmp(mode, "no");
    s->cma_min = (size_t)caracal_setting_int(CARACAL_SET_SHM_CMA_MIN);
    s->cma_reduce = (int)caracal_setting_int(CARACAL_SET_SHM_CMA_REDUCE);
    s->cma_bcast = per_coll(CARACAL_SET_SHM_CMA_BCAST, s->n);
    s->cma_allreduce = per_coll(CARACAL_SET_SHM_CMA_ALLREDUCE, s->n);
    s->cma_piece = (size_t)caracal_setting_int(CARACAL_SET_SHM_CMA_PIECE);
    if (s->cma_piece < 64)
        s->cma_piece = 64;
    s->info[s->me].pid = (int64_t)getpid();
    s->info[s->me].probe = (uint64_t)(uintptr_t)&cma_magic;
    PMPI_Barrier(comm); /* every member has published pid and probe address */
    int ok = want;
    for (int r = 0; ok && r < s->n; r++)
        if (r != s->me)
            ok = cma_read_ok(s, r);
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    s->cma = ok;
    if (want && !ok && s->me == 0 && strcmp(mode, "auto"))
        caracal_warn("shared memory: process_vm_readv is not permitted here; large messages use copy-in/copy-out");
    caracal_log("init", "node segment: single copy %s", ok ? "on" : "off");
}

enum { SEGMENT_CAP = 16 << 20, FALLBACK_SLOT = 64 << 10 };

static size_t seg_bytes(int n, size_t slot)
{
    return (CARACAL_SHM_LINES + 2) * (size_t)n * 64 + (size_t)n * CARACAL_SHM_LINES * CARACAL_SHM_SMALL +
           2 * (size_t)n * slot;
}

/* CARACAL_SHM_SLOT, at least 4 KiB, a whole number of cache lines, and small enough that the
 * group's 2n slots fit SEGMENT_CAP (large groups get smaller slots, not a huge segment). */
static size_t slot_size(int n)
{
    size_t slot = (size_t)caracal_setting_int(CARACAL_SET_SHM_SLOT);
    size_t cap = SEGMENT_CAP / (2 * (size_t)n);
    if (slot > cap)
        slot = cap;
    if (slot < 4096)
        slot = 4096;
    return (slot + 63) & ~(size_t)63;
}

/* Size the segment and back every page (0 on success). */
static int reserve(int fd, int n, size_t slot)
{
    off_t bytes = (off_t)seg_bytes(n, slot);
    return ftruncate(fd, bytes) || posix_fallocate(fd, 0, bytes);
}

void caracal_shm_hier_setup(caracal_hier *h)
{
    int l = -1;
    for (int i = 0; i < h->nlevels; i++)
        if (!strcmp(h->level[i].kind, "node"))
            l = i;
    if (l < 0 || !caracal_setting_int(CARACAL_SET_SHM))
        return;
    caracal_level *lv = &h->level[l];
    if (lv->comm == MPI_COMM_NULL)
        return; /* not a member of the node level (a socket-level non-leader) */
    int n = lv->size, me = lv->rank, ok = 1;
    size_t slot = slot_size(n);
    char name[64] = "";
    int fd = -1;
    if (me == 0) {
        unsigned long long rnd = 0;
        if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
            rnd = (unsigned long long)getpid() * 2654435761u ^ (unsigned long long)(size_t)&rnd;
        snprintf(name, sizeof name, "/caracal-%d-%016llx", (int)getpid(), rnd);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        /* reserve the pages now: a sparse segment that /dev/shm cannot back would fail later
         * with SIGBUS in the middle of a collective; without room for large slots, small ones */
        int failed = fd < 0 || reserve(fd, n, slot);
        if (failed && fd >= 0 && slot > FALLBACK_SLOT) {
            caracal_log("init", "node segment: no room in /dev/shm for %zu-byte slots; %d-byte slots", slot,
                        FALLBACK_SLOT);
            slot = FALLBACK_SLOT;
            failed = reserve(fd, n, slot);
        }
        if (failed) {
            caracal_warn("shared memory: cannot create %s (%zu bytes); the node level uses point-to-point", name,
                         seg_bytes(n, slot));
            ok = 0;
            if (fd >= 0) { /* created but not reservable: remove it now, nobody else will */
                close(fd);
                shm_unlink(name);
                fd = -1;
            }
            name[0] = 0;
        }
    }
    PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, lv->comm);
    unsigned long long slot_ull = slot; /* rank 0's, after any fallback */
    PMPI_Bcast(&slot_ull, 1, MPI_UNSIGNED_LONG_LONG, 0, lv->comm);
    slot = (size_t)slot_ull;
    size_t bytes = seg_bytes(n, slot);
    if (me != 0 && name[0])
        fd = shm_open(name, O_RDWR, 0600);
    void *base = MAP_FAILED;
    if (fd >= 0) {
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    ok = ok && base != MAP_FAILED;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, lv->comm); /* everybody mapped (or not) */
    if (me == 0 && name[0])
        shm_unlink(name);
    if (!ok) {
        if (base != MAP_FAILED)
            munmap(base, bytes);
        return;
    }
    caracal_shm_seg *s = calloc(1, sizeof *s);
    s->base = base;
    s->bytes = bytes;
    s->n = n;
    s->me = me;
    s->level = l;
    s->slot = slot;
    s->posted = (caracal_shm_flag *)base;
    s->ack = s->posted + (size_t)n * CARACAL_SHM_LINES;
    s->info = (caracal_shm_info *)(s->ack + n);
    s->small = (char *)(s->info + n);
    s->data = s->small + (size_t)n * CARACAL_SHM_LINES * CARACAL_SHM_SMALL;
    s->split_min = (size_t)caracal_setting_int(CARACAL_SET_SHM_SPLIT_MIN);
    s->chunk = (size_t)caracal_setting_int(CARACAL_SET_SHM_CHUNK);
    if (s->chunk > slot || s->chunk < 64)
        s->chunk = slot;
    cma_setup(s, lv->comm);
    caracal_log("init", "node segment: %d members, %zu-byte slots, %zu-byte chunks", n, slot, s->chunk);
    h->shm = s;
}

void caracal_shm_hier_free(caracal_hier *h)
{
    caracal_shm_seg *s = h->shm;
    if (!s)
        return;
    munmap(s->base, s->bytes);
    free(s->scratch[0]);
    free(s->scratch[1]);
    free(s);
    h->shm = NULL;
}

int caracal_shm_usable(caracal_hier *h, int l)
{
    caracal_shm_seg *s = h->shm;
    return s && s->level == l;
}

void *caracal_shm_scratch(caracal_shm_seg *s, int i, size_t bytes)
{
    if (s->scratch_bytes[i] < bytes) {
        free(s->scratch[i]);
        s->scratch[i] = malloc(bytes);
        s->scratch_bytes[i] = bytes;
    }
    return s->scratch[i];
}
