/* caracal-info: prints Caracal's version and settings table as JSON. */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--version")) {
        printf("%s\n", caracal_version());
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--algorithms")) {
        caracal_print_algorithms();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--check")) { /* no MPI: the settings and rules alone */
        int problems = caracal_check_settings();
        if (problems)
            printf("caracal-info: %d problem%s in the CARACAL_* settings (a job would warn as above)\n", problems,
                   problems == 1 ? "" : "s");
        else
            printf("caracal-info: every CARACAL_* setting and selection rule is valid\n");
        return problems ? 2 : 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--hierarchy")) { /* under mpiexec: the levels for this launch */
        MPI_Init(&argc, &argv);
        int rc = caracal_print_hierarchy(MPI_COMM_WORLD);
        MPI_Finalize();
        if (rc) {
            fprintf(stderr, "caracal-info: Caracal's collectives are off in this launch (CARACAL_COLL=0?): no hierarchy\n");
            return 1;
        }
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "caracal-info: unknown option %s (usage: caracal-info [--version|--algorithms|--check|--hierarchy])\n", argv[1]);
        return 2;
    }
    caracal_print_settings();
    return 0;
}
