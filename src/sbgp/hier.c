/* Building the hierarchy: keys per rank (socket, node), then levels. */
#define _GNU_SOURCE
#include "hier.h"
#include "config.h"
#include "log.h"
#include "bcol/shm/shm.h"
#include "map/topology.h"
#include "progress.h"
#include "under_smpi.h"
#include "group_comm.h"
#include "hier_table.h"
void caracal_progress_drain(void); /* coll/call.c */
#include <hwloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"
#include "threads.h"

static int keyval = MPI_KEYVAL_INVALID;
static int tag_slots = 512;

/* hwloc's view of this node: discovered, or read from CARACAL_HWLOC_XML (an lstopo XML
 * export) while binding stays this process's own, so that a one-package machine can
 * stand in for a multi-socket one (tests) or a wrong discovery can be corrected. */
int caracal_hwloc_load(hwloc_topology_t *topo)
{
    if (hwloc_topology_init(topo))
        return -1;
    const char *xml = caracal_setting_str(CARACAL_SET_HWLOC_XML);
    if (xml && *xml) {
        /* IS_THISSYSTEM: get_cpubind then reports the real binding (without it, hwloc answers
         * with the whole XML machine and no rank would ever be inside one package) */
        if (hwloc_topology_set_xml(*topo, xml) ||
            hwloc_topology_set_flags(*topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) || hwloc_topology_load(*topo)) {
            if (caracal_world_rank <= 0)
                caracal_warn("CARACAL_HWLOC_XML=%s: cannot load this hwloc XML topology (no socket level)", xml);
            hwloc_topology_destroy(*topo);
            return -1;
        }
        return 0;
    }
    if (hwloc_topology_load(*topo)) {
        hwloc_topology_destroy(*topo);
        return -1;
    }
    return 0;
}

/* hwloc: index of the package (or NUMA node) this process is bound within; -1 when the
 * node has only one, or the process is not bound inside one. Every rank decides for
 * itself; build() adds the level only if every rank has a key, so the split is the same
 * on every rank even when only some are bound. */
static int cached_socket = -1;
static void socket_key_find(void);
static int socket_key(void)
{
    /* once per process: threads may build hierarchies at once */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, socket_key_find);
    return cached_socket;
}

static void socket_key_find(void)
{
    int cached = -1;
    if (caracal_smpi())
        return; /* a simulated host has no packages (core/under_smpi.h) */
    hwloc_topology_t topo;
    if (caracal_hwloc_load(&topo))
        return;
    hwloc_obj_type_t type = HWLOC_OBJ_PACKAGE;
    if (hwloc_get_nbobjs_by_type(topo, type) < 2)
        type = HWLOC_OBJ_NUMANODE;
    if (hwloc_get_nbobjs_by_type(topo, type) >= 2) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) && !hwloc_bitmap_iszero(set)) {
            int n = hwloc_get_nbobjs_by_type(topo, type);
            for (int i = 0; i < n; i++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, i);
                if (o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset)) {
                    cached = (int)o->logical_index;
                    break;
                }
            }
        }
        hwloc_bitmap_free(set);
    }
    hwloc_topology_destroy(topo);
    cached_socket = cached;
}

static void free_level(caracal_level *lv, const caracal_hier *h)
{
    if (lv->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&lv->comm);
    if (!h->table) /* a shared table's arrays are the table's */
        free(lv->group);
    free(lv->members);
    memset(lv, 0, sizeof *lv);
    lv->comm = MPI_COMM_NULL;
}

/* (threads: a task of this communicator may end in another thread's progress) */
void caracal_hier_retain(caracal_hier *h) { caracal_add_int(&h->refs, 1); }

void caracal_hier_release(caracal_hier *h)
{
    if (caracal_add_int(&h->refs, -1) > 0)
        return;
    caracal_shm_hier_free(h);
    for (int l = 0; l < h->nlevels; l++)
        free_level(&h->level[l], h);
    caracal_hier_table_release(h->table);
    h->flat.comm = MPI_COMM_NULL; /* it is dup */
    PMPI_Comm_free(&h->dup);
    free(h);
}

static int delete_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    caracal_hier_release(attr);
    return MPI_SUCCESS;
}

