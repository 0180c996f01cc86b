/* caracal-nodemap: discover where ranks run and how far apart they are, and
 * write a caracal.topology/1 document. Run it under mpiexec with the ranks
 * placed as the application will be (`caracal nodemap` does that).
 *   caracal-nodemap --out TOPO.json [options]     measure (under mpiexec)
 *   caracal-nodemap --check TOPO.json             read a file back, no MPI */
#include "nodemap.h"
#include "topology.h"
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: caracal-nodemap --out FILE [--reps N] [--warmup N] [--ratio R] [--gap G] [--no-prune]\n"
    "                       [--landmarks K]\n"
    "                       [--bw-size BYTES] [--bw-reps N] [--bw-per-class N]\n"
    "       caracal-nodemap --check FILE\n";

/* Parse argv; 0 ok, else a message in err. */
static int parse(int argc, char **argv, nm_options *o, const char **out, const char **check, char *err, size_t errlen)
{
    *o = (nm_options){.reps = 30, .warmup = 5, .ratio = 4.0, .gap = 2.0, .prune = 1,
                      .bw_size = 1 << 20, .bw_reps = 3, .bw_per_class = 2};
    *out = *check = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--no-prune")) { o->prune = 0; continue; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { snprintf(err, errlen, "help"); return 1; }
        if (strncmp(a, "--", 2)) { snprintf(err, errlen, "unexpected argument '%s'", a); return -1; }
        if (!v) { snprintf(err, errlen, "%s needs a value", a); return -1; }
        i++;
        if (!strcmp(a, "--out")) { *out = v; continue; }
        if (!strcmp(a, "--check")) { *check = v; continue; }
        double d = strtod(v, &end);
        int bad = end == v || *end;
        if (!strcmp(a, "--reps")) bad |= d < 1 || d > 1e6, o->reps = (int)d;
        else if (!strcmp(a, "--warmup")) bad |= d < 0 || d > 1e6, o->warmup = (int)d;
        else if (!strcmp(a, "--ratio")) bad |= !(d > 1), o->ratio = d;
        else if (!strcmp(a, "--gap")) bad |= !(d > 1), o->gap = d;
        else if (!strcmp(a, "--landmarks")) bad |= d < 0 || d > 1 << 20 || d != (int)d, o->landmarks = (int)d;
        else if (!strcmp(a, "--bw-size")) bad |= d < 0 || d > (1 << 30), o->bw_size = (long)d;
        else if (!strcmp(a, "--bw-reps")) bad |= d < 1 || d > 1e6, o->bw_reps = (int)d;
        else if (!strcmp(a, "--bw-per-class")) bad |= d < 0 || d > 1e6, o->bw_per_class = (int)d;
        else { snprintf(err, errlen, "unknown option %s", a); return -1; }
        if (bad) { snprintf(err, errlen, "invalid value for %s: '%s'", a, v); return -1; }
    }
    if (!*out && !*check) { snprintf(err, errlen, "--out FILE or --check FILE is required"); return -1; }
    if (*out && *check) { snprintf(err, errlen, "--out and --check do not go together"); return -1; }
    return 0;
}

/* --check: the same reader libcaracal uses; prints what it understood. */
static int check(const char *path)
{
    caracal_topology t;
    char err[400];
    if (caracal_topology_read(path, &t, err, sizeof err)) {
        fprintf(stderr, "caracal-nodemap: %s\n", err);
        return 2;
    }
    printf("nranks %d\nsource %s\npairs_measured %ld\npairs_estimated %ld\n", t.nranks, t.source, t.pairs_measured,
           t.pairs_estimated);
    for (int l = 0; l < t.nlevels; l++) {
        printf("level %s %d:", t.level_name[l], t.ngroups[l]);
        for (int r = 0; r < t.nranks; r++)
            printf(" %d", caracal_topology_group(&t, l, r));
        printf("\n");
    }
    caracal_topology_free(&t);
    return 0;
}

static int finish(int rc)
{
    MPI_Finalize();
    return rc;
}

int main(int argc, char **argv)
{
    nm_options o;
    const char *out, *chk;
    char err[300];
    int prc = parse(argc, argv, &o, &out, &chk, err, sizeof err);
    if (prc == 0 && chk)
        return check(chk);  /* no MPI needed: works where nothing can be launched */

    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (prc) {
        if (rank == 0) {
            if (prc > 0) fputs(usage, stdout);
            else fprintf(stderr, "caracal-nodemap: %s\n", err);
        }
        return finish(prc > 0 ? 0 : 2);
    }

    /* Open the output first: a bad path should fail before minutes of measuring.
     * Written to PATH.tmp and renamed, so a failed run never leaves half a file. */
    char tmp[4096];
    FILE *f = NULL;
    int ok = 1;
    if (rank == 0) {
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        if (!(f = fopen(tmp, "w"))) {
            fprintf(stderr, "caracal-nodemap: cannot write %s\n", out);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        return finish(2);

    MPI_Comm comm;  /* private: nothing else can match our messages */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    nm_place *pl = calloc((size_t)n, sizeof *pl);
    nm_place_gather(comm, pl);

    nm_latency lat = {n, calloc((size_t)n * n, sizeof(double)), calloc((size_t)n * n, 1), 0, 0};
    nm_measure_latency(comm, pl, &o, &lat);

    nm_level levels[NM_MAX_LEVELS];
    int nlevels = nm_levels_build(n, pl, &lat, o.gap, levels, NM_MAX_LEVELS);
    int maxbw = (nlevels + 1) * (o.bw_per_class > 0 ? o.bw_per_class : 0);
    nm_bw *bw = calloc((size_t)maxbw + 1, sizeof *bw);
    int nbw = nm_measure_bandwidth(comm, pl, levels, nlevels, &o, bw, maxbw);

    int rc = 0;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = 0;
        nm_write_json(f, n, pl, &lat, levels, nlevels, bw, nbw, &o, lib);
        if (fclose(f) || rename(tmp, out)) {
            fprintf(stderr, "caracal-nodemap: cannot write %s\n", out);
            remove(tmp);
            rc = 2;
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    nm_levels_free(levels, nlevels);
    free(bw), free(pl), free(lat.L), free(lat.state);
    MPI_Comm_free(&comm);
    return finish(rc);
}
