/* The selection tables and their interpreter. */
#define _GNU_SOURCE
#include "select.h"
#include "call.h"
#include "rules_file.h"
#include "peer_budget.h"
#include <mpi.h>
#include "config.h"
#include "log.h"
#include "threads.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* core/xalloc.h, weak: this file is also built into the rules fuzzer, which has no xalloc.c */
__attribute__((weak, noreturn)) void caracal_out_of_memory(size_t bytes);

/* Default selection, one line per collective, from bench/coll (results and the
 * reasoning in bench/results/coll.md, coll-assessment.md). Two ranks sharing a node
 * (comm rule `shm`: the whole communicator is one shared-memory group, else native) run
 * the shm steps at every size: copy-in/copy-out through 1 MiB slots (inline for small
 * messages, pipelined chunks for large ones, the split allreduce from 64 KiB) measured
 * faster than both native libraries from 8 B to 4 MiB for bcast, reduce and allreduce
 * (2026-11-23 section of coll-assessment.md); the exception is Open MPI allreduce at 64 B
 * (57 B and up no longer fits the inline path): 1.07-1.12x the 0.2 us native call by
 * median on shm, but 1.07 on native too (Caracal's entry on a native call), and faster on
 * shm by fastest call (0.94-1.00 vs 1.12), so shm stays. Barrier: shm at 2 ranks on both
 * (Open MPI, 11 interleaved launches after the acks were cached: 0.98 against 1.08 for its
 * native barrier through Caracal's entry; back to back 0.73 against 0.96). Larger communicators (4 and 8 ranks, oversubscribed here)
 * use shm primitives only between the native library's eager and rendezvous regimes, and
 * with Open MPI only in the cells that were faster in both the earlier and the coll2
 * branch's run (bcast 2-8 KiB up to 5 ranks, reduce 2-8 KiB from 6, allreduce 16-64 KiB).
 * Everything else goes native, so that no default is slower than the native library.
 * 2026-11-25, caracal tune at 2, 4 and 8 ranks (bench/results/tune-openmpi.md, tune-mpich.md;
 * ranks above 2 share 2 cores here): since waits sleep on futexes (core/wait.c) the node
 * segment also wins in one-node communicators of 4 and 8 ranks, so `shm` (whole communicator
 * one node) now covers them where it won at both 4 and 8: Open MPI barrier (0.52-0.67x),
 * bcast 512 B-32 KiB (0.16-0.35x; 8-64 B lost, 1.2-2.1x), reduce from 512 B (0.16-0.91x; below
 * lost), allreduce up to 4 KiB (0.29-0.66x). MPICH won too (barrier, reduce, allreduce at every
 * size, 0.14-0.5x: it busy-polls when ranks outnumber cores), but with shm at 3 ranks its
 * tests/c/test_nb_progress hung then: a rank waiting in the node segment did not progress the
 * library's nonblocking calls a peer waits for (docs/collectives.md, Progress). Since every
 * Caracal wait pokes the library's progress (core/wait.c) it passes, and MPICH's one-node
 * communicators use the node segment at every size (bcast: all but 2-8 KiB, where the tune had
 * MPICH's own bcast faster than shm and the k-nomial over the node segment runs; below 512 B
 * since session 15, MPICH4_DEFAULTS says why). A `shm` rule that cannot run (the communicator spans nodes)
 * passes to the next matching rule.
 * Edit here or override with CARACAL_<COLL> (same grammar, tried first). */
/* Families added after the first four, from `caracal tune` on both libraries
 * (bench/results/tune-families.md, tune-openmpi.md, tune-mpich.md, 2026-11-25): a Caracal
 * algorithm is a default only where the same algorithm beat both libraries' defaults at 4
 * and 8 ranks at every measured size of the range. That holds for reduce_scatter(_block)
 * pairwise from 32 KiB per block (0.23-0.76x native, Open MPI and MPICH); nowhere at 2 ranks,
 * where the steps programs' per-call cost loses to one native exchange. Everything else:
 * native until measured faster (caracal tune writes the rules for a user's own machine). */
/* 2026-11-26, bench/coll/defaults_check.py (bench/results/defaults-check.md: default, shm and
 * the library alone in three call patterns - back to back from one root, rotating root as
 * IMB, a barrier before every call as OSU - 2 ranks, both Debian libraries): the families'
 * shm algorithms beat both libraries at 512 B and 4 KiB in every pattern (0.22-0.94x), and
 * reduce_scatter(_block) and scan also at 32 KiB (0.27-0.81x); they lose at 8-64 B and from
 * 32 KiB (1.2-22x). So at 2 ranks on one node: shm from 512 B to 8 KiB (64 KiB for those
 * three). Not scatter (1.09x at 512 B on both), nor gatherv/scatterv/alltoallv, whose
 * selection sees no byte count (a rank knows only its own counts). */
#define NEW_FAMILY_DEFAULTS                                                                   \
    [CARACAL_ALLGATHER] = "shm@512-8k#2 native", [CARACAL_ALLGATHERV] = "shm@512-8k#2 native",  \
    [CARACAL_GATHER] = "shm@512-8k#2 native", [CARACAL_GATHERV] = "native",                     \
    [CARACAL_SCATTER] = "native", [CARACAL_SCATTERV] = "native",                                \
    [CARACAL_ALLTOALL] = "shm@512-8k#2 native", [CARACAL_ALLTOALLV] = "native",                 \
    [CARACAL_REDUCE_SCATTER] = "shm@512-64k#2 pairwise@32k-#3- native",                         \
    [CARACAL_REDUCE_SCATTER_BLOCK] = "shm@512-64k#2 pairwise@32k-#3- native",                   \
    [CARACAL_SCAN] = "shm@512-64k#2 native", [CARACAL_EXSCAN] = "shm@512-8k#2 native",           \
    [CARACAL_ALLTOALLW] = "native"
