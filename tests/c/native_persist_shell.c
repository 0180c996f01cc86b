/* Caracal's persistent-collective handle without Caracal (coll/persistent.c), to tell a bug
 * of Caracal's request handling from one of the MPI library's under MPI_THREAD_MULTIPLE.
 * Each of T threads owns a communicator (a duplicate of MPI_COMM_WORLD) and a "shell": a
 * persistent zero-byte receive on one shared duplicate of MPI_COMM_SELF, tag = thread. A start
 * is MPI_Start(shell) plus a "task" (an Isend/Irecv pair with the next and previous rank on
 * the thread's communicator) put on one shared list; any thread that gets the list's mutex
 * (trylock, as Caracal's engine) steps every task with MPI_Testall, and completes a finished
 * task's shell with a zero-byte MPI_Isend to self followed by MPI_Request_free. The owner
 * waits for its shell with MPI_Test (stepping the list meanwhile), or with MPI_Testall over
 * [shell, a native receive]. Every request is completed by exactly one thread and every
 * request array is passed to one thread only, as MPI requires; exact results are checked.
 *   native_persist_shell [threads] [iterations]
 * Prints "native_persist_shell: ok" on rank 0. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAXT = 16, N = 64 };

typedef struct task {
    MPI_Request req[2];
    int tag, done, on_list;
    MPI_Request retire;     /* a shell the user freed while active: the completer waits for it and frees it */
    struct task *next;
} task;

static MPI_Comm self_comm;
static task *list;
static pthread_mutex_t engine = PTHREAD_MUTEX_INITIALIZER;
static long bad;
static int launch_first; /* argv[3] 1: the order of Caracal before 73c228d */
static int free_active;  /* argv[3] 2: every 4th start's shell is freed while active; 3: its
                          * free is left to the thread that completes it, after its Wait */

static void step_all(void)
{
    if (pthread_mutex_trylock(&engine))
        return;
    for (task **pp = &list; *pp;) {
        task *k = *pp;
        int flag = 0;
        MPI_Testall(2, k->req, &flag, MPI_STATUSES_IGNORE);
        if (flag) {
            MPI_Request s;
            *pp = k->next;
            MPI_Isend(NULL, 0, MPI_BYTE, 0, k->tag, self_comm, &s);
            MPI_Request_free(&s);
            if (k->retire != MPI_REQUEST_NULL) { /* the deferred free: inactive first */
                MPI_Wait(&k->retire, MPI_STATUS_IGNORE);
                MPI_Request_free(&k->retire);
            }
            __atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
        } else {
            pp = &k->next;
        }
    }
    pthread_mutex_unlock(&engine);
}

typedef struct {
    int t, iters;
    MPI_Comm comm;
} job;

static void *run(void *arg)
{
    job *j = arg;
    int me, n;
    MPI_Comm_rank(j->comm, &me);
    MPI_Comm_size(j->comm, &n);
    int out[N], in[N];
    MPI_Request shell;
    MPI_Recv_init(NULL, 0, MPI_BYTE, 0, j->t, self_comm, &shell);
    task k = {.tag = j->t, .retire = MPI_REQUEST_NULL};
    for (int it = 0; it < j->iters; it++) {
        for (int i = 0; i < N; i++)
            out[i] = me * 1000000 + it * 100 + i, in[i] = -1;
        if (!launch_first)
            MPI_Start(&shell);
        int prev = (me + n - 1) % n;
        MPI_Irecv(in, N, MPI_INT, prev, it, j->comm, &k.req[0]);
        MPI_Isend(out, N, MPI_INT, (me + 1) % n, it, j->comm, &k.req[1]);
        k.done = 0;
        pthread_mutex_lock(&engine);
        k.next = list;
        list = &k;
        pthread_mutex_unlock(&engine);
        if (launch_first) /* the task may complete (in any thread) before the receive is posted */
            MPI_Start(&shell);
        if (free_active && it % 4 == 3) { /* freed while active; the task's send completes it */
            if (free_active == 2)
                MPI_Request_free(&shell);
            else /* handed to the completer, which frees it once complete */
                __atomic_store_n(&k.retire, shell, __ATOMIC_RELAXED);
            MPI_Recv_init(NULL, 0, MPI_BYTE, 0, j->t, self_comm, &shell);
        } else if (it % 2 == 0) { /* MPI_Test on the shell alone */
            for (int flag = 0; !flag;) {
                step_all();
                MPI_Test(&shell, &flag, MPI_STATUS_IGNORE);
            }
        } else { /* MPI_Testall over the shell and a native receive (self-message on comm) */
            int x = it, y = -1, flag = 0;
            MPI_Request arr[2] = {shell, MPI_REQUEST_NULL}, s;
            MPI_Irecv(&y, 1, MPI_INT, me, 32000, j->comm, &arr[1]);
            MPI_Isend(&x, 1, MPI_INT, me, 32000, j->comm, &s);
            while (!flag) {
                step_all();
                MPI_Testall(2, arr, &flag, MPI_STATUSES_IGNORE);
            }
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            if (y != it)
                __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
        }
        while (!__atomic_load_n(&k.done, __ATOMIC_ACQUIRE)) /* the shell completes after the task */
            step_all();
        for (int i = 0; i < N; i++)
            if (in[i] != prev * 1000000 + it * 100 + i)
                __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
    }
    /* freed while active, completed afterwards by another start's task as in Caracal */
    MPI_Start(&shell);
    MPI_Request_free(&shell);
    MPI_Request s;
    MPI_Isend(NULL, 0, MPI_BYTE, 0, j->t, self_comm, &s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, me, T = argc > 1 ? atoi(argv[1]) : 4, iters = argc > 2 ? atoi(argv[2]) : 2000;
    launch_first = argc > 3 && atoi(argv[3]) == 1;
    free_active = argc > 3 && atoi(argv[3]) >= 2 ? atoi(argv[3]) : 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE || T < 1 || T > MAXT) {
        fprintf(stderr, "native_persist_shell: needs MPI_THREAD_MULTIPLE and 1..%d threads\n", MAXT);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_dup(MPI_COMM_SELF, &self_comm);
    pthread_t th[MAXT];
    job jobs[MAXT];
    for (int t = 0; t < T; t++) {
        jobs[t] = (job){t, iters, MPI_COMM_NULL};
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, run, &jobs[t]);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++)
        MPI_Comm_free(&jobs[t].comm);
    MPI_Comm_free(&self_comm);
    long all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf(all ? "native_persist_shell: %ld wrong\n" : "native_persist_shell: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
