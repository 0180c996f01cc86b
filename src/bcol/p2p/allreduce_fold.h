/* The fold of the allreduces that run on p of a group's n ranks (recursive doubling and
 * Rabenseifner: p = 2^floor(log2 n); recursive multiplying: p = k^m * r), with 2(n - p) <= n:
 * the first 2(n - p) ranks pair up, the even rank of each pair hands its value to the odd one,
 * which combines it in (the lower rank's value first: any operator) and stands for both among
 * the p as newrank me/2; the others are newrank me - (n - p). At the end the odd rank sends the
 * result back to the even one.
 *
 * Two resumable steps, called from the owner's progress function until they return
 * CARACAL_TASK_DONE: caracal_fold_in before the owner's own steps, caracal_fold_out after them
 * (the even rank of a pair has none: newrank -1, fold in then fold out).
 *
 * piece: 0 sends the value and the result each as one message (every folded rank has scratch
 * for the whole message; the even rank posts the result's receive into it together with its
 * send, and copies it over at the end). piece > 0 cuts the value into messages of at most
 * `piece` elements, one after the other, each combined as it arrives (scratch of one piece);
 * the result then comes back as one message straight into the even rank's buffer once its
 * last piece has gone (none for an empty message). Both sides cut at the same element counts:
 * count, datatype and piece agree. */
#ifndef CARACAL_BCOL_P2P_ALLREDUCE_FOLD_H
#define CARACAL_BCOL_P2P_ALLREDUCE_FOLD_H
#include <mpi.h>

typedef struct {
    int me, rem;      /* rem = n - p: the pairs */
    int newrank;      /* among the p, or -1: the even rank of a pair */
    int peer;         /* the other rank of my pair, or -1: not folded */
    char *buf;        /* this rank's value in, the result out */
    char *tmp;        /* scratch: a piece (piece > 0), the whole message (piece 0) */
    int count, piece;
    MPI_Datatype dt;
    MPI_Aint extent;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    int j, npieces, posted; /* fold in: the piece under way */
    int out_posted;
    MPI_Request req[2];     /* [0] the piece (fold in), the result (fold out); [1] piece 0's early receive */
} caracal_fold;

/** Set up the fold of rank `me` of n into p; nothing is sent yet. buf: this rank's value
 *  (count elements of dt), where the result is left; tmp: the scratch above (may be NULL on
 *  ranks that are not folded, and on the even rank of a pair with piece > 0). */
void caracal_fold_init(caracal_fold *f, int me, int n, int p, void *buf, void *tmp, int count, MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm, int tag, int piece);
/** The rank (of the group) of newrank nr among the p. */
static inline int caracal_fold_real_rank(const caracal_fold *f, int nr)
{
    return nr < f->rem ? nr * 2 + 1 : nr + f->rem;
}
/** The value in: CARACAL_TASK_DONE once it has gone (even rank) or been combined in (odd). */
int caracal_fold_in(caracal_fold *f);
/** The result back: CARACAL_TASK_DONE once the even rank has it in buf and the odd one's
 *  send has completed. */
int caracal_fold_out(caracal_fold *f);

#endif