/* One table per library this build was compiled for (its mpi.h says which): the rows each
 * library's own measurements support. Debian's Open MPI 4.1 and MPICH 4.0: the tune runs above;
 * Open MPI 5, MPICH 5 and Intel MPI: their own rows below (measured 2026-11-26 at 2 ranks;
 * their 3+-rank rows are Open MPI 4.1's and MPICH 4.0's but where a 3-rank check of session 18 had
 * them lose, below); the MPI-5 ABI build (which runs on
 * MPICH 5 and Intel MPI) takes only what holds on both. bench/coll/defaults_check.py --libs NAME does that (default / PMPI per cell); a
 * cell slower than 1.05x the library alone goes native in that library's table. */
/* The same check of the first four families at 2 ranks: shm bcast loses to both libraries
 * from 32 KiB in every pattern (1.4-47x: two copies through the slots against the library's
 * single copy, and worse again when the process also runs the library's own large bcasts;
 * IMB and OSU, one algorithm per launch, had it at 0.6-0.75x: docs/collectives.md), shm
 * bcast and reduce lose to Open MPI at 8-64 B back to back from one root (1.1-1.9x; they win
 * with a rotating root and with barriers between calls), shm reduce loses to Open MPI from
 * 32 KiB (2.2-21x) and shm allreduce at 1 MiB with barriers between calls (1.64x). Those
 * cells go native (MPICH's reduce and allreduce won everywhere and stay). */
/* 2026-11-26 20:33 UTC, the quiet window (bench/results/coll-wait-defaults-mpich.md, 200 calls
 * on both sides, 3 rounds, load 6-13): MPICH's bcast below 512 B at 4, 8 and 16 ranks on one
 * node took 1.15-1.45x the library through Caracal's entry when left native, 0.15-0.31x with the
 * shm row measured before it was built; with a rotating root 0.01-0.03x (coll-wait-rotate.md).
 * So one-node communicators of 3+ ranks take shm below 2 KiB too (2-8 KiB stays MPICH's).
 * Session 18, 3 ranks on 2 cores (bench/results/defaults-s18.md section 4, all 76 launches): the
 * 8 B shm bcast after a native barrier took 6.66x (1.20-41.4), won back to back (0.03) and tied
 * rotating (1.58, 0.43-3.65); the worst pattern decides, as for MPICH 5's row, so below 64 B at 3
 * ranks (the only count measured so) goes native. 512 B-4 KiB there: intervals 0.01-19.7, no verdict. */
#define MPICH4_DEFAULTS                                                                       \
    [CARACAL_BARRIER]   = "shm native",                                                        \
    [CARACAL_BCAST]     = "shm@-16k#2 native@-64#3-4 shm@-2k#3- shm@8k-#3- node/shm@2k-8k knomial:2@2k-8k native", \
    [CARACAL_REDUCE]    = "shm node/shm@2k-8k knomial:2@2k-8k native",                         \
    [CARACAL_ALLREDUCE] = "shm node/shm@2k-64k recdbl:2@2k-64k native"
/* 2026-11-26, the inline ring deeper and 120 B (bcol/shm/segment.h; it was 8 deep, 56 B):
 * Open MPI's 8-64 B bcast and reduce back to back at 4 and 8 ranks on 2 cores, forced shm
 * against native (bench/results/coll-wait.md; before: 1.5-5.3x, a round of context
 * switches every 8 calls). 64-deep ring, load 25: 0.26-0.96x. 32-deep ring (what is built),
 * load 58: 64 B 0.03-0.73x, reduce 8 B 0.93x at 4 and 8 ranks, bcast 8 B 0.41x at 8 ranks
 * but 1.14x (0.45-1.63) at 4 - a tie with native within the spread, not a demonstrated win.
 * So one-node communicators of 3-8 ranks take shm at every size up to 64 KiB (bcast) or
 * every size (reduce) (`#3-9` until session 15: ranges are half-open; until session 14 it read
 * `#3-8`, which left 8 ranks native where forced shm measured 0.26-0.94x native). 2026-11-26
 * 20:32 UTC, the quiet window: at 8 ranks the default now measures 0.42x native by median (10
 * of 13 cells at 2x; coll-wait-defaults-openmpi.md); at 16 ranks the 8-64 B bcast and reduce,
 * left native from 9 ranks, took 0.98-1.07x, and the shm row measured before it was built
 * 0.58-0.83x back to back, 0.43-0.78x in all three patterns of defaults_check
 * (defaults-check-wait16-openmpi.md). So from 3 ranks without an upper bound. Except the
 * bcast below 64 B at 3-4 ranks: at 4 ranks the 8 B shm bcast lost back to back from one root
 * in every quiet run (1.14-1.39x; coll-wait-defaults-openmpi.md, defaults-check-wait16-openmpi-4-8.md)
 * and won with a rotating root (0.87-0.96x) and, unsteadily, with barriers between calls
 * (0.16-0.94x), as at 2 ranks; 64 B won (0.68x). 3 ranks, 8 B: shm 1.15x back to back, 0.93x /
 * 0.74x; this row, native there, 1.00-1.04x (defaults-check-wait16-openmpi-3-4.md). */
/* Session 16, the quiet window (bench/results/defaults-check-openmpi-s16.md, 2 ranks, three
 * patterns, 95% intervals of the paired ratios): on Open MPI 4.1, as on Open MPI 5 in session 15,
 * the 2-rank shm of allgather(v), gather, alltoall, scan and exscan lost at 512 B and 2 KiB with
 * a native barrier before every call (1.08-1.42x, intervals 1.04-1.53) and won from 4 KiB
 * (0.17-0.42x); from 4 KiB, measured before it was built: no cell above 1.05x
 * (defaults-check-openmpi-s16-changed.md). MPICH 4.0 keeps NEW_FAMILY_DEFAULTS (no loss there). */
