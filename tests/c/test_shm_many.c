/* Bounded shared memory: a program that keeps hundreds of communicators alive, each used
 * for a 1 MiB bcast and allreduce through Caracal's shm path, must keep the node's segments
 * within CARACAL_SHM_CAP (argv[2] bytes), get exact results on every communicator (those
 * past the budget take single copy or point-to-point), and give the memory back when the
 * communicators are freed. Before them, as many communicators used only for small calls
 * (at most the segment's small buffers, 1 KiB), kept alive too: they must cost only their
 * control part (posted/ack lines and small buffers: at most CTL_PER_MEMBER bytes per member
 * and a page per communicator), not data slots. The job's use of /dev/shm is measured exactly, not
 * from the file system's totals (other jobs share them): every rank lists the Caracal
 * segments it has mapped (/proc/self/maps: "/dev/shm/caracal-*", unlinked once mapped),
 * rank 0 sums the distinct ones (by inode), at points where every rank has finished its
 * setup work (barriers). The file system's own count is printed beside it (at the same
 * points: it includes the MPI library's files and, outside a private /dev/shm, other jobs').
 * After MPI_Finalize every rank looks for files in /dev/shm that Caracal named after its
 * process id (caracal-PID-*, caracal-budget-PID-*): none may remain.
 * Usage: test_shm_many NCOMMS CAP_BYTES */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/statvfs.h>
#include <unistd.h>

enum { MAXSEG = 4096, CTL_PER_MEMBER = 9 << 10 };

/* Bytes of distinct Caracal segments mapped by any rank of the job (collective). */
static long long shm_used(void)
{
    long long mine[MAXSEG][2]; /* inode, bytes */
    int n = 0, size, rank;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f) && n < MAXSEG) {
        unsigned long lo, hi;
        long long inode;
        char path[256] = "";
        if (sscanf(line, "%lx-%lx %*s %*s %*s %lld %255s", &lo, &hi, &inode, path) == 4 &&
            strstr(path, "/caracal-")) {
            mine[n][0] = inode;
            mine[n][1] = (long long)(hi - lo);
            n++;
        }
    }
    if (f)
        fclose(f);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long long (*all)[2] = rank == 0 ? malloc(sizeof(long long[2]) * MAXSEG * size) : NULL;
    for (int i = n; i < MAXSEG; i++)
        mine[i][0] = mine[i][1] = 0;
    MPI_Gather(mine, 2 * MAXSEG, MPI_LONG_LONG, all, 2 * MAXSEG, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    long long total = 0;
    if (rank == 0) {
        for (int i = 0; i < MAXSEG * size; i++) {
            int seen = all[i][1] == 0;
            for (int j = 0; j < i && !seen; j++)
                seen = all[j][0] == all[i][0];
            if (!seen)
                total += all[i][1];
        }
        free(all);
    }
    MPI_Bcast(&total, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    return total;
}

/* Bytes in use in /dev/shm by the file system's count (every file there). */
static long long devshm_used(void)
{
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs))
        return -1;
    return (long long)(fs.f_blocks - fs.f_bfree) * (long long)fs.f_frsize;
}

