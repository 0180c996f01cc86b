/* Allocation-failure injection for tests: a preload (ahead of libcaracal) whose malloc,
 * calloc, realloc and strdup fail the Nth allocation made by libcaracal's own code, so the
 * test can check that every path survives it (an MPI error or a fallback, never a crash).
 * Nothing of this is in libcaracal: its hot paths pay nothing for it.
 *
 *   FAULT_ALLOC=N        fail libcaracal's Nth allocation (1 = the first) on the chosen rank
 *   FAULT_ALLOC_RANK=r   the rank that fails (OMPI_COMM_WORLD_RANK / PMI_RANK; default 0)
 *   FAULT_ALLOC_BT=1     print the failed allocation's call stack (which path a point tests)
 *   FAULT_ALLOC_COUNT=1  at exit, print how many allocations libcaracal made on that rank
 *                        (the range a sweep over N has to cover)
 * A test program may also call fault_alloc_arm(n) (found with dlsym): fail libcaracal's nth
 * allocation from now on, in this process (0: none), to fail the same call on every rank;
 * or fault_alloc_arm_size(b): fail libcaracal's next malloc of exactly b bytes (0: none), to
 * fail one buffer a running schedule takes (its size known to the test) on chosen ranks.
 *
 * An allocation is libcaracal's when the caller's return address lies in libcaracal.so's
 * mapping (found once with dl_iterate_phdr). The names do not start with CARACAL_: libcaracal
 * warns about settings it does not know. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static uintptr_t lo, hi;        /* libcaracal's loaded range */
static long target = -1;        /* the allocation to fail; -1: not set up, 0: none */
static long seen;               /* libcaracal's allocations so far */
static size_t target_size;      /* fault_alloc_arm_size: fail the next malloc of this size */
static int counting, resolving;
static __thread int inside;     /* no recursion through dl_iterate_phdr or dlsym */

/* calloc during dlsym's own setup, before the real calloc is known */
static char bootstrap[4096];
static size_t bootstrap_used;

static int find_caracal(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libcaracal.so"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            hi = lo + info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

static void setup(void)
{
    if (target >= 0 || resolving)
        return;
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    const char *n = getenv("FAULT_ALLOC"), *r = getenv("FAULT_ALLOC_RANK"), *c = getenv("FAULT_ALLOC_COUNT");
    const char *me = getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : getenv("PMI_RANK");
    int on_rank = (me ? atoi(me) : 0) == (r ? atoi(r) : 0);
    counting = on_rank && c && atoi(c);
    target = on_rank && n ? atol(n) : 0;
    resolving = 0;
}

/* 1: this allocation (from return address ra) is libcaracal's and is the one to fail */
static int fail_here_sized(void *ra, size_t bytes);
static int fail_here(void *ra) { return fail_here_sized(ra, 0); }
static int fail_here_sized(void *ra, size_t bytes)
{
    if (inside || resolving)
        return 0;
    inside = 1;
    setup();
    if (!hi && (target > 0 || counting))
        dl_iterate_phdr(find_caracal, NULL);
    inside = 0;
    uintptr_t a = (uintptr_t)ra;
    if (!hi || a < lo || a >= hi)
        return 0;
    long k = __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
    if (bytes && bytes == target_size) {
        target_size = 0;
        char msg[96];
        int len = snprintf(msg, sizeof msg, "fault_alloc: failing libcaracal's malloc of %zu bytes\n", bytes);
        if (write(2, msg, (size_t)len) < 0) {}
        return 1;
    }
    if (k != target)
        return 0;
    char msg[96];
    int len = snprintf(msg, sizeof msg, "fault_alloc: failing libcaracal's allocation %ld\n", k);
    if (write(2, msg, (size_t)len) < 0) {}
    if (getenv("FAULT_ALLOC_BT")) { /* where: to tell which path a sweep point exercises */
        void *frames[16];
        inside = 1;
        backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
        inside = 0;
    }
    return 1;
}

/* libcaracal's allocations so far in this process (a test measures a call's with it) */
long fault_alloc_seen(void);
long fault_alloc_seen(void)
{
    if (!hi) { /* from now on allocations are attributed (and counted) */
        inside = 1;
        dl_iterate_phdr(find_caracal, NULL);
        inside = 0;
    }
    return __atomic_load_n(&seen, __ATOMIC_RELAXED);
}

void fault_alloc_arm(long n);
void fault_alloc_arm(long n)
{
    setup();
    target = n > 0 ? __atomic_load_n(&seen, __ATOMIC_RELAXED) + n : 0;
}

void fault_alloc_arm_size(size_t bytes);
void fault_alloc_arm_size(size_t bytes)
{
    setup();
    fault_alloc_seen(); /* (finds libcaracal's range now) */
    target_size = bytes;
}

void *malloc(size_t n)
{
    if (fail_here_sized(__builtin_return_address(0), n))
        return NULL;
    if (!real_malloc)
        setup();
    return real_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (!real_calloc && !resolving)
        setup();
    if (!real_calloc) { /* dlsym's own calloc, before the real one is known: zeroed static memory */
        size_t bytes = (k * n + 15) & ~(size_t)15;
        if (bootstrap_used + bytes > sizeof bootstrap)
            return NULL;
        void *p = bootstrap + bootstrap_used;
        bootstrap_used += bytes;
        return p;
    }
    if (fail_here(__builtin_return_address(0)))
        return NULL;
    return real_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (fail_here(__builtin_return_address(0)))
        return NULL;
    if (!real_realloc)
        setup();
    return real_realloc(p, n);
}

void free(void *p)
{
    static void (*real_free)(void *);
    if ((char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap)
        return;
    if (!real_free)
        real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    real_free(p);
}

char *strdup(const char *s)
{
    if (fail_here(__builtin_return_address(0)))
        return NULL;
    if (!real_malloc)
        setup();
    size_t n = strlen(s) + 1;
    char *d = real_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

__attribute__((destructor)) static void report(void)
{
    if (counting)
        fprintf(stderr, "fault_alloc: libcaracal made %ld allocations\n", seen);
}