#define OPENMPI4_NEW_FAMILY_DEFAULTS                                                          \
    [CARACAL_ALLGATHER] = "shm@4k-8k#2 native", [CARACAL_ALLGATHERV] = "shm@4k-8k#2 native",    \
    [CARACAL_GATHER] = "shm@4k-8k#2 native", [CARACAL_GATHERV] = "native",                      \
    [CARACAL_SCATTER] = "native", [CARACAL_SCATTERV] = "native",                                \
    [CARACAL_ALLTOALL] = "shm@4k-8k#2 native", [CARACAL_ALLTOALLV] = "native",                  \
    [CARACAL_REDUCE_SCATTER] = "shm@512-64k#2 pairwise@32k-#3- native",                         \
    [CARACAL_REDUCE_SCATTER_BLOCK] = "shm@512-64k#2 pairwise@32k-#3- native",                   \
    [CARACAL_SCAN] = "shm@4k-64k#2 native", [CARACAL_EXSCAN] = "shm@4k-8k#2 native",             \
    [CARACAL_ALLTOALLW] = "native"
/* Session 17, the quiet window (bench/results/barrier-openmpi-s17.md, paired against the library
 * alone, 3 runs of 210 repetitions): Open MPI 4.1's 2-rank shm barrier after a native barrier
 * took 1.027x (0.983-1.075), 1.062x (1.036-1.089) and 1.085x (1.068-1.098); native through
 * Caracal's entry, in the same launches, 1.048x (1.043-1.051), 1.029x (1.017-1.037) and 1.039x
 * (1.032-1.052). As Open MPI 5's since session 16: native at 2 ranks, giving up the shm
 * barrier's back-to-back win (0.81x). */
/* Session 18, 3 ranks on 2 cores (bench/results/defaults-s18.md): the 3-rank shm reduce of 8 B
 * back to back from one root took 1.12x (1.04-1.24) (session 17: 1.16x, 1.02-1.21), at 4 ranks
 * 1.06x (0.96-1.11); with a rotating root and after a barrier 0.53-1.18x; 64 B won at 4 ranks
 * (0.54-0.71x). So below 64 B native at 3-4 ranks, as the bcast row: 1.00-1.02x there. */
#define OPENMPI4_DEFAULTS                                                                     \
    [CARACAL_BARRIER]   = "shm#3- native",                                                     \
    [CARACAL_BCAST]     = "shm@512-16k#2 native@-64#3-5 shm@-64k#3- node/shm@2k-8k knomial:2@2k-8k#3-6 native", \
    [CARACAL_REDUCE]    = "shm@512-16k#2 native@-64#3-5 shm#3- node/shm@2k-8k knomial:2@2k-8k#6- native", \
    [CARACAL_ALLREDUCE] = "shm@-1m#2 shm@-16k node/shm@16k-64k recdbl:2@16k-64k native"
/* 2026-11-26 17:47-18:10, the quiet window: bench/coll/defaults_check.py on the package-index
 * libraries, 2 ranks, back to back and barrier-led, 3 rounds (bench/results/defaults-check-
 * openmpi5.md, defaults-check-mpich5.md; the rows below re-measured before they were built with
 * --rules: defaults-check-{openmpi5,mpich5}-changed.md). Open MPI 5.0 (one node: coll_tuned; han
 * disqualifies itself without remote peers): the 2-rank shm of allgather(v), gather, alltoall,
 * scan and exscan lost at 512 B (1.10-1.49x) and 2 KiB, won from 4 KiB (0.2-0.4x), so from 4 KiB;
 * 2-rank shm allreduce wins at 1 and 4 MiB too (0.49-0.58x), so at every size. The 3+-rank
 * parts are Open MPI 4.1's as they were before session 15 (`#3-9`, then 512 B up from 9 ranks):
 * the 16-rank change above was measured on 4.1 only. Session 15 (defaults-check-openmpi5-s15
 * and -s15-changed*.md): 2-rank shm scatter won at 4 and 6 KiB (0.23-0.94x in three runs) and
 * lost at 512 B-2 KiB and 8000 B with a barrier before every call (1.14-1.40x): 4-6 KiB; 2-rank
 * shm reduce_scatter_block won from 256 KiB (0.52-0.73x; Open MPI 5's own takes 1.2-1.5 ms at
 * 1 MiB) and lost at 64 KiB (1.17/1.51x): 64-256 KiB native. Session 16
 * (defaults-check-openmpi5-s16*.md): the 2-rank shm barrier after a native barrier took 1.09x
 * (interval 1.06-1.14, 63 paired repetitions of two runs; back to back it wins, 0.79x): native
 * at 2 ranks (1.01x, defaults-check-openmpi5-s16-changed.md). */
/* Session 17/18, 3 ranks on 2 cores (bench/results/defaults-s17.md, defaults-s18.md): the shm bcast
 * and reduce of 8 B back to back from one root took 1.11x (1.08-1.15) and 1.17x (1.08-1.31) at 3
 * ranks, 1.10x and 1.07x at 4 (they win with a rotating root, 0.44-0.97x); 64 B won at 4 ranks
 * (0.66x, 0.74x). So below 64 B native at 3-4 ranks, as Open MPI 4.1's rows: 1.00-1.03x. */
#define OPENMPI5_DEFAULTS                                                                     \
    [CARACAL_BARRIER]   = "shm#3- native",                                                     \
    [CARACAL_BCAST]     = "shm@512-16k#2 native@-64#3-5 shm@-64k#3-9 shm@512-64k#9- node/shm@2k-8k knomial:2@2k-8k#3-6 native", \
    [CARACAL_REDUCE]    = "shm@512-16k#2 native@-64#3-5 shm#3-9 shm@512-#9- node/shm@2k-8k knomial:2@2k-8k#6- native", \
    [CARACAL_ALLREDUCE] = "shm#2 shm@-16k node/shm@16k-64k recdbl:2@16k-64k native"
