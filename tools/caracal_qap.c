/* caracal-qap: solve a QAPLIB instance and print the cost and permutation.
 * Needs no MPI at run time; the `caracal map --qaplib` command runs it. */
#include "qap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: caracal-qap FILE.dat [--time SECONDS] [--seed K] [--iterations N] "
    "[--method grasp|tabu|auto] [--json]";

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "caracal-qap: %s '%s' (%s)\n", what, arg, usage);
    return 2;
}

int main(int argc, char **argv)
{
    caracal_qap_options o;
    caracal_qap_options_init(&o);
    const char *file = NULL;
    int json = 0, time_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s\n", usage);
            return 0;
        } else if (!strcmp(a, "--time") || !strcmp(a, "--seed") || !strcmp(a, "--iterations") ||
                   !strcmp(a, "--method")) {
            if (!val)
                return bad("missing value after", a);
            i++;
            errno = 0;
            if (!strcmp(a, "--time")) {
                o.time_limit = strtod(val, &end);
                if (*end || end == val || errno || !isfinite(o.time_limit) || o.time_limit <= 0)
                    return bad("--time needs a positive number of seconds, not", val);
                time_given = 1;
            } else if (!strcmp(a, "--seed")) {
                o.seed = strtoull(val, &end, 10);
                if (*end || end == val || errno || val[0] == '-')
                    return bad("--seed needs a non-negative integer, not", val);
            } else if (!strcmp(a, "--iterations")) {
                o.max_iterations = strtoll(val, &end, 10);
                if (*end || end == val || errno || o.max_iterations <= 0)
                    return bad("--iterations needs a positive integer, not", val);
            } else if (!strcmp(val, "grasp")) {
                o.method = CARACAL_QAP_GRASP;
            } else if (!strcmp(val, "tabu")) {
                o.method = CARACAL_QAP_TABU;
            } else if (!strcmp(val, "auto")) {
                o.method = CARACAL_QAP_AUTO;
            } else {
                return bad("--method must be grasp, tabu or auto, not", val);
            }
        } else if (a[0] == '-' && a[1]) {
            return bad("unknown option", a);
        } else if (file) {
            return bad("only one file, but also got", a);
        } else {
            file = a;
        }
    }
    if (!file) {
        fprintf(stderr, "caracal-qap: no QAPLIB file given (%s)\n", usage);
        return 2;
    }
    /* --iterations alone means: exactly that much work, whatever the clock says. */
    if (o.max_iterations > 0 && !time_given)
        o.time_limit = 0;

    caracal_qap_problem pb;
    char err[512];
    if (caracal_qaplib_read(file, &pb, err, sizeof err)) {
        fprintf(stderr, "caracal-qap: %s\n", err);
        return 2;
    }
    int *perm = malloc(sizeof(int) * (size_t)pb.n);
    caracal_qap_result res;
    if (!perm || caracal_qap_solve(&pb, &o, perm, &res)) {
        if (perm && errno == EOVERFLOW)
            fprintf(stderr, "caracal-qap: %s: matrix entries too large: costs could overflow 64 bits\n", file);
        else
            fprintf(stderr, "caracal-qap: %s: cannot solve: %s\n", file, strerror(perm ? errno : ENOMEM));
        return perm && errno == EOVERFLOW ? 2 : 1;
    }
    if (json) {
        printf("{\"n\": %d, \"cost\": %lld, \"seconds\": %.6f, \"iterations\": %lld, \"method\": \"%s\", "
               "\"seed\": %llu, \"permutation\": [",
               pb.n, (long long)res.cost, res.seconds, res.iterations, caracal_qap_method_name(res.method),
               (unsigned long long)o.seed);
        for (int i = 0; i < pb.n; i++)
            printf(i ? ", %d" : "%d", perm[i]);
        printf("]}\n");
    } else {
        printf("cost %lld\npermutation (0-based, unit i -> location):", (long long)res.cost);
        for (int i = 0; i < pb.n; i++)
            printf(" %d", perm[i]);
        printf("\nmethod %s, seed %llu, %lld iterations, %.3f s\n", caracal_qap_method_name(res.method),
               (unsigned long long)o.seed, res.iterations, res.seconds);
    }
    free(perm);
    caracal_qaplib_free(&pb);
    return 0;
}
