/* The profiler module: switched on by CARACAL_PROFILE=PATH at MPI_Init, writes the
 * document at MPI_Finalize. MPI_Pcontrol(0) pauses counting, any other level resumes. */
#define _GNU_SOURCE
#include "profiler.h"
#include "gen_funcs.h" /* CARACAL_HAVE_FORTRAN */
#include "config.h"
#include "doc.h"
#include "log.h"
#include "under_smpi.h" /* PMPI_Pcontrol, which SMPI 3.32 lacks */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char caracal_prof_library[256], caracal_prof_mpi_version[16];
char caracal_prof_program[1024], caracal_prof_cmdline[8192];
size_t caracal_prof_cmdline_len;
const char *caracal_prof_path;

static int enabled, finished, paused;
static char host[64];

void caracal_rank_info_fill(caracal_rank_info *ri, int partial)
{
    memset(ri, 0, sizeof *ri);
    ri->rank = caracal_prof.rank;
    ri->pid = (int)getpid();
    ri->partial = partial;
    uint64_t end = caracal_prof.t_end ? caracal_prof.t_end : caracal_now();
    ri->time_total = (double)(end - caracal_prof.t_start) * 1e-9;
    ri->time_mpi = (double)caracal_prof.t_mpi * 1e-9;
    memcpy(ri->host, host, sizeof ri->host);
    memcpy(ri->library, caracal_prof_library, sizeof ri->library);
    for (int i = 0; i < CARACAL_CSIZE_CAP && caracal_prof.csizes[i].count; i++)
        ri->cs[ri->ncs++] = caracal_prof.csizes[i];
}

/* ---- the crash path: write what this rank has, then die as the signal says ---- */
static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};

static void on_fatal(int sig)
{
    caracal_prof_write_piece(1);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void at_exit(void)
{
    if (enabled && !finished)
        caracal_prof_write_piece(0); /* exit without MPI_Finalize, or a Finalize we never saw */
}

static void read_facts(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, v = 0, sv = 0;
    PMPI_Get_library_version(lib, &len);
    lib[len < (int)sizeof lib ? len : (int)sizeof lib - 1] = 0;
    lib[strcspn(lib, "\n")] = 0;
    /* MPICH writes "MPICH Version:\t4.0.2": control characters become one space each run */
    char *o = lib;
    for (const char *c = lib; *c; c++) {
        if ((unsigned char)*c >= 0x20)
            *o++ = *c;
        else if (o > lib && o[-1] != ' ')
            *o++ = ' ';
    }
    *o = 0;
    snprintf(caracal_prof_library, sizeof caracal_prof_library, "%.255s", lib);
    PMPI_Get_version(&v, &sv);
    snprintf(caracal_prof_mpi_version, sizeof caracal_prof_mpi_version, "%d.%d", v, sv);
    ssize_t k = readlink("/proc/self/exe", caracal_prof_program, sizeof caracal_prof_program - 1);
    caracal_prof_program[k > 0 ? k : 0] = 0;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        caracal_prof_cmdline_len = fread(caracal_prof_cmdline, 1, sizeof caracal_prof_cmdline - 1, f);
        fclose(f);
    }
    gethostname(host, sizeof host - 1);
}

static void after_init(void)
{
    const char *path = caracal_setting_str(CARACAL_SET_PROFILE);
    if (!path[0])
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &caracal_prof.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &caracal_prof.nranks);
    caracal_prof.msgs = calloc((size_t)caracal_prof.nranks, sizeof(uint64_t));
    caracal_prof.bytes = calloc((size_t)caracal_prof.nranks, sizeof(uint64_t));
    /* the tables (8 MB) are taken only by a profiled run: as zeroed globals they would be
     * copied into every simulated rank under SMPI's privatization (docs/simulate.md) */
    caracal_prof.sites = calloc(CARACAL_SITE_CAP, sizeof *caracal_prof.sites);
    caracal_prof.fn = calloc(CARACAL_FN_COUNT, sizeof *caracal_prof.fn);
    caracal_prof.coll = calloc(CARACAL_COLL_CAP, sizeof *caracal_prof.coll);
    caracal_prof.roots = calloc(CARACAL_ROOT_CAP, sizeof *caracal_prof.roots);
    if (!caracal_prof.msgs || !caracal_prof.bytes || !caracal_prof.sites || !caracal_prof.fn || !caracal_prof.coll ||
        !caracal_prof.roots || caracal_prof_piece_alloc()) {
        caracal_warn("profiler: out of memory; profiling is off");
        return;
    }
    caracal_prof_path = path;
    read_facts();
    caracal_comm_get(MPI_COMM_WORLD); /* counts MPI_COMM_WORLD among the communicators */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < sizeof fatal / sizeof *fatal; i++)
        sigaction(fatal[i], &sa, NULL);
    atexit(at_exit);
    enabled = 1;
    caracal_clock_start();
    caracal_prof.t_start = caracal_now();
    caracal_prof_on = 1;
    caracal_log("prof", "profiling to %s", path);
}

static void before_finalize(void)
{
    if (!enabled || finished)
        return;
    caracal_prof_on = 0;
    caracal_prof.t_end = caracal_now();
    caracal_prof_times_to_ns();
    caracal_prof_gather_and_write();
    finished = 1;
    for (unsigned i = 0; i < sizeof fatal / sizeof *fatal; i++)
        signal(fatal[i], SIG_DFL);
}

const caracal_module caracal_prof_module = {"prof", after_init, before_finalize};

void caracal_prof_pcontrol(int level)
{
    if (!enabled || finished)
        return;
    paused = level == 0;
    caracal_prof_on = !paused;
}

int MPI_Pcontrol(const int level, ...)
{
    caracal_prof_pcontrol(level);
    return PMPI_Pcontrol(level);
}

#if CARACAL_HAVE_FORTRAN /* gen_funcs.h: not in an MPI-5 ABI build (no MPI_Fint) */
/* Fortran: MPI_PCONTROL(LEVEL) has no IERROR argument. */
void caracal_f_pcontrol(const MPI_Fint *level);
void caracal_f_pcontrol(const MPI_Fint *level)
{
    caracal_prof_pcontrol(*level);
    PMPI_Pcontrol(*level);
}
void mpi_pcontrol_(const MPI_Fint *) __attribute__((alias("caracal_f_pcontrol")));
void mpi_pcontrol__(const MPI_Fint *) __attribute__((alias("caracal_f_pcontrol")));
void mpi_pcontrol(const MPI_Fint *) __attribute__((alias("caracal_f_pcontrol")));
void MPI_PCONTROL(const MPI_Fint *) __attribute__((alias("caracal_f_pcontrol")));
/* mpi_f08 (both libraries): MPICH's calls PMPI_Pcontrol directly, so it must be caught here. */
void mpi_pcontrol_f08_(const MPI_Fint *) __attribute__((alias("caracal_f_pcontrol")));
#endif