#define OPENMPI5_NEW_FAMILY_DEFAULTS                                                          \
    [CARACAL_ALLGATHER] = "shm@4k-8k#2 native", [CARACAL_ALLGATHERV] = "shm@4k-8k#2 native",    \
    [CARACAL_GATHER] = "shm@4k-8k#2 native", [CARACAL_GATHERV] = "native",                      \
    [CARACAL_SCATTER] = "shm@4k-7k#2 native", [CARACAL_SCATTERV] = "native",                    \
    [CARACAL_ALLTOALL] = "shm@4k-8k#2 native", [CARACAL_ALLTOALLV] = "native",                  \
    [CARACAL_REDUCE_SCATTER] = "shm@512-64k#2 pairwise@32k-#3- native",                         \
    [CARACAL_REDUCE_SCATTER_BLOCK] = "shm@512-64k#2 shm@256k-#2 pairwise@32k-#3- native",       \
    [CARACAL_SCAN] = "shm@4k-64k#2 native", [CARACAL_EXSCAN] = "shm@4k-8k#2 native",             \
    [CARACAL_ALLTOALLW] = "native"
/* MPICH 5.0: its own small calls of the newer families take 1-2 us at 2 ranks (Debian's MPICH
 * 4.0: 0.4-1 us), and the families' shm won at 8 B, 512 B, 4 and 32 KiB in both patterns
 * (0.16-0.9x), scan and exscan also at 1 MiB (0.09-0.15x); shm lost from 1 MiB for the others
 * (1.2-1.9x). So 2-rank shm below 64 KiB (scan, exscan: at every size); not gatherv, scatterv,
 * alltoallv, whose selection sees no byte count. The 2-rank shm allreduce lost at 4 KiB with a
 * barrier before every call (1.09x): native from 2 to 16 KiB. Session 15: 2-rank shm allgatherv
 * won at every size measured, 8 B-4 MiB (0.11-0.72x in three runs; allgather lost at 1 MiB):
 * at every size (defaults-check-mpich5-s15-changed.md). */
/* Session 17/18, 3 and 4 ranks on 2 cores (bench/results/defaults-s18.md): after a native barrier
 * the bcast's shm (512 B-2 KiB) and k-nomial over the node segment (2-8 KiB) took 1.10-3.63x
 * MPICH 5's (intervals above 1.05 at 512 B and 4 KiB at 3 ranks, 2 and 4 KiB at 4 ranks), while
 * back to back they took 0.26-0.51x and with a rotating root 0.14-0.64x; the worst pattern
 * decides: native from 512 B to 16 KiB at 3-4 ranks (1.00-1.02x now; 16 KiB wins in every
 * pattern, 0.07-0.26x). From 5 ranks not measured: MPICH 4.0's rows stand. reduce_scatter(_block)
 * at 3 ranks: pairwise won at 32 and 128 KiB per block (0.12-0.73x), tied at 256 KiB (0.94-1.05x)
 * and lost from 512 KiB (1 MiB: 1.15x, 1.07-1.25), where MPICH 5's own turns pairwise (its call
 * drops from 1.1 ms at 128 KiB to 0.2 ms at 256 KiB): pairwise 32-256 KiB only. */
#define MPICH5_BCAST "shm@-16k#2 native@512-16k#3-5 shm@512-2k#3- shm@8k-#3- node/shm@2k-8k knomial:2@2k-8k native"
#define MPICH5_DEFAULTS                                                                       \
    [CARACAL_BARRIER]   = "shm native",                                                        \
    [CARACAL_BCAST]     = MPICH5_BCAST,                                                        \
    [CARACAL_REDUCE]    = "shm node/shm@2k-8k knomial:2@2k-8k native",                         \
    [CARACAL_ALLREDUCE] = "native@2k-16k#2 shm node/shm@2k-64k recdbl:2@2k-64k native"
#define MPICH5_NEW_FAMILY_DEFAULTS                                                            \
    [CARACAL_ALLGATHER] = "shm@-64k#2 native", [CARACAL_ALLGATHERV] = "shm#2 native",           \
    [CARACAL_GATHER] = "shm@-64k#2 native", [CARACAL_GATHERV] = "native",                       \
    [CARACAL_SCATTER] = "shm@-64k#2 native", [CARACAL_SCATTERV] = "native",                     \
    [CARACAL_ALLTOALL] = "shm@-64k#2 native", [CARACAL_ALLTOALLV] = "native",                   \
    [CARACAL_REDUCE_SCATTER] = "shm@-64k#2 pairwise@32k-256k#3- native",                        \
    [CARACAL_REDUCE_SCATTER_BLOCK] = "shm@-64k#2 pairwise@32k-256k#3- native",                  \
    [CARACAL_SCAN] = "shm#2 native", [CARACAL_EXSCAN] = "shm#2 native",                         \
    [CARACAL_ALLTOALLW] = "native"
