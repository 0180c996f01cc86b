/* caracal-nodemap: run-time topology discovery (NodeMap, with MC-MPI's
 * triangle-inequality pruning). The parts, one file each:
 *   place.c     where each rank runs: host, shared-memory group, hwloc placement
 *   pingpong.c  one pair's latency or bandwidth
 *   measure.c   which pairs to measure, in rounds of disjoint pairs; pruning
 *   levels.c    socket < node < switch/cluster < site from placement and latency
 *   output.c    the caracal.topology/1 document
 * See docs/topology-format.md for the output and the thresholds. */
#ifndef CARACAL_NODEMAP_H
#define CARACAL_NODEMAP_H
#include <mpi.h>
#include <stdio.h>

#define NM_HOST_MAX 64
#define NM_MAX_LEVELS 8

typedef struct {
    char host[NM_HOST_MAX];
    int node;            /* shared-memory group: world rank of its lowest member */
    int package, numa, core, pu;  /* hwloc logical indexes (pu: OS index); -1 unknown */
    int bound;           /* 1 if the process is bound inside one core */
    int ncpus;           /* PUs on this node: how many ranks can be busy at once */
} nm_place;

typedef struct {
    int reps, warmup;        /* latency ping-pongs per pair */
    double ratio;            /* triangle pruning: estimate when rtt(p,r) >= ratio * rtt(r,q) */
    double gap;              /* level clustering: a jump by this factor separates tiers */
    int prune;               /* 0: measure every pair */
    int landmarks;           /* pruning's landmarks: at most this many group leaders; 0 = every group's */
    long bw_size;            /* bandwidth message size, bytes; 0 disables bandwidth */
    int bw_reps, bw_per_class;
} nm_options;

/* Pair state in the shared matrices. */
enum { NM_UNKNOWN = 0, NM_MEASURED = 1, NM_ESTIMATED = 2 };

typedef struct {
    int n;
    double *L;           /* n*n one-way latency, seconds (half the median round trip) */
    unsigned char *state;/* n*n NM_* */
    int measured, estimated;
} nm_latency;

typedef struct {
    const char *name;    /* socket, node, switch, cluster, site */
    const char *source;  /* hwloc, shared-memory, latency */
    double threshold;    /* latency levels: the cut between tiers (s); else 0 */
    double gap;          /* latency levels: the jump factor found at the cut */
    int *group;          /* n dense ids, numbered in order of first rank */
} nm_level;

typedef struct {
    int p, q;
    double bytes_per_s;
    double latency;      /* one-way time of the big message, s */
} nm_bw;

/* place.c */
int nm_place_gather(MPI_Comm comm, nm_place *all);

/* pingpong.c */
double nm_pingpong_latency(MPI_Comm comm, int me, int peer, int reps, int warmup);
double nm_pingpong_time(MPI_Comm comm, int me, int peer, void *buf, int bytes, int reps);

/* measure.c */
int nm_round_partner(int rank, int round, int n);
int nm_round_count(int n);
void nm_measure_latency(MPI_Comm comm, const nm_place *pl, const nm_options *o, nm_latency *lat);
int nm_measure_bandwidth(MPI_Comm comm, const nm_place *pl, const nm_level *levels, int nlevels, const nm_options *o,
                         nm_bw *out, int max);

/* levels.c */
int nm_levels_build(int n, const nm_place *pl, const nm_latency *lat, double gap,
                    nm_level *levels, int max);
void nm_levels_free(nm_level *levels, int nlevels);

/* output.c */
void nm_write_json(FILE *f, int n, const nm_place *pl, const nm_latency *lat,
                   const nm_level *levels, int nlevels, const nm_bw *bw, int nbw,
                   const nm_options *o, const char *mpi_library);

#endif
