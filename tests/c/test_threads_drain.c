/* A native blocking collective under MPI_THREAD_MULTIPLE must not wait for other threads'
 * Caracal collectives in flight (coll/call.c caracal_progress_drain). Two ranks, two threads
 * each, thread t on its own duplicate C_t of MPI_COMM_WORLD; every round, thread t runs
 *
 *     MPI_Bcast(C_t, root t)    native (CARACAL_BCAST=native): its root leaves at once
 *     MPI_Iallreduce(C_t)       Caracal's (CARACAL_ALLREDUCE=recdbl), then MPI_Wait
 *
 * and the thread that is not the bcast's root on its rank starts only once its rank's other
 * thread has started its Iallreduce. So rank 0's thread 1 enters its bcast while thread 0's
 * Iallreduce on C_0 is in flight, and that needs rank 1's thread 0, which enters its bcast on
 * C_0 while rank 1's thread 1's Iallreduce on C_1 is in flight, which needs rank 0's thread 1.
 * Legal MPI (each communicator's collectives are in one order on every rank); a drain that
 * waits for the whole process's collectives before the bcast closes the cycle every time (the
 * watchdog fires), one that waits for the calling thread's own does not. Results are exact
 * integers, and Caracal must have run exactly the allreduces and no bcast
 * (caracal_coll_count), or the test tests nothing.
 *
 *   test_threads_drain [rounds] */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { NT = 2 };

static MPI_Comm comms[NT];
static int me, rounds = 5;
static long errors;
static int started[NT]; /* the round whose Iallreduce thread t has started */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_threads_drain: hang (watchdog): a drain waited for another thread's collective\n";
    if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(3);
}

static void *run(void *arg)
{
    int t = (int)(long)arg, other = 1 - t;
    MPI_Comm c = comms[t];
    for (int round = 1; round <= rounds; round++) {
        if (t != me) { /* not this bcast's root: after the other thread's Iallreduce has started */
            pthread_mutex_lock(&mu);
            while (started[other] < round)
                pthread_cond_wait(&cv, &mu);
            pthread_mutex_unlock(&mu);
        }
        int b = me == t ? 1000 * t + round : -1;
        MPI_Bcast(&b, 1, MPI_INT, t, c);
        int v = (me + 1) * (t + 1) + round, s = -1;
        MPI_Request q;
        MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, c, &q);
        pthread_mutex_lock(&mu);
        started[t] = round;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        int bad = b != 1000 * t + round || s != 3 * (t + 1) + 2 * round;
        if (bad) {
            fprintf(stderr, "rank %d thread %d round %d: bcast %d, iallreduce %d\n", me, t, round, b, s);
            pthread_mutex_lock(&mu);
            errors++;
            pthread_mutex_unlock(&mu);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc > 1)
        rounds = atoi(argv[1]);
    if (n != 2 || provided != MPI_THREAD_MULTIPLE || rounds < 1) {
        if (me == 0)
            fprintf(stderr, "test_threads_drain: needs 2 ranks and MPI_THREAD_MULTIPLE (got %d ranks, level %d), rounds >= 1\n",
                    n, provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long (*ccount)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    signal(SIGALRM, watchdog);
    alarm(30);
    long before = ccount ? ccount() : 0;
    for (int t = 0; t < NT; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
        int one = 1, sum = 0; /* a blocking Caracal collective builds C_t's hierarchy: its nonblocking ones then run Caracal's */
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[t]);
        if (sum != 2)
            errors++;
    }
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, run, (void *)(long)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    long ran = ccount ? ccount() - before : -1, want = NT + (long)NT * rounds;
    int bad = errors != 0 || ran != want;
    if (ran != want)
        fprintf(stderr, "rank %d: Caracal ran %ld collectives, not %ld (the allreduces alone)\n", me, ran, want);
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&comms[t]);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(anybad ? "threads_drain: FAILED\n" : "threads_drain: ok (%d rounds)\n", rounds);
    MPI_Finalize();
    return anybad;
}
