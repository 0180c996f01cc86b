/* The gather family (allgather, allgatherv, gather, gatherv, scatter, scatterv): what its
 * algorithms share.
 *
 * Every algorithm moves packed bytes: a rank's block is packed with the type it is given
 * (the send type where it sends, the receive type where its data sits in place) and
 * unpacked with the receive type, so send and receive types need only equal signatures.
 * The non-v families are built as their v-variant with equal counts; the v-variants of
 * the rooted families (gatherv, scatterv), whose non-roots know only their own count, run
 * a first program that tells each forwarding rank the sizes it carries, then build the
 * data program from them (caracal_gf_two_phase).
 *
 * The builders record into a steps program (coll/steps.h) on h->dup, peers are ranks of
 * the communicator. Their arguments are MPI's, MPI_IN_PLACE included; `bytes` is the
 * packed size of each rank's block where this rank needs it (its own always; the ranks
 * whose blocks it forwards; every rank at the root and in the allgathers). */
#ifndef CARACAL_COLL_GATHERFAM_H
#define CARACAL_COLL_GATHERFAM_H
#include <mpi.h>
#include <stddef.h>
#include "coll/steps.h"
#include "coll/call.h"

/** The node groups of a hierarchy as seen by one call: nodes are the groups below the top
 *  level (the whole communicator when it is one node group; single ranks when it is
 *  flat), ordered by their lowest rank, members ascending. */
typedef struct {
    int n, me;
    int nnodes, mynode;
    int *node_of;  /* [n] node of rank i */
    int *leader;   /* [nnodes] the rank that collects and forwards for node k */
    int *first;    /* [nnodes + 1] node k's members are order[first[k] .. first[k+1]) */
    int *order;    /* [n] ranks in node order */
    int *pos;      /* [n] position of rank i in order */
} caracal_gf_nodes;

/** Node groups of h (arrays in s's scratch). Leaders are each node's lowest rank, except
 *  that `root` (>= 0) leads its own node: its node's blocks then go to it directly. */
void caracal_gf_nodes_build(caracal_steps *s, const caracal_hier *h, int root, caracal_gf_nodes *nd);

/** off[p] (p = 0..n) = sum of bytes[order[p']] for p' < p (order NULL: identity);
 *  in s's scratch. Entries of unknown sizes must be 0 or not be read. */
size_t *caracal_gf_offsets(caracal_steps *s, int n, const int *order, const size_t *bytes);

/** Packed size of count x dt. */
size_t caracal_gf_bytes(int count, MPI_Datatype dt);
/** Element `i` of a buffer of dt (i * extent bytes on). */
void *caracal_gf_at(const void *buf, MPI_Datatype dt, MPI_Aint i);

/** The buffer of n packed blocks laid out by off[] over `order` (position p holds rank
 *  order[p]; NULL: identity): the receive buffer itself when rdt is plain bytes and every
 *  block already sits at rbuf + off[p] (*direct = 1: blocks travel straight into place and
 *  nothing is unpacked; the common contiguous call), else scratch (*direct = 0). */
char *caracal_gf_packed(caracal_steps *s, int n, const int *order, const size_t *off, void *rbuf,
                        const int *rdispls, MPI_Datatype rdt, int *direct);
/** count x dt at buf as contiguous bytes, now (not as a step): the buffer itself when dt is
 *  plain bytes, else packed into `to` (caracal_gf_bytes(count, dt) bytes). */
const char *caracal_gf_bytes_now(const void *buf, int count, MPI_Datatype dt, char *to);
/** Pack this rank's contribution to an allgather(v) or gather(v) into out: sbuf with the
 *  send type, or with MPI_IN_PLACE its block in rbuf (rcount_me x rdt at displ_me). */
void caracal_gf_pack_own(caracal_steps *s, const void *sbuf, int scount, MPI_Datatype sdt, const void *rbuf,
                         int rcount_me, int displ_me, MPI_Datatype rdt, void *out);
/** Unpack every rank's block from the packed buffer: position p (offset off[p]) holds rank
 *  order[p] (NULL: p), which lands at rbuf + rdispls[rank] x rdt; `skip` (a rank, or -1)
 *  is left alone (its block is in place). */
void caracal_gf_unpack_all(caracal_steps *s, int n, const char *packed, const size_t *off, const int *order,
                           void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, int skip);

/** A task that runs `first` and then the task that build(ctx) returns (built only once
 *  `first` has completed, so it can depend on what `first` received). ctx is free()d with
 *  the task. */
