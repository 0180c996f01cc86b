/* Whether a communicator is a torus (rect.h): asked at call time, cached on the communicator
 * as an attribute (freed with it). A torus declared in CARACAL_TOPOLOGY (the same file on
 * every rank) applies where the communicator has one rank on each of its nodes; otherwise
 * the communicator's own Cartesian topology is asked. MPI_Comm_group, MPI_Topo_test and
 * MPI_Cart_get are local and answer alike on every rank, so every rank decides alike. */
#include "coll/rect/rect.h"
#include <stdlib.h>
#include "under_smpi.h" /* PMPI_Topo_test, which SMPI 3.32 lacks */
#include "map/topology.h"

typedef struct {
    int ok;
    const char *why;
    caracal_rect_net net;
} torus_attr;

static int keyval = MPI_KEYVAL_INVALID;

static int attr_delete(MPI_Comm comm, int key, void *attr, void *extra)
{
    (void)comm, (void)key, (void)extra;
    torus_attr *a = attr;
    free(a->net.node_of); /* rank_of lives in the same block */
    free(a);
    return MPI_SUCCESS;
}

static int get_keyval(void)
{
    int k = __atomic_load_n(&keyval, __ATOMIC_ACQUIRE);
    if (k != MPI_KEYVAL_INVALID)
        return k;
    /* a dup of the communicator is a new object: the attribute is not copied (MPI_COMM_NULL_COPY_FN),
     * and the dup's own first call asks again */
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, attr_delete, &k, NULL) != MPI_SUCCESS)
        return MPI_KEYVAL_INVALID;
    int expected = MPI_KEYVAL_INVALID;
    if (!__atomic_compare_exchange_n(&keyval, &expected, k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        PMPI_Comm_free_keyval(&k); /* another thread made one first */
        return expected;
    }
    return k;
}

/* The declared torus, if comm has exactly one rank on each of its nodes: 1 and a->net set. */
static int declared(MPI_Comm comm, torus_attr *a)
{
    const caracal_topology *topo = caracal_topology_get();
    int size, l = topo ? caracal_topology_level(topo, "node") : -1;
    if (!topo || !topo->torus_d || l < 0 || PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size != topo->ngroups[l])
        return 0;
    int *node_of = malloc(sizeof(int) * 3 * (size_t)size), *rank_of = node_of + size, *world = rank_of + size;
    MPI_Group g, wg;
    if (!node_of)
        return 0;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int r = 0; r < size; r++)
        node_of[r] = r;
    PMPI_Group_translate_ranks(g, size, node_of, wg, world);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    for (int i = 0; i < size; i++)
        rank_of[i] = -1;
    int ok = 1;
    for (int r = 0; r < size && ok; r++) {
        int w = world[r];
        int pos = w >= 0 && w < topo->nranks ? topo->torus_pos[caracal_topology_group(topo, l, w)] : -1;
        ok = pos >= 0 && rank_of[pos] < 0; /* two ranks on one node: not this torus's nodes */
        if (ok)
            node_of[r] = pos, rank_of[pos] = r;
    }
    if (!ok) {
        free(node_of);
        return 0;
    }
    caracal_torus_from_dims(&a->net.t, topo->torus_d, topo->torus_dims);
    a->net.node_of = node_of;
    a->net.rank_of = rank_of;
    a->ok = 1;
    return 1;
}

static void inspect(MPI_Comm comm, torus_attr *a)
{
    int status = MPI_UNDEFINED, nd = 0;
    a->ok = 0;
    a->net.node_of = a->net.rank_of = NULL;
    if (declared(comm, a))
        return;
    if (PMPI_Topo_test(comm, &status) != MPI_SUCCESS || status != MPI_CART) {
        const caracal_topology *topo = caracal_topology_get();
        a->why = topo && topo->torus_d ? "not a Cartesian communicator, nor one rank on each node of the declared torus"
                                       : "not a Cartesian communicator";
        return;
    }
    if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS || nd < 1) {
        a->why = "a Cartesian communicator of no dimension";
        return;
    }
    int *dims = malloc(3 * sizeof(int) * nd);
    if (!dims) {
        a->why = "out of memory";
        return;
    }
    int *periods = dims + nd, *coords = dims + 2 * nd;
    if (PMPI_Cart_get(comm, nd, dims, periods, coords) != MPI_SUCCESS) {
        a->why = "MPI_Cart_get failed";
        free(dims);
        return;
    }
    a->why = NULL;
    for (int k = 0; k < nd; k++)
        if (dims[k] > 1 && !periods[k])
            a->why = "a Cartesian communicator with a non-periodic dimension (a mesh, not a torus)";
    if (!a->why) {
        caracal_torus_from_dims(&a->net.t, nd, dims);
        a->ok = 1;
    }
    free(dims);
}

const caracal_rect_net *caracal_rect_torus(MPI_Comm comm, const char **why)
{
    int key = get_keyval(), flag = 0;
    torus_attr *a = NULL;
    if (key != MPI_KEYVAL_INVALID && PMPI_Comm_get_attr(comm, key, &a, &flag) == MPI_SUCCESS && flag && a)
        goto done;
    a = malloc(sizeof *a);
    if (!a) {
        *why = "out of memory";
        return NULL;
    }
    inspect(comm, a);
    if (key == MPI_KEYVAL_INVALID || PMPI_Comm_set_attr(comm, key, a) != MPI_SUCCESS) {
        /* not cached: answer from a copy (same answer next time, asked again; the previous
         * copy's arrays are freed then) */
        static __thread torus_attr copy;
        free(copy.net.node_of);
        copy = *a;
        free(a);
        a = &copy;
    }
done:
    if (!a->ok) {
        *why = a->why;
        return NULL;
    }
    return &a->net;
}

const char *caracal_rect_unusable(MPI_Comm comm, MPI_Op op)
{
    const char *why = NULL;
    if (!caracal_rect_torus(comm, &why))
        return why;
    int commute = 1;
    if (op != MPI_OP_NULL && PMPI_Op_commutative(op, &commute) == MPI_SUCCESS && !commute)
        return "a non-commutative operator (each tree combines in its own order)";
    return NULL;
}