/* Files in /dev/shm that Caracal created under this process's id (printed). */
static int leftovers(void)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "caracal-%d-", (int)getpid());
    snprintf(b, sizeof b, "caracal-budget-%d-", (int)getpid());
    DIR *d = opendir("/dev/shm");
    int left = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, a, strlen(a)) || !strncmp(e->d_name, b, strlen(b))) {
            printf("left in /dev/shm: %s\n", e->d_name);
            left++;
        }
    if (d)
        closedir(d);
    return left;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ncomm = argc > 1 ? atoi(argv[1]) : 200;
    long long cap = argc > 2 ? atoll(argv[2]) : 32 << 20;
    const int n = (1 << 20) / sizeof(int);
    int *buf = malloc(n * sizeof(int)), *sum = malloc(n * sizeof(int));
    MPI_Comm *comms = malloc(ncomm * sizeof *comms);
    /* MPI_COMM_WORLD's own segment, created in MPI_Init, and its slots, mapped by shm_used's
     * gather the first time (a block collective) */
    shm_used();
    long long before = shm_used(), peak = 0, fs_before = devshm_used(), fs_peak = fs_before;
    /* small calls only: control parts, no slots */
    long long base = before, ctl_max = 0;
    MPI_Comm *small = malloc(ncomm * sizeof *small);
    long ran_small0 = caracal_coll_count();
    for (int c = 0; c < ncomm; c++) {
        int color = c % 3 == 0 ? 0 : c % 3 == 1 ? rank < size / 2 : rank / 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &small[c]);
        int cr, cs, v[256], w[256];
        MPI_Comm_rank(small[c], &cr);
        MPI_Comm_size(small[c], &cs);
        if (cr == 0) /* one page per communicator, CTL_PER_MEMBER per member (counted once) */
            ctl_max += 4096 + (long long)cs * CTL_PER_MEMBER;
        for (int i = 0; i < 256; i++)
            v[i] = cr == 0 ? i * c : -1;
        MPI_Bcast(v, 256, MPI_INT, 0, small[c]); /* 1 KiB */
        for (int i = 0; i < 256; i++)
            if (v[i] != i * c) {
                fails++;
                break;
            }
        MPI_Allreduce(v, w, 256, MPI_INT, MPI_SUM, small[c]);
        for (int i = 0; i < 256; i++)
            if (w[i] != cs * i * c) {
                fails++;
                break;
            }
    }
    long ran_small = caracal_coll_count() - ran_small0;
    MPI_Allreduce(MPI_IN_PLACE, &ctl_max, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long small_used = shm_used() - base;
    long ran0 = caracal_coll_count();
    for (int c = 0; c < ncomm; c++) {
        /* several sizes: the whole world, halves, and pairs */
        int color = c % 3 == 0 ? 0 : c % 3 == 1 ? rank < size / 2 : rank / 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &comms[c]);
        int cr, cs;
        MPI_Comm_rank(comms[c], &cr);
        MPI_Comm_size(comms[c], &cs);
        for (int i = 0; i < n; i++)
            buf[i] = cr == 0 ? i ^ c : -1;
        MPI_Bcast(buf, n, MPI_INT, 0, comms[c]);
        for (int i = 0; i < n; i++)
            if (buf[i] != (i ^ c)) {
                fails++;
                break;
            }
        for (int i = 0; i < n; i++)
            buf[i] = i + cr;
        MPI_Allreduce(buf, sum, n, MPI_INT, MPI_SUM, comms[c]);
        for (int i = 0; i < n; i++)
            if (sum[i] != cs * i + cs * (cs - 1) / 2) {
                fails++;
                break;
            }
        if (c % 16 == 15 || c == ncomm - 1) {
            long long u = shm_used(), fs = devshm_used();
            if (u > peak)
                peak = u;
            if (fs > fs_peak)
                fs_peak = fs;
        }
    }
    long ran = caracal_coll_count() - ran0;
    for (int c = 0; c < ncomm; c++)
        MPI_Comm_free(&small[c]), MPI_Comm_free(&comms[c]);
    free(small);
    long long after = shm_used() - before;
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int ok = all == 0 && peak <= cap + 4096 /* the budget's own page */ && after <= (1 << 20) && ran >= 2 * ncomm &&
             small_used > 0 && small_used <= ctl_max && ran_small >= 2 * ncomm;
    if (rank == 0) {
        printf("%d communicators x %d ranks: %d wrong results, segments took at most %.1f MiB (cap %.1f MiB), "
               "%.1f MiB more than at the start after freeing them; %ld collectives ran in Caracal\n",
               ncomm, size, all, peak / 1048576.0, cap / 1048576.0, after / 1048576.0, ran);
        printf("%d more communicators with small calls only: %.1f KiB of segments (at most %.1f KiB of control parts), "
               "%ld collectives ran in Caracal: %s\n",
               ncomm, small_used / 1024.0, ctl_max / 1024.0, ran_small, ok ? "ok" : "FAILED");
        printf("/dev/shm as the file system counts it (all files): %.1f MiB at the start, at most %.1f MiB\n",
               fs_before / 1048576.0, fs_peak / 1048576.0);
    }
    free(buf);
    free(sum);
    free(comms);
    MPI_Finalize();
    if (leftovers())
        ok = 0;
    return ok ? 0 : 1;
}
