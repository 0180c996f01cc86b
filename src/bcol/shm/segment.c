/* The node group's shared-memory segment: creation, mapping, unlinking. */
#define _GNU_SOURCE
#include "segment.h"
#include "single_copy.h"
#include "config.h"
#include "log.h"
#include "threads.h"
#include "under_smpi.h"
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>
#include "xalloc.h"

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
    int v = caracal_setting_switch(setting);
    return v < 0 ? n > 2 : v;
}

/* Single copy needs the kernel's permission to read a peer's memory (Yama ptrace_scope,
 * same user namespace and credentials, CONFIG_CROSS_MEMORY_ATTACH). Find out once, by
 * doing it, and agree: a step must take the same protocol on every member. */
static void cma_setup(caracal_shm_seg *s, MPI_Comm comm)
{
    int mode = caracal_setting_switch(CARACAL_SET_SHM_CMA); /* -1 auto: use if the kernel allows, silently */
    int want = mode != 0;
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
    if (mode == 1 && !ok && s->me == 0)
        caracal_warn("shared memory: process_vm_readv is not permitted here; large messages use copy-in/copy-out");
    caracal_log("init", "node segment: single copy %s", ok ? "on" : "off");
}

enum { SEGMENT_CAP = 16 << 20, FALLBACK_SLOT = 64 << 10 };

/* The node's budget (CARACAL_SHM_CAP): every segment on a node takes its bytes from one
 * counter shared by the job's processes on that node, so /dev/shm stays bounded however many
 * communicators a program keeps (a 2.5D code's rows, columns and layers, a library that dups
 * freely, IMB's communicator per benchmark). A communicator's segment starts with its control
 * lines and small buffers only (about 9 KiB per member); its data slots come in a mapping of
 * their own on its first large blocking collective (caracal_shm_slots_setup), at most
 * SLOTS_SHARE of the cap for all slots together, so that control segments keep room. When the
 * budget or /dev/shm is short: smaller slots (FALLBACK_SLOT), then none (large steps use
 * single copy, or the level's point-to-point algorithm where the kernel refuses it); a
 * communicator whose control segment does not fit has no segment (its node level runs
 * point-to-point). One warning per job, at MPI_Finalize. Bytes return to the budget when the communicator
 * is freed. The counter lives in a page of its own, created in MPI_Init over
 * MPI_COMM_TYPE_SHARED of MPI_COMM_WORLD (caracal_shm_budget_setup); where that page cannot
 * be had, each process counts for itself against its share (the cap / the node's process
 * count), and where the node cannot be found the cap is 0 (no segments): either way the
 * node's total stays within the cap. The counter is one atomic word in
 * shared memory: safe across processes and threads. */
typedef struct {
    _Atomic long long used;
} shm_budget;
static shm_budget *budget, own_budget;
static _Atomic long long budget_cap = -1;
#define SLOTS_SHARE(cap) ((cap) / 4 * 3)
static long long shm_cap(void);