/* 2026-11-26 20:34-20:36, the quiet window (load 13 -> 7: another run's ranks had not yet
 * gone): bench/coll/defaults_check.py on Intel MPI 2021, 2 ranks, back to back and barrier-led,
 * 3 rounds, with MPICH 4.0's rows (bench/results/defaults-check-impi.md; the rows below
 * re-measured before they were built: defaults-check-impi-changed.md). Intel MPI's own small
 * calls are fast (0.2-0.8 us up to 4 KiB), and the 2-rank shm lost where MPICH 4.0's rows
 * took it: allreduce from 4 KiB (1.16-1.82x) and at 8 B with a barrier before every call
 * (1.09x), reduce at 1 MiB (1.28-1.55x), allgather at 512 B-4 KiB (1.22-1.43x), gather at
 * 512 B-2 KiB with a barrier before every call (1.06-1.21x), reduce_scatter(_block) and scan
 * at 32 KiB (1.07-1.48x). It won at 8 B for alltoall and reduce_scatter(_block) (0.72-0.93x)
 * and at 1 MiB for scan and exscan (0.11-0.13x: Intel MPI's take 1.1-1.2 ms there). Two
 * --rules runs (defaults-check-impi-changed.md, -changed2.md; load 6-19 from other work, so
 * every ratio is +-10-15% here) narrowed the ranges to where shm won in every run: reduce
 * below 32 KiB, allreduce and allgatherv 512 B-2 KiB (2 KiB lost in two of three), alltoall
 * below 4 KiB, reduce_scatter below 2 KiB, exscan 512 B-4 KiB, scan 512 B-8 KiB, gather 4-8
 * KiB; reduce_scatter_block, allgather and scatter native (reduce_scatter_block's shm was
 * 0.72-1.33x, a tie at best). The 3+ rank parts are MPICH 4.0's but where measured at 3 ranks
 * (above). */
/* Session 17/18, 3 ranks on 2 cores (bench/results/defaults-s18.md): the pairwise
 * reduce_scatter(_block) lost at 1 MiB per block (1.19-1.36x, intervals above 1.05) and 512 KiB
 * (0.94-1.53x), tied at 256 KiB (0.87-0.96x) and won at 32-128 KiB (0.12-0.36x): Intel MPI's
 * own, like MPICH's, drops from 1 ms at 128 KiB to 0.2 ms at 256 KiB. So pairwise 32-256 KiB.
 * Intel MPI's own bcast takes 3-4 us at 1-2 KiB back to back at 3 ranks (150-180 us at 512 B
 * and 3-6 KiB, where shm wins, 0.06-0.10x); there the shm and the k-nomial over the node
 * segment lost back to back (1.5 KiB 1.09x, 2 KiB 1.17x and 1.29x (1.09-2.41)) while winning
 * with a rotating root (0.10x) and after a barrier (0.5-0.7x): native 1.5-3 KiB at 3 ranks
 * (4 ranks not measured on Intel MPI). */
#define IMPI_DEFAULTS_BUT_BCAST                                                               \
    [CARACAL_BARRIER]   = "shm native",                                                        \
    [CARACAL_REDUCE]    = "shm@-32k#2 shm#3- node/shm@2k-8k knomial:2@2k-8k native",             \
    [CARACAL_ALLREDUCE] = "shm@512-2k#2 native#2 shm node/shm@2k-64k recdbl:2@2k-64k native"
#define IMPI_DEFAULTS                                                                         \
    IMPI_DEFAULTS_BUT_BCAST,                                                                  \
    [CARACAL_BCAST]     = "shm@-16k#2 native@1536-3k#3-4 shm@512-2k#3- shm@8k-#3- node/shm@2k-8k knomial:2@2k-8k native"
#define IMPI_NEW_FAMILY_DEFAULTS                                                              \
    [CARACAL_ALLGATHER] = "native", [CARACAL_ALLGATHERV] = "shm@512-2k#2 native",               \
    [CARACAL_GATHER] = "shm@4k-8k#2 native", [CARACAL_GATHERV] = "native",                      \
    [CARACAL_SCATTER] = "native", [CARACAL_SCATTERV] = "native",                                \
    [CARACAL_ALLTOALL] = "shm@-4k#2 native", [CARACAL_ALLTOALLV] = "native",                    \
    [CARACAL_REDUCE_SCATTER] = "shm@-2k#2 pairwise@32k-256k#3- native",                         \
    [CARACAL_REDUCE_SCATTER_BLOCK] = "pairwise@32k-256k#3- native",                              \
    [CARACAL_SCAN] = "shm@512-8k#2 shm@1m-#2 native", [CARACAL_EXSCAN] = "shm@512-4k#2 shm@1m-#2 native", \
    [CARACAL_ALLTOALLW] = "native"
/* The MPI-5 ABI build runs on MPICH 5 and Intel MPI alike: only what both libraries' own
 * builds measured faster. Intel MPI's rows are that: at 2 ranks each is a subset of MPICH 5's.
 * The ABI build itself, timed in session 17 (defaults_check --build abi, 2 ranks, 91 cells,
 * bench/results/defaults-check-{mpich5,impi}-abi-s17.md): no cell above 1.05x under either
 * library's ABI mode by its interval; under MPICH 5 it leaves 45 shm wins of MPICH 5's own rows
 * untaken. From session 18 the 3+-rank parts differ: the bcast is MPICH 5's (native 512 B-16 KiB
 * at 3-4 ranks, where MPICH 5's own build lost after a barrier; that also covers Intel MPI's
 * native 1.5-3 KiB), not timed in the ABI build itself; reduce_scatter(_block) is the same on both. */
#if defined(MPI_ABI_VERSION) /* MPI-5 standard ABI: runs on MPICH 5 and Intel MPI */
#define CARACAL_DEFAULTS_FOR "the MPI-5 ABI (MPICH 5, Intel MPI)"
static const char *const defaults[CARACAL_NCOLL] = {IMPI_DEFAULTS_BUT_BCAST, [CARACAL_BCAST] = MPICH5_BCAST,
                                                    IMPI_NEW_FAMILY_DEFAULTS};
