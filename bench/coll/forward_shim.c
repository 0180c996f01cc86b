/* The least a PMPI interposer can do, for bench/coll/paired_check.py --preload: MPI_Allgatherv and
 * MPI_Scatter only call PMPI_Allgatherv and PMPI_Scatter (compiled: one jump each). Preloaded
 * before libcaracal, it replaces Caracal's entry for these two families: its `default` then
 * measures what any interposition costs. Build: mpicc -O2 -shared -fPIC -o shim.so forward_shim.c */
#include <mpi.h>
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt, MPI_Comm c)
{ return PMPI_Allgatherv(s, sc, st, r, rc, d, rt, c); }
int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm c)
{ return PMPI_Scatter(s, sc, st, r, rc, rt, root, c); }