void caracal_shm_budget_setup(void)
{
    MPI_Comm node;
    atomic_store(&budget_cap, shm_cap()); /* read once, before threads can take from the budget */
    if (budget)
        return;
    /* Under SMPI no segment is ever set up (caracal_shm_usable): no page either, so a killed
     * simulation leaves no /dev/shm file per simulated host, and start-up skips a world split */
    if (caracal_smpi()) {
        atomic_store(&budget_cap, 0);
        return;
    }
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
        atomic_store(&budget_cap, 0); /* no node to share a counter with: no segments (see below) */
        return;
    }
    int me, fd = -1;
    char name[64] = "";
    PMPI_Comm_rank(node, &me);
    /* one cap for the node: auto depends on the space free in /dev/shm, which moves */
    long long cap = atomic_load(&budget_cap);
    PMPI_Bcast(&cap, 1, MPI_LONG_LONG, 0, node);
    atomic_store(&budget_cap, cap);
    caracal_log("init", "shared memory: the node's cap is %lld bytes (CARACAL_SHM_CAP=%s)", cap,
                caracal_setting_str(CARACAL_SET_SHM_CAP));
    /* do this node's ranks outnumber the cores they may run on (the union of their masks)? */
    cpu_set_t mask;
    unsigned long bits[sizeof(cpu_set_t) / sizeof(unsigned long)];
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask))
        CPU_SET(0, &mask);
    memcpy(bits, &mask, sizeof bits);
    PMPI_Allreduce(MPI_IN_PLACE, bits, (int)(sizeof bits / sizeof *bits), MPI_UNSIGNED_LONG, MPI_BOR, node);
    memcpy(&mask, bits, sizeof bits);
    int nodesize, cores = CPU_COUNT(&mask);
    PMPI_Comm_size(node, &nodesize);
    caracal_wait_set_oversubscribed(nodesize > cores);
    caracal_log("init", "node: %d ranks on %d cores%s", nodesize, cores, nodesize > cores ? " (oversubscribed)" : "");
    if (me == 0) {
        unsigned long long rnd = 0;
        if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
            rnd = (unsigned long long)getpid() * 2654435761u;
        snprintf(name, sizeof name, "/caracal-budget-%d-%016llx", (int)getpid(), rnd);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, 4096) || posix_fallocate(fd, 0, 4096)) {
            if (fd >= 0) {
                close(fd);
                shm_unlink(name);
                fd = -1;
            }
            name[0] = 0;
        }
    }
    PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, node);
    if (me != 0 && name[0])
        fd = shm_open(name, O_RDWR, 0600);
    void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    int ok = p != MAP_FAILED;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
    if (me == 0 && name[0])
        shm_unlink(name);
    if (ok) {
        budget = p; /* kept mapped until the process ends: 4 KiB */
    } else {
        if (p != MAP_FAILED)
            munmap(p, 4096);
        /* No shared counter: each process counts for itself, so each gets its share of the
         * cap and the node's total stays within it (it was the whole cap per process: a node
         * of 64 ranks could take 64 caps). The same value on every member. */
        atomic_store(&budget_cap, cap / nodesize);
        caracal_log("init", "shared memory: no budget page; each of the node's %d processes counts %lld bytes",
                    nodesize, cap / nodesize);
    }
    PMPI_Comm_free(&node);
}

/* CARACAL_SHM_CAP in bytes. auto: 32 MiB, or half of /dev/shm if that is smaller (a default
 * container has 64 MiB), or half of what is free there at MPI_Init if that is smaller still:
 * the MPI library's own files (Open MPI's vader, MPICH's) and other jobs' are there already,
 * and Caracal's segments are to leave them room (node rank 0's answer is the node's). It scaled with /dev/shm (up to 1 GiB) while every communicator's
 * segment held its 1 MiB slots from creation: IMB-MPI1 splits a new communicator for every
 * benchmark and never frees them, and with 32 MiB the 7th benchmark on got small slots
 * (bench/results/suite-imb-openmpi-2*.md). Slots are now mapped only on a communicator's
 * first large blocking collective, and a communicator beyond the budget takes single copy
 * (bench/results/shm-many-comms.md measures the first and the 40th of 40 live communicators).
 * Every process of a node computes the same value from the same /dev/shm. */
static long long shm_cap(void)
{
    const char *v = caracal_setting_str(CARACAL_SET_SHM_CAP);
    if (strcasecmp(v, "auto")) {
        long long cap = caracal_setting_int(CARACAL_SET_SHM_CAP);
        if (cap != 0 || !strcmp(v, "0"))
            return cap; /* a refused value falls back to auto */
    }
    struct statvfs fs;
    long long cap = 32LL << 20;
    if (statvfs("/dev/shm", &fs))
        return cap;
    long long total = (long long)fs.f_blocks * (long long)fs.f_frsize, avail = (long long)fs.f_bavail * (long long)fs.f_frsize;
    if (total > 0 && total / 2 < cap)
        cap = total / 2;
    if (avail >= 0 && avail / 2 < cap)
        cap = avail / 2;
    return cap;
}