#elif defined(I_MPI_VERSION) /* Intel MPI (its mpi.h also defines MPICH_VERSION) */
#define CARACAL_DEFAULTS_FOR "Intel MPI"
static const char *const defaults[CARACAL_NCOLL] = {IMPI_DEFAULTS, IMPI_NEW_FAMILY_DEFAULTS};
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 50000000
#define CARACAL_DEFAULTS_FOR "MPICH 5"
static const char *const defaults[CARACAL_NCOLL] = {MPICH5_DEFAULTS, MPICH5_NEW_FAMILY_DEFAULTS};
#elif defined(MPICH_VERSION)
#define CARACAL_DEFAULTS_FOR "MPICH 4"
static const char *const defaults[CARACAL_NCOLL] = {MPICH4_DEFAULTS, NEW_FAMILY_DEFAULTS};
#elif defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define CARACAL_DEFAULTS_FOR "Open MPI 5"
static const char *const defaults[CARACAL_NCOLL] = {OPENMPI5_DEFAULTS, OPENMPI5_NEW_FAMILY_DEFAULTS};
#else
#define CARACAL_DEFAULTS_FOR "Open MPI 4"
static const char *const defaults[CARACAL_NCOLL] = {OPENMPI4_DEFAULTS, OPENMPI4_NEW_FAMILY_DEFAULTS};
#endif

typedef struct {
    char kind[8];
    caracal_alg alg;
    long long blo, bhi, nlo, nhi;
} rule;

#define MAX_RULES 128 /* per family: a tuned file has one rule per measured cell */
/* Each family's rules on the heap, as many as it has (a handful; a tuned file's more): a
 * static MAX_RULES table per family was 136 KB per process, and under SMPI every simulated
 * rank has its own copy of the static data (2.2 GB at 16,384 ranks). */
static rule *rules[CARACAL_NCOLL];
static int nrules[CARACAL_NCOLL], cap[CARACAL_NCOLL];

/* room for one more rule of family c (0: MAX_RULES reached) */
static int room(int c)
{
    if (nrules[c] == MAX_RULES)
        return 0;
    if (nrules[c] < cap[c])
        return 1;
    int want = cap[c] ? 2 * cap[c] : 8;
    if (want > MAX_RULES)
        want = MAX_RULES;
    rule *grown = realloc(rules[c], (size_t)want * sizeof *grown);
    if (!grown) { /* going on with fewer rules on this rank would make it choose unlike the others */
        if (caracal_out_of_memory)
            caracal_out_of_memory((size_t)want * sizeof *grown);
        abort();
    }
    rules[c] = grown;
    cap[c] = want;
    return 1;
}
static int ready;

/* A non-negative number with an optional k/m/g suffix. It must start with a digit: strtoll
 * alone would also take a sign, so the range "-8k" (up to 8 KiB) read as the number -8192. */
static int parse_num(const char **p, long long *out)
{
    if (!isdigit((unsigned char)**p))
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (end == *p || errno == ERANGE)
        return 0;
    int shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    default: break;
    }
    if (v > (LLONG_MAX >> shift))
        return 0; /* overflow: refused, not wrapped */
    *p = end;
    *out = v << shift;
    return 1;
}

static int parse_range(const char **p, long long *lo, long long *hi)
{
    *lo = 0;
    *hi = -1; /* unbounded */
    int has_lo = parse_num(p, lo);
    if (**p == '-') {
        (*p)++;
        if (!isdigit((unsigned char)**p))
            return has_lo; /* "lo-": unbounded above; "-" alone is empty */
        if (!parse_num(p, hi))
            return 0;
        return *hi > *lo; /* lo-hi must hold something: an inverted or empty range is refused */
    }
    if (!has_lo)
        return 0;
    *hi = *lo + 1;
    return 1;
}

static int parse_rule(const char *s, rule *r)
{
    memset(r, 0, sizeof *r);
    strcpy(r->kind, "comm");
    r->bhi = r->nhi = -1;
    const char *slash = strchr(s, '/');
    if (slash) {
        if (slash - s >= (int)sizeof r->kind)
            return 0;
        memcpy(r->kind, s, slash - s);
        r->kind[slash - s] = 0;
        s = slash + 1;
    }
    int i = 0;
    while (isalnum((unsigned char)*s) || *s == '_')
        if (i < (int)sizeof r->alg.alg - 1)
            r->alg.alg[i++] = *s++;
        else
            return 0;
    r->alg.alg[i] = 0;
    if (!i)
        return 0;
    r->alg.shm = !strcmp(r->alg.alg, "shm");
    r->alg.rect = !strcmp(r->alg.alg, "rect");
    if (*s == ':') {
        s++;
        long long v;
        if (!parse_num(&s, &v) || v > 1024)
            return 0; /* a radix or arity beyond any group size */
        /* a k-nomial radix below 2 is no tree; an n-ary arity of 1 is a chain */
        if (v < (strcmp(r->alg.alg, "nary") ? 2 : 1))
            return 0;
        r->alg.param = (int)v;
    }
    while (*s) {
        char c = *s++;
        if (c == '@' && parse_range(&s, &r->blo, &r->bhi))
            continue;
        if (c == '#' && parse_range(&s, &r->nlo, &r->nhi))
            continue;
        return 0;
    }
    return !strcmp(r->kind, "comm") || !strcmp(r->kind, "top") || !strcmp(r->kind, "node") ||
           !strcmp(r->kind, "socket");
}

/* A rule must name `native` or an algorithm of its family (coll/algorithms.def): a comm
 * rule one with a schedule, a level rule any primitive of the family. */
static int known(int c, const rule *r)
{
    if (!strcmp(r->alg.alg, "native"))
        return 1;
    const caracal_alg_info *a = caracal_alg_find(c, r->alg.alg);
    if (!a)
        return 0;
    return strcmp(r->kind, "comm") ? strstr(a->scope, "level") != NULL : a->start != NULL;
}

