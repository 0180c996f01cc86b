/* Replays the fuzzers' committed corpora (fuzz/corpus/<target>/) through the same
 * harnesses (fuzz/fuzz_<target>.c, built here without libFuzzer) in the ordinary test
 * suite: every input that once crashed a reader stays a test, with the harness's checks
 * (__builtin_trap on a broken property; under `make test-asan` also ASan and UBSan).
 *   fuzz_replay TARGET DIR   (TARGET: json, topology, qaplib, rules) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int caracal_fuzz_json(const uint8_t *data, size_t size);
int caracal_fuzz_topology(const uint8_t *data, size_t size);
int caracal_fuzz_qaplib(const uint8_t *data, size_t size);
int caracal_fuzz_rules(const uint8_t *data, size_t size);
int caracal_fuzz_rules_init(int *argc, char ***argv);

static const struct {
    const char *name;
    int (*one)(const uint8_t *, size_t);
} targets[] = {
    {"json", caracal_fuzz_json},
    {"topology", caracal_fuzz_topology},
    {"qaplib", caracal_fuzz_qaplib},
    {"rules", caracal_fuzz_rules},
};

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_replay json|topology|qaplib|rules DIR\n");
        return 2;
    }
    int (*one)(const uint8_t *, size_t) = NULL;
    for (unsigned i = 0; i < sizeof targets / sizeof *targets; i++)
        if (!strcmp(argv[1], targets[i].name))
            one = targets[i].one;
    if (!one) {
        fprintf(stderr, "fuzz_replay: unknown target %s\n", argv[1]);
        return 2;
    }
    if (one == caracal_fuzz_rules)
        caracal_fuzz_rules_init(&argc, &argv);
    DIR *d = opendir(argv[2]);
    if (!d) {
        perror(argv[2]);
        return 2;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[2], e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            perror(path);
            return 1;
        }
        uint8_t *buf = malloc(1 << 20);
        size_t len = buf ? fread(buf, 1, 1 << 20, f) : 0;
        fclose(f);
        if (!buf)
            return 1;
        printf("%s\n", e->d_name);
        fflush(stdout); /* the last name printed is the input that crashed */
        one(buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    printf("fuzz_replay %s: %d inputs, every property held\n", argv[1], n);
    return n ? 0 : 1;
}