/* Memory, and the all-or-nothing agreement (issue 14). A rank that cannot get what the build
 * needs says so in an agreement, and every rank leaves the communicator to the native library
 * (nothing that could not be undone was built anywhere), instead of one rank ending the job
 * halfway through the build's collectives while the others wait in them. Two agreements:
 * the first on the allgather's receive buffer (8 bytes x n), the second after the levels
 * were computed locally; all other n-sized temporaries are taken after the allgather and
 * given back before the second agreement, so no rank holds them across a blocking call
 * (under SMPI every simulated rank holds what it holds in a blocking call at once: 100 bytes
 * x n per rank across the whole build was 25 GiB at 16,384 ranks). What stays: one n-int
 * group array per level that has several groups, and my own group's members. */
typedef struct {
    long long *key;        /* n: this level's key of each participant */
    int *part, *gsize, *order, *group; /* n each (group: the level being computed) */
} build_tmp;

static void build_tmp_free(build_tmp *t)
{
    free(t->key), free(t->part), free(t->gsize), free(t->order), free(t->group);
    memset(t, 0, sizeof *t);
}

static int build_tmp_take(build_tmp *t, int n)
{
    size_t ints = (size_t)n * sizeof(int);
    return (t->key = malloc((size_t)n * sizeof(long long))) && (t->part = malloc(ints)) &&
           (t->gsize = malloc(ints)) && (t->order = malloc(ints)) && (t->group = malloc(ints));
}

/* qsort's order of participants in add_level: by key, then rank (the keys in a thread-local:
 * threads may build the hierarchies of distinct communicators at once) */
static __thread const long long *sort_keys;
static int cmp_by_key(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    long long x = sort_keys[i], y = sort_keys[j];
    return x != y ? (x > y) - (x < y) : (i > j) - (i < j);
}

/* Add one level, locally (build makes its communicator after the second agreement):
 * participants t->part grouped by t->key. Returns 1 if added, 0 if degenerate (all groups of
 * size 1: not added), -1 out of memory (nothing of the level is left to free). */
static int add_level(caracal_hier *h, const char *kind, build_tmp *t)
{
    int n = h->size, me = h->rank;
    if (h->nlevels == CARACAL_MAX_LEVELS)
        return 0;
    int *group = t->group, *gsize = t->gsize, *part = t->part, *order = t->order;
    const long long *key = t->key;
    memset(gsize, 0, (size_t)n * sizeof *gsize);
    /* participants sorted by (key, rank): the first of each run of equal keys is its group's
     * leader. n log n, not n * groups: every simulated rank does this on one host core. */
    int np = 0;
    for (int i = 0; i < n; i++) {
        group[i] = -1;
        if (part[i])
            order[np++] = i;
    }
    sort_keys = key;
    qsort(order, (size_t)np, sizeof *order, cmp_by_key);
    for (int p = 0; p < np; p++) {
        int i = order[p];
        group[i] = p > 0 && key[order[p - 1]] == key[i] ? group[order[p - 1]] : i;
    }
    int maxg = 0, ngroups = 0;
    for (int i = 0; i < n; i++) {
        if (!part[i])
            continue;
        ngroups += group[i] == i;
        if (++gsize[group[i]] > maxg)
            maxg = gsize[group[i]];
    }
    if (maxg < 2)
        return 0;
    caracal_level *lv = &h->level[h->nlevels];
    memset(lv, 0, sizeof *lv);
    lv->comm = MPI_COMM_NULL;
    lv->kind = kind;
    lv->maxgroup = maxg;
    lv->ngroups = ngroups;
    lv->rank = -1;
    if (part[me]) { /* my group's members, ascending: their ranks in its communicator */
        int mine = group[me], k = 0;
        if (!(lv->members = malloc((size_t)gsize[mine] * sizeof(int))))
            return -1;
        for (int i = mine; i < n && k < gsize[mine]; i++)
            if (group[i] == mine) {
                if (i == me)
                    lv->rank = k;
                lv->members[k++] = i;
            }
        lv->size = k;
    }
    if (ngroups == 1) { /* one group: its leader says it all (caracal_level_group) */
        lv->leader = order[0];
    } else {
        if (!(lv->group = malloc((size_t)n * sizeof(int)))) {
            free(lv->members);
            lv->members = NULL;
            return -1;
        }
        memcpy(lv->group, group, (size_t)n * sizeof(int));
    }
    h->nlevels++;
    /* the next level's participants: this level's leaders */
    for (int i = 0; i < n; i++)
        part[i] = part[i] && group[i] == i;
    return 1;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* How many groups of topology level l the communicator's ranks (by world rank) fall in.
 * Levels nest (topology_read.c checks it), so two levels with as many groups here
 * partition the communicator alike. `scratch`: n entries. */
static int distinct_groups(const caracal_topology *t, int l, const int *world, int n, long long *scratch)
{
    for (int i = 0; i < n; i++)
        scratch[i] = caracal_topology_group(t, l, world[i]);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_ll);
    int count = n > 0;
    for (int i = 1; i < n; i++)
        count += scratch[i] != scratch[i - 1];
    return count;
}