/* Take `bytes` (whole pages, as /dev/shm stores them) from the node's budget, keeping the
 * total within `limit`; 0 if it would exceed it. */
static int budget_take(size_t bytes, int slots)
{
    bytes = (bytes + 4095) & ~(size_t)4095;
    long long cap = atomic_load(&budget_cap);
    if (cap < 0) {
        cap = shm_cap();
        atomic_store(&budget_cap, cap);
    }
    long long limit = slots ? SLOTS_SHARE(cap) : cap;
    shm_budget *b = budget ? budget : &own_budget;
    long long was = atomic_fetch_add(&b->used, (long long)bytes);
    if (was + (long long)bytes <= limit)
        return 1;
    atomic_fetch_sub(&b->used, (long long)bytes);
    return 0;
}

static void budget_give(size_t bytes)
{
    bytes = (bytes + 4095) & ~(size_t)4095;
    atomic_fetch_sub(&(budget ? budget : &own_budget)->used, (long long)bytes);
}

/* What the budget refused in this process (only member 0 of a group asks): FULL_* bits. The
 * job's one warning is printed at MPI_Finalize (caracal_shm_budget_report): the budget is a
 * node's, so no rank knows at the moment whether another node has already said it, and a
 * warning per node (or per group) repeats the same line dozens of times in a large job. The
 * moment itself goes to the log (CARACAL_LOG=init). */
enum { FULL_CONTROL = 1, FULL_SLOTS = 2, FULL_SMALLER = 4 };
static _Atomic int refused;

static void note_full(int what)
{
    atomic_fetch_or(&refused, what);
    caracal_log("init", "shared memory: the node's budget (CARACAL_SHM_CAP=%s) or /dev/shm is full: %s",
                caracal_setting_str(CARACAL_SET_SHM_CAP),
                what == FULL_CONTROL ? "no segment, the node level runs point-to-point"
                : what == FULL_SLOTS ? "no data slots, large calls go native or point-to-point (or single copy)"
                                     : "smaller data slots");
}

void caracal_shm_budget_report(void)
{
    int all = atomic_load(&refused), rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(rank == 0 ? MPI_IN_PLACE : &all, &all, 1, MPI_INT, MPI_BOR, 0, MPI_COMM_WORLD);
    if (rank != 0 || !all)
        return;
    char what[200] = "";
    if (all & FULL_CONTROL)
        strcat(what, "; communicators without a segment ran their node level point-to-point");
    if (all & FULL_SLOTS)
        strcat(what, "; communicators without data slots ran large calls native, point-to-point or by single copy");
    else if (all & FULL_SMALLER)
        strcat(what, "; some communicators got smaller data slots");
    caracal_warn("shared memory: a node's budget (CARACAL_SHM_CAP=%s) or /dev/shm was full%s; "
                 "a larger cap (or /dev/shm) gives them the shm path", caracal_setting_str(CARACAL_SET_SHM_CAP), what);
}

/* The control part: posted and ack lines, single-copy lines, the wait line, small buffers. */
static size_t ctl_bytes(int n)
{
    return (CARACAL_SHM_LINES + 1) * (size_t)n * sizeof(caracal_shm_flag) + (size_t)n * sizeof(caracal_shm_info) +
           sizeof(caracal_wait_line) + (size_t)n * CARACAL_SHM_SMALL_RING * CARACAL_SHM_SMALL;
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

/* A new, exclusive, unpredictably named shm file (0600) in name[64]; -1 on failure. */
static int create_file(char *name)
{
    unsigned long long rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned long long)getpid() * 2654435761u ^ (unsigned long long)(size_t)&rnd;
    snprintf(name, 64, "/caracal-%d-%016llx", (int)getpid(), rnd);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        name[0] = 0;
    return fd;
}

/* Size the file and back every page now (0 on success): a sparse file that /dev/shm cannot
 * back would fail later with SIGBUS in the middle of a collective. */
static int reserve(int fd, size_t bytes)
{
    return ftruncate(fd, (off_t)bytes) || posix_fallocate(fd, 0, (off_t)bytes);
}

