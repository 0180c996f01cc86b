/* Requests the profiler must remember: nonblocking receives (their bytes are known
 * only at completion, from the status) and persistent requests (traffic is counted
 * at each MPI_Start). Keys are the C request handles.
 *
 * A handle names a request only while the request lives: the call that completes a
 * nonblocking receive frees it, and the library may hand the same value to the next request
 * any thread creates. Under MPI_THREAD_MULTIPLE that can happen before the completing call has
 * come back to the profiler, so there a completion call takes its receives' records out of the
 * table before it calls the library (caracal_req_detach: the handles are still the caller's
 * then), accounts the completed ones from the records it holds (caracal_req_account) and puts
 * back those still in flight (caracal_req_attach: their handles were not freed). Single-threaded,
 * no other request can appear during the call: the records are found after it
 * (caracal_req_completed), as they always were. So a record in the table is always the
 * current request of its handle or a stale one whose completion the profiler did not see
 * (docs/profile-format.md, "Limits"), and a new request of that handle replaces it. */
#include "prof.h"
#include "log.h"
#include <stdlib.h>

#define REQ_CAP 65536
typedef struct {
    uint64_t key;
    int used, fn, site;
    int is_send, world;      /* persistent sends */
    uint64_t bytes;
} entry;

/* 2.5 MB each, allocated at the first request tracked: a zeroed global table would be copied
 * into every simulated rank under SMPI's privatization (docs/simulate.md, "Host memory") */
static entry *recvs, *persist;
int caracal_req_ntracked;
static int npersist, warned;

static unsigned slot_of(uint64_t k) { return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 40) & (REQ_CAP - 1); }

static entry *find(entry **table, uint64_t key, int create)
{
    if (!*table) {
        if (!create || !(*table = calloc(REQ_CAP, sizeof **table))) {
            if (create && !warned++)
                caracal_warn("profiler: out of memory for the request table; some receive bytes are not counted");
            return NULL;
        }
    }
    entry *t = *table;
    unsigned j = slot_of(key);
    for (int i = 0; i < REQ_CAP; i++, j = (j + 1) & (REQ_CAP - 1)) {
        if (t[j].used && t[j].key == key)
            return &t[j];
        if (!t[j].used) {
            if (!create)
                return NULL;
            t[j].used = 1;
            t[j].key = key;
            return &t[j];
        }
    }
    if (create && !warned++)
        caracal_warn("profiler: more than %d requests outstanding; some receive bytes are not counted", REQ_CAP);
    return NULL;
}

static void erase(entry *t, entry *e)
{
    unsigned j = (unsigned)(e - t);
    t[j].used = 0;
    for (unsigned k = (j + 1) & (REQ_CAP - 1); t[k].used; k = (k + 1) & (REQ_CAP - 1)) {
        unsigned home = slot_of(t[k].key);
        if ((k > j && (home <= j || home > k)) || (k < j && (home <= j && home > k))) {
            t[j] = t[k];
            t[k].used = 0;
            j = k;
        }
    }
}

static void caracal_req_track_recv_unlocked(MPI_Request req, int fn, int site)
{
    if (req == MPI_REQUEST_NULL)
        return;
    entry *e = find(&recvs, CARACAL_KEY(req), 0);
    if (!e && (e = find(&recvs, CARACAL_KEY(req), 1)))
        CARACAL_POKE(caracal_req_ntracked, caracal_req_ntracked + 1); /* (read unlocked: waits.c) */
    if (e) {
        e->fn = fn;
        e->site = site;
    }
}

static void caracal_req_completed_unlocked(MPI_Request req, const MPI_Status *st)
{
    entry *e = find(&recvs, CARACAL_KEY(req), 0);
    if (!e)
        return;
    caracal_call tmp = {0};
    caracal_acct_status(&tmp, st);
    caracal_prof_add_bytes(e->fn, e->site, tmp.bytes);
    erase(recvs, e);
    if (caracal_req_ntracked > 0)
        CARACAL_POKE(caracal_req_ntracked, caracal_req_ntracked - 1);
}