/* The levels, locally, from every rank's allgathered value (build): 0, or -1 out of memory
 * (then the levels added so far are freed by the caller). */
static int compute_levels(caracal_hier *h, const caracal_topology *topo, const long long *all)
{
    int n = h->size, rc = 0;
    build_tmp t = {0};
    if (!build_tmp_take(&t, n)) {
        build_tmp_free(&t);
        return -1;
    }
    for (int i = 0; i < n; i++)
        t.part[i] = 1;
    if (topo) { /* CARACAL_TOPOLOGY: the levels of caracal nodemap's document, bottom to top */
        int *world = t.order; /* (add_level's order is free until add_level) */
        for (int l = 0; l < topo->nlevels && h->nlevels < CARACAL_MAX_LEVELS - 1 && rc >= 0; l++) {
            for (int i = 0; i < n; i++)
                world[i] = (int)all[i];
            /* A level that groups this communicator exactly as the next one does is that
             * level: the upper name wins. nodemap writes a "socket" level even where every
             * host has one socket (the hostnames give no socket level there), and only a
             * level called "node" gets the shared-memory segment and node/... rules. */
            if (l + 1 < topo->nlevels &&
                distinct_groups(topo, l, world, n, t.key) == distinct_groups(topo, l + 1, world, n, t.key))
                continue;
            for (int i = 0; i < n; i++)
                t.key[i] = caracal_topology_group(topo, l, world[i]);
            rc = add_level(h, topo->level_name[l], &t);
        }
    } else {
        /* all[i]: socket key (>= 0: node key x 4096 + package), or -1 - node key (no package) */
        int have_socket = 1;
        for (int i = 0; i < n; i++)
            have_socket &= all[i] >= 0;
        if (have_socket) {
            for (int i = 0; i < n; i++)
                t.key[i] = all[i];
            rc = add_level(h, "socket", &t);
        }
        for (int i = 0; i < n; i++)
            t.key[i] = all[i] >= 0 ? all[i] / 4096 : -1 - all[i];
        if (rc >= 0)
            rc = add_level(h, "node", &t);
    }
    for (int i = 0; i < n; i++)
        t.key[i] = 0;
    if (rc >= 0)
        rc = add_level(h, "top", &t);
    /* a single group holding everybody at a lower level is the top already */
    build_tmp_free(&t);
    return rc < 0 ? -1 : 0;
}

/* The levels from every rank's key, with a real library: an allgather, and every rank
 * computes them (each holds its own group arrays). 1 ok, 0 out of memory. */
static int levels_by_allgather(caracal_hier *h, const caracal_topology *topo, long long mine, long long *all)
{
    PMPI_Allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, h->dup);
    return compute_levels(h, topo, all) == 0;
}

/* Under SMPI (sbgp/hier_table.h): the keys gathered to rank 0 (`all` there only), which
 * computes the levels once and broadcasts the address of their table; every rank takes its
 * own groups' members from it. 1 ok, 0 out of memory (on this rank; the caller agrees). */
static int levels_by_table(caracal_hier *h, const caracal_topology *topo, long long mine, long long *all)
{
    caracal_hier_table *t = NULL;
    PMPI_Gather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, h->dup);
    if (h->rank == 0 && compute_levels(h, topo, all) == 0)
        t = caracal_hier_table_make(h); /* NULL: the caller frees the levels, still rank 0's */
    PMPI_Bcast(&t, (int)sizeof t, MPI_BYTE, 0, h->dup);
    if (!t)
        return 0;
    return h->rank == 0 || caracal_hier_table_use(h, t) == 0;
}

