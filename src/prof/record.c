#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
/* Per-call statistics: per MPI function and per call site (function, return address),
 * with log2 message-size histograms. Fixed-size tables: no allocation on the hot path. */
#include "prof.h"
#include "log.h"
#include "threads.h"

__thread int caracal_prof_depth __attribute__((tls_model("initial-exec")));
__thread void *caracal_site_override __attribute__((tls_model("initial-exec")));
__thread int caracal_site_seen __attribute__((tls_model("initial-exec")));
caracal_prof_state caracal_prof;

/* recursive: an entry point may call another (acct_coll -> comm_get) */
static pthread_mutex_t prof_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
void caracal_prof_lock(void) { caracal_lock(&prof_lock); }
void caracal_prof_unlock(void) { caracal_unlock(&prof_lock); }

int caracal_hist_bin(uint64_t bytes)
{
    if (!bytes)
        return 0;
    int b = 64 - __builtin_clzll(bytes); /* [2^(b-1), 2^b) */
    return b < CARACAL_HIST_BINS ? b : CARACAL_HIST_BINS - 1;
}

/* One histogrammed event of BYTES: its bin, and the smallest and largest size. */
static void stat_size(caracal_stat *s, uint64_t bytes)
{
    int b = caracal_hist_bin(bytes);
    if (!s->sized++ || bytes < s->bmin)
        s->bmin = bytes;
    if (bytes > s->bmax)
        s->bmax = bytes;
    s->hist[b][0]++;
    s->hist[b][1] += bytes;
}

static void stat_add(caracal_stat *s, uint64_t dt, const caracal_call *c)
{
    if (!s->count || dt < s->tmin)
        s->tmin = dt;
    if (dt > s->tmax)
        s->tmax = dt;
    s->count++;
    s->time += dt;
    s->bytes += c->bytes;
    s->sent += c->sent;
    s->recv += c->recv;
    if (!c->nohist)
        stat_size(s, c->bytes);
}

/* Open addressing on (fn, ra); the table never shrinks during a run. */
static int site_index(int fn, void *ra)
{
    uint64_t h = ((uint64_t)(uintptr_t)ra * 0x9E3779B97F4A7C15ull) ^ (uint64_t)fn * 0xC2B2AE3D27D4EB4Full;
    for (unsigned i = 0, j = (unsigned)(h >> 40) & (CARACAL_SITE_CAP - 1); i < CARACAL_SITE_CAP;
         i++, j = (j + 1) & (CARACAL_SITE_CAP - 1)) {
        caracal_site *s = &caracal_prof.sites[j];
        if (s->ra == ra && s->fn == fn)
            return (int)j;
        if (!s->ra) {
            s->ra = ra;
            s->fn = fn;
            return (int)j;
        }
    }
    return -1;
}

static void caracal_prof_commit_unlocked(caracal_call *c)
{
    uint64_t dt = c->t1 - c->t0;
    caracal_prof.t_mpi += dt;
    stat_add(&caracal_prof.fn[c->fn], dt, c);
    c->site = site_index(c->fn, c->ra ? c->ra : (void *)1);
    if (c->site >= 0)
        stat_add(&caracal_prof.sites[c->site].st, dt, c);
    else if (!caracal_prof.site_overflow++)
        caracal_warn("profiler: more than %d call sites; further sites are counted per function only",
                     CARACAL_SITE_CAP);
}

static void caracal_prof_add_bytes_unlocked(int fn, int site, uint64_t bytes)
{
    caracal_stat *s[2] = {&caracal_prof.fn[fn], site >= 0 ? &caracal_prof.sites[site].st : NULL};
    for (int i = 0; i < 2; i++)
        if (s[i]) {
            s[i]->bytes += bytes;
            s[i]->recv += bytes;
            stat_size(s[i], bytes);
        }
}

static void caracal_prof_count_comm_size_unlocked(int size)
{
    for (int i = 0; i < CARACAL_CSIZE_CAP; i++) {
        caracal_csize *e = &caracal_prof.csizes[i];
        if (e->count && e->size == size) {
            e->count++;
            return;
        }
        if (!e->count) {
            e->size = size;
            e->count = 1;
            return;
        }
    }
}

/* The entry points, under the profiler's lock (threads: prof.h) */
void caracal_prof_commit(caracal_call *c)
{
    caracal_prof_lock();
    caracal_prof_commit_unlocked(c);
    caracal_prof_unlock();
}

void caracal_prof_add_bytes(int fn, int site, uint64_t bytes)
{
    caracal_prof_lock();
    caracal_prof_add_bytes_unlocked(fn, site, bytes);
    caracal_prof_unlock();
}

void caracal_prof_count_comm_size(int size)
{
    caracal_prof_lock();
    caracal_prof_count_comm_size_unlocked(size);
    caracal_prof_unlock();
}
