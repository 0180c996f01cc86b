/* Whether a communicator is a torus (rect.h): asked at call time, cached on the communicator
 * as an attribute (freed with it). MPI_Topo_test and MPI_Cart_get are local, and a
 * communicator's topology is the same on every rank, so every rank decides alike. */
#include "coll/rect/rect.h"
#include <stdlib.h>

typedef struct {
    int ok;
    const char *why;
    caracal_torus t;
} torus_attr;

static int keyval = MPI_KEYVAL_INVALID;

static int attr_delete(MPI_Comm comm, int key, void *attr, void *extra)
{
    (void)comm, (void)key, (void)extra;
    free(attr);
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

static void inspect(MPI_Comm comm, torus_attr *a)
{
    int status = MPI_UNDEFINED, nd = 0;
    a->ok = 0;
    if (PMPI_Topo_test(comm, &status) != MPI_SUCCESS || status != MPI_CART) {
        a->why = "not a Cartesian communicator";
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
        caracal_torus_from_dims(&a->t, nd, dims);
        a->ok = 1;
    }
    free(dims);
}

const caracal_torus *caracal_rect_torus(MPI_Comm comm, const char **why)
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
        /* not cached: answer from a copy (same answer next time, asked again) */
        static __thread torus_attr copy;
        copy = *a;
        free(a);
        a = &copy;
    }
done:
    if (!a->ok) {
        *why = a->why;
        return NULL;
    }
    return &a->t;
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
