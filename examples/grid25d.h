/* The processor grid of the 2.5D examples (mm25d, lu25d), and what both count.
 *
 * p ranks form a q x q x c grid (q = sqrt(p/c)): c layers, each a q x q grid holding
 * one copy (mm25d) or one share of partial sums (lu25d) of the matrix. MPI_Cart_create
 * makes the grid with dimensions (layer, row, column), not periodic and not reordered,
 * and MPI_Cart_sub cuts three sub-communicators:
 *   row   - the q ranks of one layer and one grid row (rank = column index),
 *   col   - the q ranks of one layer and one grid column (rank = row index),
 *   depth - the c ranks at one (row, column), one per layer (rank = layer).
 * Each example calls MPI on each sub-communicator from a function of its own (row_bcast,
 * col_bcast, depth_reduce, ...; GRID_SITE keeps them out of line), so `caracal report`'s
 * call-site tables show the volume per sub-communicator by function name, besides the
 * per-comm-size collectives table.
 *
 * Words: every collective and point-to-point buffer handed to MPI inside the timed part
 * is counted here in 8-byte words, the way Caracal's profile counts bytes
 * (docs/profile-format.md: a bcast or reduce counts its buffer on every rank, an
 * allgather one rank's block), so the program's own count and the profile's agree.
 * Header-only, as example_args.h. */
#ifndef CARACAL_GRID25D_H
#define CARACAL_GRID25D_H

#include <mpi.h>
#include <math.h>
#include <stdint.h>

typedef struct {
    MPI_Comm cart, row, col, depth;
    int p, q, c;          /* ranks, grid side, layers */
    int i, j, l;          /* my grid row, column, layer */
    int rank;             /* in cart (= in MPI_COMM_WORLD: not reordered) */
} grid25d;

static double grid_words;  /* 8-byte words this rank handed to MPI while counting */

/* q with q*q*c == p, or 0 when p/c is not a square. */
static inline int grid_side(int p, int c)
{
    if (c < 1 || p % c)
        return 0;
    int q = (int)lround(sqrt((double)(p / c)));
    return q * q * c == p ? q : 0;
}

static inline void grid_create(grid25d *g, int c)
{
    int dims[3], periods[3] = {0, 0, 0}, coords[3];
    MPI_Comm_size(MPI_COMM_WORLD, &g->p);
    g->c = c;
    g->q = grid_side(g->p, c);
    dims[0] = c, dims[1] = g->q, dims[2] = g->q;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &g->cart);
    MPI_Comm_rank(g->cart, &g->rank);
    MPI_Cart_coords(g->cart, g->rank, 3, coords);
    g->l = coords[0], g->i = coords[1], g->j = coords[2];
    int keep_row[3] = {0, 0, 1}, keep_col[3] = {0, 1, 0}, keep_depth[3] = {1, 0, 0};
    MPI_Cart_sub(g->cart, keep_row, &g->row);
    MPI_Cart_sub(g->cart, keep_col, &g->col);
    MPI_Cart_sub(g->cart, keep_depth, &g->depth);
}

static inline void grid_free(grid25d *g)
{
    MPI_Comm_free(&g->row);
    MPI_Comm_free(&g->col);
    MPI_Comm_free(&g->depth);
    MPI_Comm_free(&g->cart);
}

/* First index of block b of n split into parts nearly equal parts (odd n included). */
static inline long block_lo(long n, int parts, int b)
{
    return (long)((int64_t)n * b / parts);
}

/* Entry (r, s) of a test matrix named by seed: a hash of the indices. */
static inline uint64_t grid_hash(uint64_t seed, long r, long s)
{
    uint64_t x = ((uint64_t)r * 1000003u + (uint64_t)s) * 1000033u + seed * 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Counted MPI calls: the word count follows the profile's byte count. Macros, so that the
 * MPI call sits in the caller: each example wraps them in one GRID_SITE function per
 * sub-communicator (depth_bcast, row_bcast, ...), and the profile's call sites carry
 * that function's name. */
/* Out of line and not merged with its identical twins (GCC folds equal bodies); the count
 * comes after the MPI call so that the call is not a tail jump, whose return address
 * would be the caller's. */
#if defined(__has_attribute)
#if __has_attribute(noipa)
#define GRID_SITE __attribute__((noipa))
#endif
#endif
#ifndef GRID_SITE
#if defined(__GNUC__)
#define GRID_SITE __attribute__((noinline))
#else
#define GRID_SITE
#endif
#endif
#define GRID_BCAST(buf, n, root, comm) \
    (MPI_Bcast((buf), (int)(n), MPI_DOUBLE, (root), (comm)), grid_words += (double)(n))
#define GRID_REDUCE(buf, n, root, me, comm) \
    (MPI_Reduce((me) == (root) ? MPI_IN_PLACE : (void *)(buf), (me) == (root) ? (void *)(buf) : NULL, \
                (int)(n), MPI_DOUBLE, MPI_SUM, (root), (comm)), grid_words += (double)(n))
#define GRID_ALLREDUCE(buf, n, comm) \
    (MPI_Allreduce(MPI_IN_PLACE, (buf), (int)(n), MPI_DOUBLE, MPI_SUM, (comm)), grid_words += (double)(n))

/* Rank 0's summary of one run: the slowest rank's time, the mean and max words. */
static inline void grid_summary(const grid25d *g, double t, double flops, double *tmax, double *wavg, double *wmax)
{
    double w = grid_words;
    MPI_Reduce(&t, tmax, 1, MPI_DOUBLE, MPI_MAX, 0, g->cart);
    MPI_Reduce(&w, wavg, 1, MPI_DOUBLE, MPI_SUM, 0, g->cart);
    MPI_Reduce(&w, wmax, 1, MPI_DOUBLE, MPI_MAX, 0, g->cart);
    *wavg /= g->p;
    (void)flops;
}

#endif