static int parse_into(int c, const char *text, const char *origin)
{
    int refused = 0;
    char *copy = strdup(text), *save = NULL;
    if (!copy) { /* ignoring the rules on this rank only would make it choose unlike the others */
        if (caracal_out_of_memory)
            caracal_out_of_memory(strlen(text) + 1);
        caracal_warn_job("%s: out of memory reading the rules for %s; ignored", origin, caracal_coll_names[c]);
        return 1;
    }
    for (char *tok = strtok_r(copy, ",; \t", &save); tok; tok = strtok_r(NULL, ",; \t", &save)) {
        if (!room(c)) {
            caracal_warn_job("%s: more than %d rules for %s; the rest ignored", origin, MAX_RULES, caracal_coll_names[c]);
            break;
        }
        if (!parse_rule(tok, &rules[c][nrules[c]]) && ++refused)
            caracal_warn_job("%s: cannot read rule '%s' (grammar: [kind/]alg[:k][@bytes][#ranks], radix >= 2, "
                             "ranges lo-hi with lo < hi; see `caracal info`); ignored", origin, tok);
        else if (!known(c, &rules[c][nrules[c]]) && ++refused)
            caracal_warn_job("%s: '%s' is not a %s algorithm%s (see `caracal info`); ignored", origin, tok,
                             caracal_coll_names[c], strcmp(rules[c][nrules[c]].kind, "comm") ? " for a level" : "");
        else
            nrules[c]++;
    }
    free(copy);
    return refused;
}

/* Level rules choose a primitive inside a Caracal schedule; on their own they would never
 * apply wherever the defaults say native. A user's rule set with level rules and no comm
 * rule therefore also selects the family's default schedule for the calls the level rules
 * cover (their byte and size ranges); `CARACAL_LOG=init` says so. */
static void imply_schedule(int c, int first, const char *origin)
{
    int has_comm = 0, nlevel = nrules[c] - first;
    for (int i = first; i < nrules[c]; i++)
        has_comm |= !strcmp(rules[c][i].kind, "comm");
    const caracal_alg_info *d = caracal_alg_default(c);
    if (has_comm || !nlevel || !d)
        return;
    for (int i = first; i < first + nlevel && room(c); i++) {
        rule *r = &rules[c][nrules[c]++];
        *r = rules[c][i];
        strcpy(r->kind, "comm");
        memset(&r->alg, 0, sizeof r->alg);
        snprintf(r->alg.alg, sizeof r->alg.alg, "%s", d->name);
        r->nlo = 0; /* the level's group-size range is not the communicator's */
        r->nhi = -1;
    }
    caracal_log("init", "%s has only level rules: the %s schedule runs where they apply", origin, d->name);
}

static int mode = -1;

int caracal_coll_mode(void)
{
    if (mode < 0) {
        const char *v = caracal_setting_str(CARACAL_SET_COLL);
        if (!strcasecmp(v, "force"))
            mode = 2;
        else if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcasecmp(v, "false"))
            mode = 0;
        else if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true") || !*v)
            mode = 1;
        else {
            caracal_warn_job("CARACAL_COLL=%s is not 0, 1 or force; using 1 (the selection rules)", v);
            mode = 1;
        }
    }
    return mode;
}

const char *caracal_select_defaults(caracal_coll coll) { return defaults[coll]; }

/* Applications repeat the same call: remember the last answer per collective, so a repeat
 * costs a comparison instead of a walk over the rules (per-call overhead is what small
 * messages pay for). Not under MPI_THREAD_MULTIPLE: one thread would read a choice another
 * is writing (a torn copy names an algorithm the rules never chose); threads walk the rules,
 * and repeats there are still caught earlier by the per-thread memo (coll/native_memo.h). */
static struct {
    int valid, size, ret;
    size_t bytes;
    caracal_choice choice;
} last[CARACAL_NCOLL];

/* Families whose comm rules can only answer native (every new family by default, and any
 * family a tuned file leaves native): their calls skip the size and type queries and the
 * rule walk, so going native through Caracal costs about a branch. */
/* caracal_select_native_only: 0 until the rules are read (core/hot.h) */
_Static_assert(CARACAL_NCOLL <= CARACAL_HOT_NCOLL, "core/hot.h has a native-only flag for every family");

static void note_never(int c)
{
    caracal_select_native_only[c] = 0;
    if (caracal_coll_mode() == 2) /* force: Caracal's default wherever the rules say native */
        return;
    if (caracal_peer_budget() > 0) /* a budget may take native calls to the hierarchical default */
        return;
    if (caracal_log_enabled("algo")) /* the slow path logs "<family> native" for every call */
        return;
    for (int i = 0; i < nrules[c]; i++) {
        const rule *r = &rules[c][i];
        if (strcmp(r->kind, "comm"))
            continue;
        if (strcmp(r->alg.alg, "native"))
            return;
        if (r->blo <= 0 && r->bhi < 0 && r->nlo <= 0 && r->nhi < 0)
            break; /* an unconditional native rule: nothing after it applies */
    }
    caracal_select_native_only[c] = 1;
}
static char *replaced[CARACAL_NCOLL]; /* caracal_set_rules: in place of CARACAL_<FAMILY> */

static int build_family(int c, const char *file)
{
    int setting = caracal_family_setting(c);
    nrules[c] = 0;
    char origin[64];
    if (replaced[c])
        snprintf(origin, sizeof origin, "caracal_set_rules(%s)", caracal_coll_names[c]);
    else
        snprintf(origin, sizeof origin, "CARACAL_%s", caracal_settings[setting].name);
    int refused = parse_into(c, replaced[c] ? replaced[c] : caracal_setting_str(setting), origin);
    imply_schedule(c, 0, origin);
    int first = nrules[c];
    char forigin[4200];
    snprintf(forigin, sizeof forigin, "rules file %s (%s)", file ? file : "", caracal_coll_names[c]);
    parse_into(c, caracal_rules_file_text(c), forigin);
    imply_schedule(c, first, forigin);
    parse_into(c, defaults[c], "built-in selection for " CARACAL_DEFAULTS_FOR);
    note_never(c);
    return refused;
}

