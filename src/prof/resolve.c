/* Call-site resolution, on each rank (ASLR puts modules at different addresses in
 * every process): dladdr gives the module and its load address, so sites can be
 * merged across ranks by (call, module, offset); addr2line (one batched run per
 * module) gives function, file and line where debug information exists. */
#define _GNU_SOURCE
#include "doc.h"
#include "config.h"
#include "log.h"
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    const char *module;
    uintptr_t base;
    int is_exec; /* ET_EXEC: addr2line wants absolute addresses */
} modinfo;

static char self_exe[PATH_MAX];

static const char *module_path(const char *fname)
{
    /* The main program shows up as "" or as argv[0]; name it by its real path. */
    if (fname && fname[0] == '/')
        return fname;
    if (!self_exe[0]) {
        ssize_t k = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        self_exe[k > 0 ? k : 0] = 0;
    }
    return self_exe[0] ? self_exe : fname;
}

/* "FILE:LINE (discriminator N)" -> FILE, LINE; 0 when addr2line knows neither ("??:0"). */
static int split_location(char *text, char **file, int *line)
{
    char *p = strstr(text, " (discriminator");
    if (p)
        *p = 0;
    char *colon = strrchr(text, ':');
    if (!colon || !strncmp(text, "??", 2))
        return 0;
    *colon = 0;
    int ln = atoi(colon + 1);
    *file = text;
    *line = ln > 0 ? ln : 0;
    return 1;
}

/* One frame of an inlining chain appended to *CHAIN as "function\tfile\tline\n". */
static void chain_add(char **chain, size_t *len, const char *fn, const char *file, int line)
{
    char buf[8192];
    int k = snprintf(buf, sizeof buf, "%s\t%s\t%d\n", fn, file ? file : "", line);
    if (k <= 0 || *len + (size_t)k > 4000) /* the wire format's limit per string (output.c) */
        return;
    char *grown = realloc(*chain, *len + (size_t)k + 1);
    if (!grown)
        return;
    memcpy(grown + *len, buf, (size_t)k + 1);
    *chain = grown;
    *len += (size_t)k;
}

/* Run addr2line -a -i -f -C -e MODULE ADDR... and fill function/file/line of the sites in IDX:
 * each address prints itself, then a (function, file:line) pair per frame, innermost first.
 * The first pair is the call (as before inlining was reported); the further pairs are the
 * functions it was inlined into, each at the line where the inlined one was called. */
static void addr2line(const char *module, const uint64_t *addrs, const int *idx, int n, caracal_where *out)
{
    char **argv = calloc((size_t)n + 8, sizeof *argv);
    char *abuf = malloc((size_t)n * 24);
    if (!argv || !abuf)
        goto done;
    argv[0] = "addr2line", argv[1] = "-a", argv[2] = "-i", argv[3] = "-f", argv[4] = "-C", argv[5] = "-e";
    argv[6] = (char *)module;
    for (int i = 0; i < n; i++) {
        argv[7 + i] = abuf + (size_t)i * 24;
        snprintf(argv[7 + i], 24, "0x%llx", (unsigned long long)addrs[i]);
    }
    int fd[2];
    if (pipe(fd))
        goto done;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "addr2line", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        static int warned;
        if (!warned++)
            caracal_warn("profiler: cannot run addr2line (install binutils); call sites keep function names only");
        goto done;
    }
    FILE *f = fdopen(fd[0], "r");
    char line[4096], fn[4096];
    int i = -1, frame = 0, have = f && fgets(line, sizeof line, f);
    size_t chain_len = 0;
    while (have) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "0x", 2)) { /* the next address */
            if (++i >= n)
                break;
            frame = 0, chain_len = 0;
            have = fgets(line, sizeof line, f) != NULL;
            continue;
        }
        if (i < 0)
            break;
        snprintf(fn, sizeof fn, "%s", line);
        if (!fgets(line, sizeof line, f))
            break;
        line[strcspn(line, "\n")] = 0;
        char *file = NULL;
        int ln = 0, known = split_location(line, &file, &ln);
        caracal_where *w = &out[idx[i]];
        if (frame++ == 0) {
            if (strcmp(fn, "??"))
                w->function = strdup(fn);
            if (known) {
                w->file = strdup(file);
                w->line = ln;
            }
        } else {
            char *chain = (char *)w->inlined;
            chain_add(&chain, &chain_len, fn, known ? file : NULL, known ? ln : 0);
            w->inlined = chain;
        }
        have = fgets(line, sizeof line, f) != NULL;
    }
    if (f)
        fclose(f);
    else
        close(fd[0]);
    waitpid(pid, NULL, 0);
done:
    free(argv);
    free(abuf);
}

void caracal_resolve(const caracal_site *const *sites, int n, caracal_where *out, int full)
{
    modinfo *mods = full ? calloc((size_t)n + 1, sizeof *mods) : NULL;
    for (int i = 0; i < n; i++) {
        /* the return address points after the call; ra - 1 is inside the call instruction */
        uintptr_t a = (uintptr_t)sites[i]->ra - 1;
        Dl_info di;
        memset(&out[i], 0, sizeof out[i]);
        out[i].offset = a + 1;
        if ((uintptr_t)sites[i]->ra <= 1 || !dladdr((void *)a, &di) || !di.dli_fbase)
            continue;
        out[i].module = module_path(di.dli_fname);
        out[i].function = di.dli_sname;
        out[i].offset = a + 1 - (uintptr_t)di.dli_fbase;
        if (mods) {
            const Elf64_Ehdr *eh = di.dli_fbase;
            mods[i].module = out[i].module;
            mods[i].base = (uintptr_t)di.dli_fbase;
            mods[i].is_exec = eh->e_type == ET_EXEC;
        }
    }
    if (!mods)
        return;
    if (caracal_setting_int(CARACAL_SET_PROFILE_RESOLVE)) {
        uint64_t *addrs = malloc(sizeof(uint64_t) * ((size_t)n + 1));
        int *idx = malloc(sizeof(int) * ((size_t)n + 1));
        char *done = calloc((size_t)n + 1, 1);
        for (int i = 0; addrs && idx && done && i < n; i++) {
            if (done[i] || !mods[i].module)
                continue;
            int k = 0;
            for (int j = i; j < n; j++)
                if (!done[j] && mods[j].module && !strcmp(mods[j].module, mods[i].module)) {
                    done[j] = 1;
                    uintptr_t a = (uintptr_t)sites[j]->ra - 1;
                    addrs[k] = mods[j].is_exec ? a : a - mods[j].base;
                    idx[k++] = j;
                }
            addr2line(mods[i].module, addrs, idx, k, out);
        }
        free(addrs);
        free(idx);
        free(done);
    }
    free(mods);
}
