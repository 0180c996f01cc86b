/* A preload (ahead of libcaracal) that refuses the node's budget page: shm_open of a
 * /caracal-budget-* name fails (ENOSPC, as in a full /dev/shm), every other shm_open is the
 * real one. Then each process must count its segments against its share of CARACAL_SHM_CAP
 * (bcol/shm/segment.c), so the node's total still stays within the cap. It says so on stdout
 * each time it refuses, so the test can check that it did (one line: the node's rank 0
 * creates the page). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

int shm_open(const char *name, int oflag, mode_t mode)
{
    static int (*real)(const char *, int, mode_t);
    if (!strncmp(name, "/caracal-budget-", 16)) {
        printf("fault_budget_page: refused the budget page\n");
        fflush(stdout);
        errno = ENOSPC;
        return -1;
    }
    if (!real)
        real = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
    return real(name, oflag, mode);
}