static caracal_hier *build(MPI_Comm comm)
{
    static long serials;
    int n = 0, me = 0;
    PMPI_Comm_size(comm, &n);
    PMPI_Comm_rank(comm, &me);
    /* one table for every rank under SMPI: only rank 0 gathers the keys */
    int shared = caracal_smpi();
    caracal_hier *h = calloc(1, sizeof *h);
    long long *all = !shared || me == 0 ? malloc((size_t)n * sizeof *all) : NULL;
    const caracal_topology *topo = caracal_topology_get();
    /* the first agreement (comm: every rank is in this blocking collective, as for the dup),
     * also on whether every rank reads CARACAL_TOPOLOGY (what the allgather carries) */
    int agree[2] = {h && (all || (shared && me != 0)), topo != NULL};
    PMPI_Allreduce(MPI_IN_PLACE, agree, 2, MPI_INT, MPI_MIN, comm);
    if (!agree[0]) {
        free(h);
        free(all);
        return NULL;
    }
    if (!agree[1])
        topo = NULL;
    h->serial = (unsigned long)caracal_add_long(&serials, 1); /* threads build hierarchies of distinct communicators at once */
    h->comm = comm;
    h->refs = 1;
    caracal_private_dup(comm, &h->dup);
    PMPI_Comm_rank(h->dup, &h->rank);
    PMPI_Comm_size(h->dup, &h->size);

    long long mine;
    if (topo) { /* the topology document is by world rank */
        int wrank;
        PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
        mine = wrank;
    } else {
        /* node key: lowest rank of my shared-memory node, refined by CARACAL_NODE_SIZE */
        MPI_Comm node;
        int nodeleader = h->rank;
        PMPI_Comm_split_type(h->dup, MPI_COMM_TYPE_SHARED, h->rank, MPI_INFO_NULL, &node);
        PMPI_Allreduce(MPI_IN_PLACE, &nodeleader, 1, MPI_INT, MPI_MIN, node);
        PMPI_Comm_free(&node);
        long long vsize = caracal_setting_int(CARACAL_SET_NODE_SIZE);
        long long nodekey = (long long)nodeleader * (n + 1) + (vsize > 0 ? h->rank / vsize : 0);
        int sock = socket_key();
        mine = sock < 0 ? -1 - nodekey : nodekey * 4096 + sock;
    }
    /* the temporaries are taken after the keys' exchange and given back before the second
     * agreement (under SMPI only rank 0 takes them, between its gather and its broadcast) */
    int ok = shared ? levels_by_table(h, topo, mine, all) : levels_by_allgather(h, topo, mine, all);
    free(all);
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, h->dup);
    if (!ok) {
        for (int l = 0; l < h->nlevels; l++) /* (add_level gave back a level it could not finish) */
            free_level(&h->level[l], h);
        caracal_hier_table_release(h->table);
        PMPI_Comm_free(&h->dup);
        free(h);
        return NULL;
    }
    for (int l = 0; l < h->nlevels; l++) {
        caracal_level *lv = &h->level[l];
        int color = lv->members ? lv->members[0] : -1;
        caracal_group_comm(h->dup, h->rank, color, lv->members, lv->size, &lv->comm);
        lv->rank = -1;
        lv->size = 0;
        if (lv->comm != MPI_COMM_NULL) {
            PMPI_Comm_rank(lv->comm, &lv->rank);
            PMPI_Comm_size(lv->comm, &lv->size);
        }
    }

    /* the flat level: everybody on dup */
    h->flat.kind = "top";
    h->flat.comm = h->dup;
    h->flat.rank = h->rank;
    h->flat.size = n;
    h->flat.maxgroup = n;
    h->flat.leader = 0;
    h->flat.everyone = 1;

    int len = 0;
    h->desc[0] = 0;
    for (int l = 0; l < h->nlevels; l++) {
        len += snprintf(h->desc + len, sizeof h->desc - len, "%s%s(%dx%d)", l ? "+" : "", h->level[l].kind,
                        h->level[l].ngroups, h->level[l].maxgroup);
        if (len >= (int)sizeof h->desc)
            break;
    }
    if (!h->nlevels)
        snprintf(h->desc, sizeof h->desc, "single");
    caracal_shm_hier_setup(h);
    return h;
}

/* CARACAL_LOG=hier: every level's groups by communicator rank, leader (lowest rank) first,
 * e.g. "hier ranks=4 socket(3x2)={0,1}{2}{3} node(2x2)={0,2}{3} top(1x2)={0,3}". Every rank
 * builds the same levels, so with CARACAL_LOG_RANKS=all the lines must be identical. */
