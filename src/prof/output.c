/* At MPI_Finalize: resolve this rank's call sites, gather everything to rank 0,
 * merge (call sites by call, module and offset) and write one document. After
 * MPI_Abort, a crash or a signal: write this rank's piece instead, PATH.rank<N>.json. */
#define _GNU_SOURCE
#include "doc.h"
#include "log.h"
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "xalloc.h"

static int piece_written;

/* Write through a fresh temporary file beside PATH, then rename, so nobody reads half a
 * document. The temporary is created exclusively (O_EXCL: an existing file or a planted
 * symlink at that name is never opened, let alone overwritten); a taken name moves on to the
 * next suffix. Only open/snprintf: this also runs in a signal handler (partial pieces). */
static int write_doc(const char *path, const caracal_doc *d, caracal_jw *w)
{
    char tmp[4200];
    int fd = -1;
    for (int k = 0; k < 64 && fd < 0; k++) {
        snprintf(tmp, sizeof tmp, "%s.tmp%d.%d", path, (int)getpid(), k);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd < 0)
        return -1;
    caracal_jw_init(w, fd);
    caracal_doc_write(w, d);
    int rc = caracal_jw_flush(w);
    close(fd);
    if (rc || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int used_sites(const caracal_site **out)
{
    int n = 0;
    for (int i = 0; i < CARACAL_SITE_CAP; i++)
        if (caracal_prof.sites[i].ra && caracal_prof.sites[i].st.count + caracal_prof.sites[i].st.bytes)
            out[n++] = &caracal_prof.sites[i];
    return n;
}

/* ---------------- partial piece ---------------- */

/* allocated when profiling starts: a fatal signal's handler writes the piece without malloc */
static const caracal_site **p_sites;
static caracal_where *p_where;
static caracal_msite *p_msites;
static caracal_jw *p_writer, *writer;
static caracal_rank_info p_info;

int caracal_prof_piece_alloc(void)
{
    p_sites = calloc(CARACAL_SITE_CAP, sizeof *p_sites);
    p_where = calloc(CARACAL_SITE_CAP, sizeof *p_where);
    p_msites = calloc(CARACAL_SITE_CAP, sizeof *p_msites);
    p_writer = calloc(1, sizeof *p_writer);
    writer = calloc(1, sizeof *writer);
    return p_sites && p_where && p_msites && p_writer && writer ? 0 : -1;
}

void caracal_prof_write_piece(int in_signal)
{
    if (piece_written || !caracal_prof.nranks || !caracal_prof_path || !p_msites)
        return;
    piece_written = 1;
    caracal_prof_on = 0;
    caracal_prof.t_end = caracal_now();
    caracal_prof_times_to_ns();
    int n = used_sites(p_sites);
    caracal_resolve(p_sites, n, p_where, !in_signal);
    for (int i = 0; i < n; i++) {
        p_msites[i].fn = p_sites[i]->fn;
        p_msites[i].at = p_where[i];
        p_msites[i].st = p_sites[i]->st;
    }
    caracal_rank_info_fill(&p_info, 1);
    caracal_doc d = {
        .nranks = caracal_prof.nranks, .partial = 1, .single = caracal_prof.rank,
        .ranks = &p_info, .nranks_info = 1, .fn = caracal_prof.fn, .sites = p_msites, .nsites = n,
        .msgs = caracal_prof.msgs, .bytes = caracal_prof.bytes,
        .coll = caracal_prof.coll, .ncoll = CARACAL_COLL_CAP, .roots = caracal_prof.roots, .nroots = CARACAL_ROOT_CAP,
    };
    char path[4200];
    snprintf(path, sizeof path, "%s.rank%d.json", caracal_prof_path, caracal_prof.rank);
    if (write_doc(path, &d, p_writer) && !in_signal)
        caracal_warn("profiler: cannot write %s", path);
}

/* ---------------- gathered document ---------------- */

typedef struct {
    int fn, line;
    uint64_t offset;
    caracal_stat st;
    unsigned short len[4]; /* module, function, file, inlining chain, each with its NUL; 0 = NULL */
} wire_site;

static size_t pack_sites(const caracal_site **s, const caracal_where *at, int n, char **out)
{
    size_t cap = 0;
    for (int i = 0; i < n; i++) {
        cap += sizeof(wire_site);
        const char *str[4] = {at[i].module, at[i].function, at[i].file, at[i].inlined};
        for (int k = 0; k < 4; k++)
            cap += str[k] ? strnlen(str[k], 4000) + 1 : 0;
    }
    char *buf = caracal_xmalloc(cap + 1), *p = buf;
    for (int i = 0; buf && i < n; i++) {
        wire_site w = {.fn = s[i]->fn, .line = at[i].line, .offset = at[i].offset, .st = s[i]->st};
        const char *str[4] = {at[i].module, at[i].function, at[i].file, at[i].inlined};
        for (int k = 0; k < 4; k++)
            w.len[k] = str[k] ? (unsigned short)(strnlen(str[k], 4000) + 1) : 0;
        memcpy(p, &w, sizeof w);
        p += sizeof w;
        for (int k = 0; k < 4; k++)
            if (w.len[k]) {
                memcpy(p, str[k], w.len[k] - 1u);
                p[w.len[k] - 1] = 0;
                p += w.len[k];
            }
    }
    *out = buf;
    return buf ? cap : 0;
}

static uint64_t site_hash(int fn, const char *module, uint64_t off)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)fn;
    for (const char *c = module ? module : ""; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return (h ^ off) * 0x9E3779B97F4A7C15ull;
}

static void stat_merge(caracal_stat *a, const caracal_stat *b)
{
    if (!b->count && !b->bytes)
        return;
    if (b->count && (!a->count || b->tmin < a->tmin))
        a->tmin = b->tmin;
    if (b->tmax > a->tmax)
        a->tmax = b->tmax;
    if (b->sized && (!a->sized || b->bmin < a->bmin))
        a->bmin = b->bmin;
    if (b->bmax > a->bmax)
        a->bmax = b->bmax;
    a->count += b->count;
    a->time += b->time;
    a->bytes += b->bytes;
    a->sent += b->sent;
    a->recv += b->recv;
    a->sized += b->sized;
    for (int k = 0; k < CARACAL_HIST_BINS; k++) {
        a->hist[k][0] += b->hist[k][0];
        a->hist[k][1] += b->hist[k][1];
    }
}

/* Merge all ranks' packed sites into M (capacity = total), returns how many. */
static int merge_sites(const char *buf, const int *counts, const int *displs, int nranks, int total_sites,
                       caracal_msite *m)
{
    size_t hcap = 16;
    while (hcap < (size_t)total_sites * 2)
        hcap <<= 1;
    int *table = malloc(sizeof(int) * hcap), nm = 0;
    if (!table)
        return 0;
    memset(table, -1, sizeof(int) * hcap);
    for (int r = 0; r < nranks; r++) {
        const char *p = buf + displs[r], *end = p + counts[r];
        while (p + sizeof(wire_site) <= end) {
            wire_site w;
            memcpy(&w, p, sizeof w);
            p += sizeof w;
            const char *str[4] = {NULL, NULL, NULL, NULL};
            for (int k = 0; k < 4; k++)
                if (w.len[k]) {
                    str[k] = p;
                    p += w.len[k];
                }
            size_t j = site_hash(w.fn, str[0], w.offset) & (hcap - 1);
            for (; table[j] >= 0; j = (j + 1) & (hcap - 1)) {
                caracal_msite *e = &m[table[j]];
                if (e->fn == w.fn && e->at.offset == w.offset &&
                    ((!e->at.module && !str[0]) || (e->at.module && str[0] && !strcmp(e->at.module, str[0]))))
                    break;
            }
            if (table[j] < 0) {
                table[j] = nm;
                caracal_msite *e = &m[nm++];
                memset(e, 0, sizeof *e);
                e->fn = w.fn;
                e->at.offset = w.offset;
                e->at.module = str[0];
                uint64_t *pr = calloc((size_t)nranks * 7, sizeof(uint64_t));
                uint64_t **to[7] = {&e->pr_count, &e->pr_time, &e->pr_bytes, &e->pr_tmin, &e->pr_tmax,
                                    &e->pr_sent, &e->pr_recv};
                for (int k = 0; k < 7; k++)
                    *to[k] = pr ? pr + (size_t)k * (size_t)nranks : NULL;
            }
            caracal_msite *e = &m[table[j]];
            if (!e->at.function)
                e->at.function = str[1];
            if (!e->at.file && str[2]) {
                e->at.file = str[2];
                e->at.line = w.line;
            }
            if (!e->at.inlined)
                e->at.inlined = str[3];
            stat_merge(&e->st, &w.st);
            if (e->pr_count) {
                e->pr_count[r] += w.st.count;
                e->pr_time[r] += w.st.time;
                e->pr_bytes[r] += w.st.bytes;
                e->pr_sent[r] += w.st.sent;
                e->pr_recv[r] += w.st.recv;
                if (w.st.count && (!e->pr_tmin[r] || w.st.tmin < e->pr_tmin[r]))
                    e->pr_tmin[r] = w.st.tmin;
                if (w.st.tmax > e->pr_tmax[r])
                    e->pr_tmax[r] = w.st.tmax;
            }
        }
    }
    free(table);
    return nm;
}

/* Gather variable-length byte blobs to rank 0. */
static char *gatherv(const void *mine, int n, int nranks, int **counts, int **displs)
{
    int me = caracal_prof.rank;
    *counts = me ? NULL : calloc((size_t)nranks, sizeof(int));
    *displs = me ? NULL : calloc((size_t)nranks, sizeof(int));
    PMPI_Gather(&n, 1, MPI_INT, *counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (!me) {
        long long tot = 0;
        for (int r = 0; r < nranks; r++) {
            (*displs)[r] = (int)tot;
            tot += (*counts)[r];
        }
        all = caracal_xmalloc((size_t)tot + 1);
    }
    PMPI_Gatherv(mine, n, MPI_BYTE, all, *counts, *displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    return all;
}

static int pack_used(const void *table, size_t esz, int cap, size_t off_calls, char **out)
{
    const char *t = table;
    int n = 0;
    char *buf = caracal_xmalloc(esz * (size_t)cap + 1);
    for (int i = 0; buf && i < cap; i++) {
        uint64_t calls;
        memcpy(&calls, t + esz * (size_t)i + off_calls, sizeof calls);
        if (calls)
            memcpy(buf + esz * (size_t)n++, t + esz * (size_t)i, esz);
    }
    *out = buf;
    return n * (int)esz;
}

static void summary(const caracal_doc *d, caracal_msite *m, int nm, const char *path)
{
    double tot = 0, mpi = 0;
    for (int r = 0; r < d->nranks_info; r++) {
        tot += d->ranks[r].time_total;
        mpi += d->ranks[r].time_mpi;
    }
    fprintf(stderr, "caracal: profile of %d ranks written to %s\n", d->nranks, path);
    fprintf(stderr, "caracal: time in MPI %.3f s of %.3f s (%.1f%%), summed over ranks\n", mpi, tot,
            tot > 0 ? 100.0 * mpi / tot : 0.0);
    for (int k = 0; k < nm && k < 3; k++)
        fprintf(stderr, "caracal:   %d. %-14s %s (%s:%d)  %.3f s, %llu calls, %llu bytes\n", k + 1,
                caracal_fn_names[m[k].fn], m[k].at.function ? m[k].at.function : "?",
                m[k].at.file ? m[k].at.file : (m[k].at.module ? m[k].at.module : "?"), m[k].at.line,
                (double)m[k].st.time * 1e-9, (unsigned long long)m[k].st.count, (unsigned long long)m[k].st.bytes);
}

void caracal_prof_gather_and_write(void)
{
    int nranks = caracal_prof.nranks, me = caracal_prof.rank;
    MPI_Comm w = MPI_COMM_WORLD;

    /* call sites, resolved here because addresses are this process's */
    const caracal_site **sites = caracal_xcalloc(CARACAL_SITE_CAP, sizeof *sites);
    caracal_where *at = caracal_xcalloc(CARACAL_SITE_CAP, sizeof *at);
    int ns = sites && at ? used_sites(sites) : 0;
    caracal_resolve(sites, ns, at, 1);
    char *packed;
    int plen = (int)pack_sites(sites, at, ns, &packed);
    int *scounts, *sdispls;
    char *allsites = gatherv(packed, plen, nranks, &scounts, &sdispls);

    /* per rank facts */
    caracal_rank_info mine, *infos = me ? NULL : calloc((size_t)nranks, sizeof *infos);
    caracal_rank_info_fill(&mine, 0);
    PMPI_Gather(&mine, sizeof mine, MPI_BYTE, infos, sizeof mine, MPI_BYTE, 0, w);

    /* per function: sums, minima, maxima */
    /* sums: count, time, bytes, sent, recv, sized, histogram; min/max: time, then size */
    enum { NSUM = 6 + 2 * CARACAL_HIST_BINS, F = CARACAL_FN_COUNT };
    uint64_t *sum = calloc((size_t)F * NSUM, sizeof(uint64_t));
    uint64_t *mn = calloc(2 * F, sizeof(uint64_t)), *mx = calloc(2 * F, sizeof(uint64_t));
    uint64_t *rsum = me ? NULL : calloc((size_t)F * NSUM, sizeof(uint64_t));
    uint64_t *rmn = me ? NULL : calloc(2 * F, sizeof(uint64_t));
    uint64_t *rmx = me ? NULL : calloc(2 * F, sizeof(uint64_t));
    for (int f = 0; f < F; f++) {
        const caracal_stat *s = &caracal_prof.fn[f];
        uint64_t *o = sum + (size_t)f * NSUM;
        o[0] = s->count, o[1] = s->time, o[2] = s->bytes, o[3] = s->sent, o[4] = s->recv, o[5] = s->sized;
        memcpy(o + 6, s->hist, sizeof s->hist);
        mn[f] = s->count ? s->tmin : UINT64_MAX;
        mx[f] = s->tmax;
        mn[F + f] = s->sized ? s->bmin : UINT64_MAX;
        mx[F + f] = s->bmax;
    }
    PMPI_Reduce(sum, rsum, F * NSUM, MPI_UINT64_T, MPI_SUM, 0, w);
    PMPI_Reduce(mn, rmn, 2 * F, MPI_UINT64_T, MPI_MIN, 0, w);
    PMPI_Reduce(mx, rmx, 2 * F, MPI_UINT64_T, MPI_MAX, 0, w);

    /* traffic rows */
    uint64_t *msgs = me ? NULL : calloc((size_t)nranks * (size_t)nranks, sizeof(uint64_t));
    uint64_t *bytes = me ? NULL : calloc((size_t)nranks * (size_t)nranks, sizeof(uint64_t));
    PMPI_Gather(caracal_prof.msgs, nranks, MPI_UINT64_T, msgs, nranks, MPI_UINT64_T, 0, w);
    PMPI_Gather(caracal_prof.bytes, nranks, MPI_UINT64_T, bytes, nranks, MPI_UINT64_T, 0, w);

    /* collectives and roots */
    char *cpack, *rpack;
    int clen = pack_used(caracal_prof.coll, sizeof(caracal_coll), CARACAL_COLL_CAP, offsetof(caracal_coll, calls), &cpack);
    int rlen = pack_used(caracal_prof.roots, sizeof(caracal_root), CARACAL_ROOT_CAP, offsetof(caracal_root, calls), &rpack);
    int *ccounts, *cdispls, *rcounts, *rdispls;
    char *allc = gatherv(cpack, clen, nranks, &ccounts, &cdispls);
    char *allr = gatherv(rpack, rlen, nranks, &rcounts, &rdispls);

    if (!me) {
        caracal_stat *fn = caracal_xcalloc(CARACAL_FN_COUNT, sizeof *fn);
        for (int f = 0; fn && f < CARACAL_FN_COUNT; f++) {
            const uint64_t *o = rsum + (size_t)f * NSUM;
            fn[f].count = o[0], fn[f].time = o[1], fn[f].bytes = o[2];
            fn[f].sent = o[3], fn[f].recv = o[4], fn[f].sized = o[5];
            memcpy(fn[f].hist, o + 6, sizeof fn[f].hist);
            fn[f].tmin = fn[f].count ? rmn[f] : 0;
            fn[f].tmax = rmx[f];
            fn[f].bmin = fn[f].sized ? rmn[F + f] : 0;
            fn[f].bmax = rmx[F + f];
        }
        int total_sites = 0;
        long long tot_bytes = 0;
        for (int r = 0; r < nranks; r++)
            tot_bytes += scounts[r];
        total_sites = (int)(tot_bytes / (long long)sizeof(wire_site)) + 1;
        caracal_msite *m = caracal_xcalloc((size_t)total_sites, sizeof *m);
        int nm = m ? merge_sites(allsites, scounts, sdispls, nranks, total_sites, m) : 0;
        qsort(m, (size_t)nm, sizeof *m, caracal_msite_cmp_time);

        /* collectives: sum entries with equal (fn, size) / (fn, size, root) */
        int nc = 0, nr = 0, totc = 0, totr = 0;
        for (int r = 0; r < nranks; r++) {
            totc += ccounts[r] / (int)sizeof(caracal_coll);
            totr += rcounts[r] / (int)sizeof(caracal_root);
        }
        caracal_coll *cc = caracal_xcalloc((size_t)totc + 1, sizeof *cc), *ci = (caracal_coll *)(void *)allc;
        caracal_root *rr = calloc((size_t)totr + 1, sizeof *rr), *ri = (caracal_root *)(void *)allr;
        for (int i = 0; cc && i < totc; i++) {
            int k = 0;
            while (k < nc && !(cc[k].fn == ci[i].fn && cc[k].size == ci[i].size))
                k++;
            if (k == nc)
                cc[nc++] = (caracal_coll){ci[i].fn, ci[i].size, 0, 0, 0};
            cc[k].calls += ci[i].calls, cc[k].bytes += ci[i].bytes, cc[k].root_changes += ci[i].root_changes;
        }
        for (int i = 0; rr && i < totr; i++) {
            int k = 0;
            while (k < nr && !(rr[k].fn == ri[i].fn && rr[k].size == ri[i].size && rr[k].root == ri[i].root))
                k++;
            if (k == nr)
                rr[nr++] = (caracal_root){ri[i].fn, ri[i].size, ri[i].root, 0};
            rr[k].calls += ri[i].calls;
        }
        caracal_doc d = {
            .nranks = nranks, .partial = 0, .single = -1, .ranks = infos, .nranks_info = nranks,
            .fn = fn, .sites = m, .nsites = nm, .msgs = msgs, .bytes = bytes,
            .coll = cc, .ncoll = nc, .roots = rr, .nroots = nr,
        };
        if (!fn || !m || !cc || !rr || write_doc(caracal_prof_path, &d, writer))
            caracal_warn("profiler: cannot write the profile %s", caracal_prof_path);
        else
            summary(&d, m, nm, caracal_prof_path);
        for (int k = 0; k < nm; k++)
            free(m[k].pr_count);
        free(m), free(fn), free(cc), free(rr);
    }
    piece_written = 1; /* the full document supersedes any piece */
    free(sites), free(at), free(packed), free(allsites), free(scounts), free(sdispls), free(infos);
    free(sum), free(mn), free(mx), free(rsum), free(rmn), free(rmx), free(msgs), free(bytes);
    free(cpack), free(rpack), free(allc), free(allr), free(ccounts), free(cdispls), free(rcounts), free(rdispls);
}