caracal_task *caracal_gf_two_phase(const char *name, caracal_task *first, caracal_task *(*build)(void *ctx),
                                   void *ctx);

/* The builders, one per algorithm file; the start functions wrap them. */
void caracal_gf_allgatherv_ring(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                MPI_Datatype rdt);
void caracal_gf_allgatherv_bruck(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                 MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                 MPI_Datatype rdt);
void caracal_gf_allgatherv_recdbl(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                  MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                  MPI_Datatype rdt);
void caracal_gf_allgatherv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                MPI_Datatype rdt);

/* rooted families: rcounts/rdispls/rdt (gather) and scounts/sdispls/sdt (scatter) are read
 * at the root only; bytes[] as above */
void caracal_gf_gatherv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                             MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                             MPI_Datatype rdt, int root, const size_t *bytes);
/* binomial: vbytes[v] is the size of relative rank v = (rank - root + n) % n */
void caracal_gf_gatherv_binomial(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                 MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                 MPI_Datatype rdt, int root, const size_t *vbytes);
void caracal_gf_gatherv_linear(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                               MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                               MPI_Datatype rdt, int root, const size_t *unused);
void caracal_gf_scatterv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                              const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                              int root, const size_t *bytes);
void caracal_gf_scatterv_binomial(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                                  const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                                  int root, const size_t *vbytes);
void caracal_gf_scatterv_linear(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                                const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                                int root, const size_t *unused);

/* Size exchanges of the v-variants (first programs): afterwards sizes[] holds the packed
 * size of every rank whose block this rank forwards in the matching data program, indexed
 * as that program reads it (hier: by rank; binomial: by relative rank). `mine` is this
 * rank's own packed size; the root fills all of sizes[] before recording. */
void caracal_gf_sizes_hier(caracal_steps *s, const caracal_hier *h, int root, size_t mine, size_t *sizes);
void caracal_gf_sizes_gather_binomial(caracal_steps *s, const caracal_hier *h, int root, size_t mine,
                                      size_t *sizes);
void caracal_gf_sizes_scatter_binomial(caracal_steps *s, const caracal_hier *h, int root, size_t mine,
                                       size_t *sizes);

/* The start functions' common part. allgather: the non-v call as equal v-arrays. Rooted:
 * non-v calls with every size known; v-calls with `exchange` (NULL: the algorithm needs no
 * sizes) run it first, then the data program (the root fills sizes by rank, or by
 * relative rank when `by_relative`). */
typedef void (*caracal_gf_allgather_fn)(caracal_steps *, const caracal_hier *, const void *, int, MPI_Datatype,
                                        void *, const int *, const int *, MPI_Datatype);
typedef union {
    void (*gather)(caracal_steps *, const caracal_hier *, const void *, int, MPI_Datatype, void *, const int *,
                   const int *, MPI_Datatype, int, const size_t *);
    void (*scatter)(caracal_steps *, const caracal_hier *, const void *, const int *, const int *, MPI_Datatype,
                    void *, int, MPI_Datatype, int, const size_t *);
} caracal_gf_rooted_fn;
typedef void (*caracal_gf_sizes_fn)(caracal_steps *, const caracal_hier *, int, size_t, size_t *);
caracal_task *caracal_gf_start_allgather(const caracal_ml_args *a, const caracal_coll_call *c, const char *name,
                                         caracal_gf_allgather_fn build);
caracal_task *caracal_gf_start_rooted(const caracal_ml_args *a, const caracal_coll_call *call, const char *name,
                                      caracal_gf_rooted_fn build, caracal_gf_sizes_fn exchange, int by_relative);

/** Whether the node groups of h are the node level of a two-level hierarchy and mine has a
 *  shared-memory segment (the hier schedules then run their node phases on it). */
int caracal_gf_node_shm(caracal_hier *h);
/** allgather(v) "hier": the node phases on the segment where caracal_gf_node_shm, else the
 *  point-to-point program; NULL (native) above one message's int range. */
caracal_task *caracal_gf_allgather_hier_task(const caracal_ml_args *a, const caracal_coll_call *c, const char *name);

/** The binomial tree over relative ranks v = (rank - root + n) % n: the subtree of v is
 *  [v, v + span) with span its lowest set bit (n for v = 0), cut at n. */
static inline int caracal_gf_span(int v, int n) { return v ? (v & -v) : n; }

#endif
