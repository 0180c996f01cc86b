/* Caracal public C API.
 *
 * Applications do not need this header: Caracal works on unmodified MPI
 * programs through LD_PRELOAD or by linking -lcaracal. The functions here are
 * for tools and for applications that want to talk to Caracal directly. */
#ifndef CARACAL_H
#define CARACAL_H
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Caracal's version, "major.minor.patch". */
const char *caracal_version(void);

/** Print the table of CARACAL_* settings as JSON (schema caracal.settings/1) to stdout. */
void caracal_print_settings(void);

/** Judge every CARACAL_* setting of this process's environment and every selection rule (the
 *  CARACAL_<FAMILY> settings and the rules file) as a job would, and try the files a job
 *  would open late (CARACAL_TOPOLOGY, CARACAL_HWLOC_XML, the directory of CARACAL_PROFILE).
 *  Prints one warning line per problem to stderr, naming the setting, the value and what a
 *  job would use instead. Needs no MPI: call it once, before MPI_Init or in a program that
 *  does not use MPI (`caracal info --check` does). Returns the number of problems (0: all
 *  valid). */
int caracal_check_settings(void);

/** Print every collective family, its selection rules (the user's CARACAL_<COLL> and the
 *  built-in defaults) and its algorithms with one-line descriptions, as JSON (schema
 *  caracal.algorithms/1) to stdout. */
void caracal_print_algorithms(void);

/** Print, on rank 0 of `comm`, the levels and groups of Caracal's hierarchy for it (built
 *  here if needed, so collective over comm), each rank's host and whether its node group
 *  has a shared-memory segment, as JSON (schema caracal.hierarchy/1). Call between
 *  MPI_Init and MPI_Finalize; returns 0, or -1 where Caracal has no hierarchy (its
 *  collectives are off: CARACAL_COLL=0). */
int caracal_print_hierarchy(MPI_Comm comm);

/** Predicted communication cost (QAP objective: edge weight x distance) of this
 *  process's last reordering topology constructor (MPI_Cart_create, MPI_Graph_create,
 *  MPI_Dist_graph_create(_adjacent) with reorder = 1): with the ranks in their old
 *  order, and as Caracal placed them (never more; equal when it kept the order).
 *  Returns 1, or 0 and -1 in both when no constructor has gone through Caracal's
 *  placement yet (reorder = 0, CARACAL_REORDER=0, n <= 2, ...). */
int caracal_reorder_last(long long *identity_cost, long long *chosen_cost);

/** Replace the selection rules of one collective family (its name as in `caracal info
 *  --algorithms`: "bcast", "allreduce", ...) for the rest of the job, in place of the
 *  CARACAL_<FAMILY> setting; the rules file and the built-in defaults still follow them.
 *  NULL or "" removes them. Collective in effect: every rank of every communicator the
 *  family is called on must make the same change between the same two calls (as
 *  `caracal tune` does), or ranks would pick different algorithms. Returns 0, or -1 for
 *  an unknown family, one that is always native, or rules of which some were refused
 *  (those warn as in the setting; the others are in force). */
int caracal_set_rules(const char *family, const char *rules);

/** How many collectives Caracal's own algorithms ran in this process (the rest went native). */
long caracal_coll_count(void);
/** How many starts (MPI_Start, MPI_Startall) of persistent collectives ran Caracal's own
 *  algorithms in this process (persistent collectives selected native are not counted). */
long caracal_coll_persistent_starts(void);

/** Start counting, in this process, the distinct peers of Caracal's own collective
 *  algorithms: from now on every message one of them sends or receives notes its peer's
 *  rank in MPI_COMM_WORLD (native collectives and the application's own point-to-point
 *  messages are not seen). A second call starts again from none. Local; costs a group
 *  lookup per message while counting (measurements and tests, not production). */
void caracal_peers_start(void);
/** How many distinct world ranks this process has exchanged a message with inside Caracal's
 *  collectives since caracal_peers_start (-1 if it was never called); the first `max` of them,
 *  ascending, go to world_ranks (may be NULL). Local. */
int caracal_peers(int *world_ranks, int max);

#ifdef __cplusplus
}
#endif
#endif