/* Member 0 has created `name` (empty: it could not) and taken `bytes` from the budget; every
 * member maps it, all agree, member 0 unlinks it. Returns the mapping or NULL (on every
 * member alike; the budget is given back), also when some member's local_ok is 0 (it could not
 * allocate what goes with the mapping). Collective over comm. */
static void *map_agreed(MPI_Comm comm, int me, char *name, size_t bytes, int local_ok)
{
    PMPI_Bcast(name, 64, MPI_CHAR, 0, comm);
    int fd = -1;
    if (name[0])
        fd = shm_open(name, O_RDWR, 0600);
    void *base = MAP_FAILED;
    if (fd >= 0) {
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    int ok = base != MAP_FAILED && local_ok;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm); /* everybody mapped (or not) */
    if (me == 0 && name[0])
        shm_unlink(name);
    if (ok)
        return base;
    if (base != MAP_FAILED)
        munmap(base, bytes);
    if (me == 0 && name[0])
        budget_give(bytes);
    return NULL;
}

void caracal_shm_hier_setup(caracal_hier *h)
{
    int l = -1;
    for (int i = 0; i < h->nlevels; i++)
        if (!strcmp(h->level[i].kind, "node"))
            l = i;
    if (l < 0 || !caracal_setting_int(CARACAL_SET_SHM) || caracal_smpi())
        return; /* simulated ranks share no pages (core/under_smpi.h) */
    caracal_level *lv = &h->level[l];
    if (lv->comm == MPI_COMM_NULL)
        return; /* not a member of the node level (a socket-level non-leader) */
    int n = lv->size, me = lv->rank;
    size_t bytes = ctl_bytes(n);
    char name[64] = "";
    if (me == 0) {
        int fd = create_file(name);
        if (fd >= 0) {
            int failed = 1;
            if (budget_take(bytes, 0)) {
                failed = reserve(fd, bytes) != 0;
                if (failed)
                    budget_give(bytes);
            }
            close(fd);
            if (failed) {
                note_full(FULL_CONTROL);
                shm_unlink(name); /* created but not reservable: remove it now, nobody else will */
                name[0] = 0;
            }
        }
    }
    /* the segment's state before the agreement: out of memory there means no segment on any
     * member (the node level runs point-to-point), not the end of the job */
    caracal_shm_seg *s = calloc(1, sizeof *s);
    void *base = map_agreed(lv->comm, me, name, bytes, s != NULL);
    if (!base) {
        free(s);
        return;
    }
    s->base = base;
    s->bytes = bytes;
    s->n = n;
    s->me = me;
    s->level = l;
    s->slot = slot_size(n); /* what the slots will be; none yet */
    s->posted = (caracal_shm_flag *)base;
    s->ack = s->posted + (size_t)n * CARACAL_SHM_LINES;
    s->info = (caracal_shm_info *)(s->ack + n);
    s->wait = (caracal_wait_line *)(s->info + n);
    s->small = (char *)(s->wait + 1);
    s->split_min = (size_t)caracal_setting_int(CARACAL_SET_SHM_SPLIT_MIN);
    s->chunk = (size_t)caracal_setting_int(CARACAL_SET_SHM_CHUNK);
    if (s->chunk > s->slot || s->chunk < 64)
        s->chunk = s->slot;
    cma_setup(s, lv->comm);
    /* writers wake sleepers if any member may sleep (a member's strategy is its own setting) */
    s->futex = caracal_wait_strategy() == CARACAL_WAIT_FUTEX;
    PMPI_Allreduce(MPI_IN_PLACE, &s->futex, 1, MPI_INT, MPI_MAX, lv->comm);
    caracal_log("init", "node segment: %d members, %zu bytes of control, waits %s", n, bytes,
                s->futex ? "spin then futex" : "spin/yield/nap");
    h->shm = s;
}

int caracal_shm_slots_wanted(caracal_hier *h)
{
    caracal_shm_seg *s = h->shm;
    return s && !s->slots_tried && h->level[s->level].comm != MPI_COMM_NULL;
}