static void log_groups(const caracal_hier *h)
{
    char line[900];
    int len = snprintf(line, sizeof line, "hier ranks=%d", h->size);
    for (int l = 0; l < h->nlevels && len < (int)sizeof line; l++) {
        const caracal_level *lv = &h->level[l];
        int ngroups = 0;
        for (int i = 0; i < h->size; i++)
            ngroups += caracal_level_group(h, l, i) == i;
        len += snprintf(line + len, sizeof line - len, " %s(%dx%d)=", lv->kind, ngroups, lv->maxgroup);
        for (int g = 0; g < h->size && len < (int)sizeof line; g++) {
            if (caracal_level_group(h, l, g) != g)
                continue;
            for (int i = g; i < h->size && len < (int)sizeof line; i++)
                if (caracal_level_group(h, l, i) == g)
                    len += snprintf(line + len, sizeof line - len, "%s%d", i == g ? "{" : ",", i);
            if (len < (int)sizeof line)
                len += snprintf(line + len, sizeof line - len, "}");
        }
    }
    if (!h->nlevels && len < (int)sizeof line)
        snprintf(line + len, sizeof line - len, " single");
    if (len >= (int)sizeof line)
        strcpy(line + sizeof line - 4, "...");
    caracal_log("hier", "%s", line);
}

static void create_keyval(void)
{
    if (keyval == MPI_KEYVAL_INVALID) {
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL);
        void *ub;
        int flag;
        PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        if (flag)
            tag_slots = (*(int *)ub / 64) < 1 ? 1 : (*(int *)ub / 64);
        if (tag_slots > 1 << 20)
            tag_slots = 1 << 20;
    }
}

caracal_hier *caracal_hier_find(MPI_Comm comm)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return NULL;
    caracal_hier *h;
    int flag;
    PMPI_Comm_get_attr(comm, keyval, &h, &flag);
    return flag ? h : NULL;
}

caracal_hier *caracal_hier_get(MPI_Comm comm)
{
    create_keyval();
    caracal_hier *h = caracal_hier_find(comm);
    if (h)
        return h;
    /* building is a series of native blocking collectives (dup, split, allgather): a rank
     * blocked in them cannot forward its part of Caracal's nonblocking collectives in flight,
     * which the ranks it waits for may need first (docs/collectives.md "Progress") */
    if (caracal_active_requests)
        caracal_progress_drain();
    h = build(comm);
    if (!h) { /* out of memory on some rank: every rank leaves comm to the native library */
        caracal_log("init", "hierarchy of communicator: out of memory on some rank; native");
        return NULL;
    }
    PMPI_Comm_set_attr(comm, keyval, h);
    caracal_log("init", "hierarchy of communicator: %s, %d ranks", h->desc, h->size);
    if (caracal_log_enabled("hier"))
        log_groups(h);
    return h;
}

void caracal_hier_finalize(void)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return;
    void *h;
    int flag;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &h, &flag);
    if (flag)
        PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
    PMPI_Comm_get_attr(MPI_COMM_SELF, keyval, &h, &flag);
    if (flag)
        PMPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
    PMPI_Comm_free_keyval(&keyval);
}

int caracal_level_group(const caracal_hier *h, int l, int i)
{
    if (l < 0)
        return 0;
    const caracal_level *lv = &h->level[l];
    if (lv->group)
        return lv->group[i];
    /* one group: every participant is in it; a level's participants are the leaders of the
     * level below (every rank at level 0) */
    return l == 0 || caracal_level_group(h, l - 1, i) == i ? lv->leader : -1;
}

int caracal_level_lrank(const caracal_level *lv, int i)
{
    if (lv->everyone)
        return i;
    int lo = 0, hi = lv->members ? lv->size : 0; /* members ascending: binary search */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (lv->members[mid] == i)
            return mid;
        if (lv->members[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int caracal_hier_rep(const caracal_hier *h, int l, int i)
{
    for (int k = 0; k < l; k++) /* the leader of its group at each level below */
        i = caracal_level_group(h, k, i);
    return i;
}

int caracal_hier_group_root(const caracal_hier *h, int l, int root)
{
    const caracal_level *lv = l < 0 ? &h->flat : &h->level[l];
    /* its representative if that is in my group, else the leader (0) */
    int r = caracal_level_lrank(lv, caracal_hier_rep(h, l, root));
    return r >= 0 ? r : 0;
}

int caracal_hier_next_tag(caracal_hier *h)
{
    int t = (int)(h->seq % (unsigned)tag_slots) * 64;
    h->seq++;
    return t;
}
