/* caracal_print_hierarchy (include/caracal.h): the levels and groups Caracal built for a
 * communicator, as JSON, for `caracal info --hierarchy`. Every rank holds every level's
 * group ids, so only the hosts need gathering. */
#include "caracal.h"
#include "sbgp/hier.h"
#include "bcol/shm/shm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int caracal_print_hierarchy(MPI_Comm comm)
{
    caracal_hier *h = caracal_hier_get(comm);
    int rank, n;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    char *names = rank == 0 ? caracal_xcalloc((size_t)n, MPI_MAX_PROCESSOR_NAME) : NULL;
    PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
    /* whether each rank's node group got a shared segment (the budget may refuse one) */
    int shm = h && h->nlevels > 0 && caracal_shm_usable(h, 0);
    int *shms = rank == 0 ? caracal_xcalloc((size_t)n, sizeof(int)) : NULL;
    PMPI_Gather(&shm, 1, MPI_INT, shms, 1, MPI_INT, 0, comm);
    if (rank == 0 && h) {
        FILE *f = stdout;
        fprintf(f, "{\"schema\": \"caracal.hierarchy/1\", \"ranks\": %d, \"summary\": ", n);
        json_str(f, h->desc);
        fprintf(f, ",\n \"hosts\": [");
        for (int i = 0; i < n; i++) {
            fprintf(f, i ? ", " : "");
            json_str(f, names + (size_t)i * MPI_MAX_PROCESSOR_NAME);
        }
        fprintf(f, "],\n \"levels\": [");
        for (int l = 0; l < h->nlevels; l++) {
            const caracal_level *lv = &h->level[l];
            fprintf(f, "%s\n  {\"kind\": \"%s\", \"largest_group\": %d, \"groups\": [", l ? "," : "", lv->kind,
                    lv->maxgroup);
            int first = 1;
            for (int g = 0; g < n; g++) {
                if (caracal_level_group(h, l, g) != g)
                    continue;
                fprintf(f, "%s{\"leader\": %d, \"members\": [", first ? "" : ", ", g);
                first = 0;
                int m = 0, shared = 1;
                for (int i = g; i < n; i++)
                    if (caracal_level_group(h, l, i) == g) {
                        fprintf(f, "%s%d", m++ ? ", " : "", i);
                        shared &= shms[i];
                    }
                fprintf(f, "]");
                if (l == 0 && strcmp(lv->kind, "top"))
                    fprintf(f, ", \"shm\": %s", shared && m > 1 ? "true" : "false");
                fprintf(f, "}");
            }
            fprintf(f, "]}");
        }
        fprintf(f, "]}\n");
        fflush(f);
    }
    free(names);
    free(shms);
    return h ? 0 : -1;
}