void caracal_shm_slots_setup(caracal_hier *h)
{
    caracal_shm_seg *s = h->shm;
    if (!caracal_shm_slots_wanted(h))
        return;
    s->slots_tried = 1;
    MPI_Comm comm = h->level[s->level].comm;
    size_t slot = s->slot;
    char name[64] = "";
    if (s->me == 0) {
        int fd = create_file(name), failed = 1;
        for (size_t want = slot; fd >= 0 && failed; want = FALLBACK_SLOT) {
            if (want < slot)
                note_full(FULL_SMALLER);
            slot = want;
            if (budget_take(2 * (size_t)s->n * slot, 1)) {
                failed = reserve(fd, 2 * (size_t)s->n * slot) != 0;
                if (failed)
                    budget_give(2 * (size_t)s->n * slot);
            }
            if (slot <= FALLBACK_SLOT)
                break;
        }
        if (fd >= 0)
            close(fd);
        if (failed) {
            note_full(FULL_SLOTS);
            if (name[0])
                shm_unlink(name);
            name[0] = 0;
        }
    }
    unsigned long long slot_ull = slot; /* member 0's, after any fallback */
    PMPI_Bcast(&slot_ull, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    size_t bytes = 2 * (size_t)s->n * (size_t)slot_ull;
    void *data = map_agreed(comm, s->me, name, bytes, 1);
    if (!data) {
        caracal_log("init", "node segment: no data slots (large steps: %s)", s->cma ? "single copy" : "point-to-point");
        return;
    }
    s->data_base = data;
    s->data_bytes = bytes;
    s->slot = (size_t)slot_ull;
    if (s->chunk > s->slot)
        s->chunk = s->slot;
    s->data = data;
    caracal_log("init", "node segment: %d members, %zu-byte slots, %zu-byte chunks", s->n, s->slot, s->chunk);
}

/* Return the control part's pages. Under MPI_THREAD_MULTIPLE another thread may be about to
 * sleep on a flag of this segment: its wait hint (core/wait.h) is left by a check it made
 * while stepping one of this communicator's tasks, which then completed elsewhere, and the
 * communicator was freed before that thread's next sleep (test_threads_persist segfaulted in
 * caracal_wait_sleep so). The range is therefore replaced by private zero pages instead of
 * unmapped: such a sleeper reads 0 and returns within its bound. The shared pages go back
 * to /dev/shm all the same (the file was unlinked, this was its mapping); only the address
 * range stays taken (about 9 KiB per member). */
static void unmap_control(void *base, size_t bytes)
{
    if (caracal_threaded &&
        mmap(base, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
        return;
    munmap(base, bytes);
}

void caracal_shm_hier_free(caracal_hier *h)
{
    caracal_shm_seg *s = h->shm;
    if (!s)
        return;
    unmap_control(s->base, s->bytes);
    if (s->data_base)
        munmap(s->data_base, s->data_bytes);
    if (s->me == 0) /* the creator took the bytes from the node's budget */
        budget_give(s->bytes), budget_give(s->data_bytes);
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

int caracal_shm_usable_bytes(caracal_hier *h, int l, int kind, size_t bytes)
{
    caracal_shm_seg *s = h->shm;
    return s && s->level == l &&
           (bytes <= CARACAL_SHM_SMALL || caracal_shm_has_slots(s) ||
            (kind != CARACAL_SHM_K_SYNC && caracal_shm_cma_without_slots(s, kind, bytes)));
}

int caracal_shm_slots_usable(caracal_hier *h, int l)
{
    caracal_shm_seg *s = h->shm;
    return s && s->level == l && caracal_shm_has_slots(s);
}

void *caracal_shm_scratch(caracal_shm_seg *s, int i, size_t bytes)
{
    if (s->scratch_bytes[i] < bytes) {
        free(s->scratch[i]);
        s->scratch[i] = NULL; /* (an allocation failure returns through the schedule's guard) */
        s->scratch_bytes[i] = 0;
        s->scratch[i] = caracal_xmalloc(bytes);
        s->scratch_bytes[i] = bytes;
    }
    return s->scratch[i];
}