void caracal_select_setup(void)
{
    if (ready)
        return;
    ready = 1;
    caracal_rules_file_load();
    const char *file = caracal_rules_file_path();
    for (int c = 0; c < CARACAL_NCOLL; c++)
        if (!(caracal_family_flags(c) & CARACAL_FAM_NATIVE)) /* else no rules (its setting is CARACAL_COLL) */
            build_family(c, file);
}

int caracal_set_rules(const char *family, const char *rules)
{
    caracal_select_setup();
    int c = -1;
    for (int i = 0; family && i < CARACAL_NCOLL; i++)
        if (!strcmp(family, caracal_coll_names[i]))
            c = i;
    if (c < 0 || (caracal_family_flags(c) & CARACAL_FAM_NATIVE))
        return -1;
    free(replaced[c]);
    replaced[c] = rules ? strdup(rules) : NULL;
    if (rules && !replaced[c] && caracal_out_of_memory)
        caracal_out_of_memory(strlen(rules) + 1);
    int refused = build_family(c, caracal_rules_file_path());
    memset(last, 0, sizeof last);
    caracal_select_generation++;
    return refused ? -1 : 0;
}

static int in(long long x, long long lo, long long hi) { return x >= lo && (hi < 0 || x < hi); }


/* The first comm rule that matches (skipping `shm` rules when skip_shm). */
static void first_match(caracal_coll coll, int comm_size, size_t bytes, int skip, caracal_choice *choice)
{
    choice->coll = coll;
    choice->bytes = bytes;
    memset(&choice->top, 0, sizeof choice->top);
    strcpy(choice->top.alg, "native");
    for (int i = 0; i < nrules[coll]; i++) {
        rule *r = &rules[coll][i];
        if (strcmp(r->kind, "comm") || !in((long long)bytes, r->blo, r->bhi) || !in(comm_size, r->nlo, r->nhi))
            continue;
        if (((skip & CARACAL_SKIP_SHM) && r->alg.shm) || ((skip & CARACAL_SKIP_RECT) && r->alg.rect))
            continue;
        choice->top = r->alg;
        break;
    }
}

int caracal_select_without_shm(caracal_coll coll, int comm_size, size_t bytes, caracal_choice *choice)
{
    return caracal_select_skipping(coll, comm_size, bytes, CARACAL_SKIP_SHM, choice);
}

/* CARACAL_PEER_BUDGET (coll/peer_budget.h): a rule that is native (peers unknown) or a flat
 * algorithm that may reach more ranks than the budget gives way to the family's default
 * where that is hierarchical. Decided from the size alone, as every selection is: a
 * communicator of more than budget+1 ranks may span nodes. */
static int within_budget(caracal_coll coll, int comm_size, int ret, caracal_choice *choice)
{
    int b = caracal_peer_budget();
    if (b <= 0 || comm_size <= b + 1 || (caracal_family_flags(coll) & CARACAL_FAM_NATIVE))
        return ret;
    if (caracal_flat_peers(coll, ret ? choice->top.alg : "native", comm_size) <= b)
        return ret;
    const caracal_alg_info *d = caracal_alg_default(coll);
    if (!d || caracal_flat_peers(coll, d->name, comm_size) > b)
        return ret; /* no hierarchical algorithm in this family */
    memset(&choice->top, 0, sizeof choice->top);
    snprintf(choice->top.alg, sizeof choice->top.alg, "%s", d->name);
    return 1;
}

int caracal_select_skipping(caracal_coll coll, int comm_size, size_t bytes, int skip, caracal_choice *choice)
{
    caracal_select_setup();
    first_match(coll, comm_size, bytes, skip, choice);
    return within_budget(coll, comm_size, strcmp(choice->top.alg, "native") != 0, choice);
}

int caracal_select(caracal_coll coll, int comm_size, size_t bytes, caracal_choice *choice)
{
    if (!caracal_threaded && last[coll].valid && last[coll].size == comm_size && last[coll].bytes == bytes) {
        *choice = last[coll].choice;
        return last[coll].ret;
    }
    caracal_select_setup();
    first_match(coll, comm_size, bytes, 0, choice);
    int ret = strcmp(choice->top.alg, "native") != 0;
    if (!ret && caracal_coll_mode() == 2 && !(caracal_family_flags(coll) & CARACAL_FAM_NATIVE)) {
        /* force: the family's default algorithm wherever the rules say native */
        const caracal_alg_info *d = caracal_alg_default(coll);
        if (d) {
            memset(&choice->top, 0, sizeof choice->top);
            snprintf(choice->top.alg, sizeof choice->top.alg, "%s", d->name);
            choice->top.shm = !strcmp(d->name, "shm");
            choice->top.rect = !strcmp(d->name, "rect");
            ret = 1;
        }
    }
    ret = within_budget(coll, comm_size, ret, choice);
    if (caracal_threaded)
        return ret;
    last[coll].choice = *choice;
    last[coll].size = comm_size;
    last[coll].bytes = bytes;
    last[coll].ret = ret;
    last[coll].valid = 1;
    return ret;
}

caracal_alg caracal_select_level(const caracal_choice *choice, const char *kind, int n)
{
    for (int i = 0; i < nrules[choice->coll]; i++) {
        rule *r = &rules[choice->coll][i];
        if (!strcmp(r->kind, kind) && in((long long)choice->bytes, r->blo, r->bhi) && in(n, r->nlo, r->nhi))
            return r->alg;
    }
    return choice->top;
}
