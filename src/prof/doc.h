/* The caracal.profile/1 document in memory, and its writer. The same writer serves
 * the gathered document (rank 0 at MPI_Finalize) and a rank's partial piece. */
#ifndef CARACAL_PROF_DOC_H
#define CARACAL_PROF_DOC_H
#include "json.h"
#include "prof.h"

typedef struct {
    int rank, pid, partial, ncs;
    double time_total, time_mpi;
    char host[64];
    char library[256]; /* this rank's MPI_Get_library_version, first line */
    caracal_csize cs[CARACAL_CSIZE_CAP];
} caracal_rank_info;

/** Where a call site is: filled by resolve.c. Strings may be NULL. */
typedef struct {
    const char *module, *function, *file;
    /* the functions the call was inlined into, innermost first, "function\tfile\tline\n" each */
    const char *inlined;
    uint64_t offset;
    int line;
} caracal_where;

typedef struct {
    int fn;
    caracal_where at;
    caracal_stat st;
    /* per rank; NULL in a piece */
    uint64_t *pr_count, *pr_time, *pr_bytes, *pr_tmin, *pr_tmax, *pr_sent, *pr_recv;
} caracal_msite;

typedef struct {
    int nranks, partial;
    int single;                      /* a piece: the one rank it describes; -1 when gathered */
    const caracal_rank_info *ranks;  /* nranks_info entries */
    int nranks_info;
    const caracal_stat *fn;          /* CARACAL_FN_COUNT entries */
    const caracal_msite *sites;
    int nsites;
    const uint64_t *msgs, *bytes;    /* nranks x nranks (row = sender); a piece: its row */
    const caracal_coll *coll;
    int ncoll;
    const caracal_root *roots;
    int nroots;
} caracal_doc;

/* Facts about the job, set at MPI_Init (profiler.c). */
extern char caracal_prof_library[256], caracal_prof_mpi_version[16];
extern char caracal_prof_program[1024], caracal_prof_cmdline[8192];
extern size_t caracal_prof_cmdline_len;
extern const char *caracal_prof_path;

void caracal_doc_write(caracal_jw *w, const caracal_doc *d);
void caracal_rank_info_fill(caracal_rank_info *ri, int partial);

/* resolve.c: SITES[i] -> OUT[i]; with full == 0 only dladdr (safe enough in a signal handler). */
void caracal_resolve(const caracal_site *const *sites, int n, caracal_where *out, int full);

/* output.c */
void caracal_prof_gather_and_write(void);
void caracal_prof_write_piece(int in_signal);
/** The partial piece's tables, taken when profiling starts (0, or -1: out of memory). */
int caracal_prof_piece_alloc(void);
int caracal_msite_cmp_time(const void *a, const void *b);

#endif