static void caracal_req_detach_unlocked(const MPI_Request *rqs, int n, caracal_req_rec *out)
{
    for (int i = 0; i < n; i++) {
        entry *e = rqs[i] != MPI_REQUEST_NULL && recvs ? find(&recvs, CARACAL_KEY(rqs[i]), 0) : NULL;
        out[i].fn = -1;
        if (!e)
            continue;
        out[i].fn = e->fn;
        out[i].site = e->site;
        erase(recvs, e);
        if (caracal_req_ntracked > 0)
            CARACAL_POKE(caracal_req_ntracked, caracal_req_ntracked - 1);
    }
}

static void caracal_req_persistent_unlocked(MPI_Request req, int is_send, MPI_Count count, MPI_Datatype type, int dest,
                            MPI_Comm comm, int fn, int site)
{
    if (req == MPI_REQUEST_NULL)
        return;
    entry *e = find(&persist, CARACAL_KEY(req), 1);
    if (!e)
        return;
    npersist++;
    e->fn = fn;
    e->site = site;
    e->is_send = is_send;
    e->world = -1;
    e->bytes = 0;
    if (is_send && dest != MPI_PROC_NULL && dest >= 0) {
        e->bytes = caracal_type_bytes(count, type);
        e->world = caracal_comm_world(comm, dest);
    }
}

static void caracal_req_start_unlocked(caracal_call *c, MPI_Request req)
{
    entry *e = npersist ? find(&persist, CARACAL_KEY(req), 0) : NULL;
    if (!e)
        return;
    if (!e->is_send) {
        caracal_req_track_recv(req, e->fn, e->site);
        return;
    }
    if (e->world < 0)
        return;
    c->bytes += e->bytes;
    c->sent += e->bytes;
    if (e->world < caracal_prof.nranks && caracal_prof.msgs) {
        caracal_prof.msgs[e->world]++;
        caracal_prof.bytes[e->world] += e->bytes;
    }
}

static void caracal_req_forget_unlocked(MPI_Request req)
{
    uint64_t k = CARACAL_KEY(req);
    entry *e = find(&recvs, k, 0);
    if (e) {
        erase(recvs, e);
        if (caracal_req_ntracked > 0)
            CARACAL_POKE(caracal_req_ntracked, caracal_req_ntracked - 1);
    }
    if (npersist && (e = find(&persist, k, 0))) {
        erase(persist, e);
        npersist--;
    }
}

/* The entry points, under the profiler's lock (threads: prof.h) */
void caracal_req_track_recv(MPI_Request req, int fn, int site)
{
    caracal_prof_lock();
    caracal_req_track_recv_unlocked(req, fn, site);
    caracal_prof_unlock();
}

void caracal_req_completed(MPI_Request req, const MPI_Status *st)
{
    caracal_prof_lock();
    caracal_req_completed_unlocked(req, st);
    caracal_prof_unlock();
}

void caracal_req_detach(const MPI_Request *rqs, int n, caracal_req_rec *out)
{
    caracal_prof_lock();
    caracal_req_detach_unlocked(rqs, n, out);
    caracal_prof_unlock();
}

void caracal_req_attach(MPI_Request req, caracal_req_rec *r)
{
    if (r->fn >= 0 && req != MPI_REQUEST_NULL)
        caracal_req_track_recv(req, r->fn, r->site);
    r->fn = -1;
}

void caracal_req_account(caracal_req_rec *r, const MPI_Status *st)
{
    if (r->fn < 0)
        return;
    caracal_call tmp = {0};
    caracal_acct_status(&tmp, st);
    caracal_prof_add_bytes(r->fn, r->site, tmp.bytes);
    r->fn = -1;
}

void caracal_req_persistent(MPI_Request req, int is_send, MPI_Count count, MPI_Datatype type, int dest,
                            MPI_Comm comm, int fn, int site)
{
    caracal_prof_lock();
    caracal_req_persistent_unlocked(req, is_send, count, type, dest, comm, fn, site);
    caracal_prof_unlock();
}

void caracal_req_start(caracal_call *c, MPI_Request req)
{
    caracal_prof_lock();
    caracal_req_start_unlocked(c, req);
    caracal_prof_unlock();
}

void caracal_req_forget(MPI_Request req)
{
    caracal_prof_lock();
    caracal_req_forget_unlocked(req);
    caracal_prof_unlock();
}
