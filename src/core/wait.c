/* The futex side of core/wait.h. */
#define _GNU_SOURCE
#include "wait.h"
#include "config.h"
#include "log.h"
#include "threads.h"
#include <mpi.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread caracal_wait_hint_t caracal_wait_last __attribute__((tls_model("initial-exec")));
static int strategy = -1, oversubscribed;
static double spin_us = -1, nap_us = -1, poke_us = -1;

int caracal_native_yield = -1;

void caracal_wait_set_oversubscribed(int yes)
{
    oversubscribed = yes;
    spin_us = -1; /* recomputed */
    caracal_native_yield = -1;
}

int caracal_native_yield_decide(void)
{
    const char *v = caracal_setting_str(CARACAL_SET_NATIVE_WAIT);
    if (!strcmp(v, "yield"))
        caracal_native_yield = 1;
    else if (!strcmp(v, "auto"))
        caracal_native_yield = oversubscribed;
    else {
        if (strcmp(v, "library") && *v)
            caracal_warn_job("CARACAL_NATIVE_WAIT=%s is not library, yield or auto; using library", v);
        caracal_native_yield = 0;
    }
    return caracal_native_yield;
}
int caracal_wait_oversubscribed(void) { return oversubscribed; }

int caracal_wait_strategy(void)
{
    if (strategy < 0) {
        const char *v = caracal_setting_str(CARACAL_SET_WAIT);
        if (!strcmp(v, "spin"))
            strategy = CARACAL_WAIT_SPIN;
        else if (!strcmp(v, "nap"))
            strategy = CARACAL_WAIT_NAP;
        else if (!strcmp(v, "futex") || !strcmp(v, "auto") || !*v)
            strategy = CARACAL_WAIT_FUTEX;
        else {
            caracal_warn_job("CARACAL_WAIT=%s is not auto, futex, spin or nap; using auto (futex)", v);
            strategy = CARACAL_WAIT_FUTEX;
        }
    }
    return strategy;
}

double caracal_wait_spin_us(void)
{
    if (spin_us < 0) {
        spin_us = (double)caracal_setting_int(CARACAL_SET_SPIN_US);
        /* ranks outnumber cores: a spinning waiter only delays the writer it waits for */
        if (oversubscribed && !caracal_setting_is_set(CARACAL_SET_SPIN_US) && caracal_wait_strategy() == CARACAL_WAIT_FUTEX)
            spin_us = 0;
    }
    return spin_us;
}

/* The futex word: the low 32 bits of the 64-bit flag (x86-64 and every little-endian target) */
static uint32_t *low_word(_Atomic uint64_t *w) { return (uint32_t *)(void *)w; }

double caracal_wait_nap_us(void)
{
    if (nap_us < 0) {
        nap_us = (double)caracal_setting_int(CARACAL_SET_WAIT_NAP_US);
        if (nap_us < 1)
            nap_us = 1;
    }
    return nap_us;
}

double caracal_wait_poke_us(void)
{
    if (poke_us < 0) {
        poke_us = (double)caracal_setting_int(CARACAL_SET_WAIT_POKE_US);
        if (poke_us < 0)
            poke_us = 0;
    }
    return poke_us;
}

unsigned long caracal_wait_pokes;
static int poke_me = -1, poke_n;

void caracal_wait_setup(void)
{
    caracal_wait_strategy();
    caracal_wait_spin_us();
    caracal_wait_nap_us();
    caracal_wait_poke_us();
    caracal_native_yield_decide();
    PMPI_Comm_rank(MPI_COMM_WORLD, &poke_me);
    PMPI_Comm_size(MPI_COMM_WORLD, &poke_n);
}

void caracal_wait_poke_native(void)
{
    /* An Iprobe that finds nothing runs the library's progress engine once (Open MPI's pml
     * calls opal_progress, MPICH's MPID_Iprobe MPID_Progress_test) and, being a probe, takes
     * no message from the program. Not on MPI_COMM_SELF: MPICH 4.0 answers probes on any
     * one-member communicator from its self queue without progress (ch4_probe.h). On
     * MPI_COMM_WORLD (which exists from MPI_Init to MPI_Finalize, when Caracal waits) from
     * this rank itself: only a message this rank sent itself could match. A job of one rank
     * has nobody to wait for it. */
    if (poke_me < 0) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &poke_me);
        PMPI_Comm_size(MPI_COMM_WORLD, &poke_n);
    }
    int me = poke_me;
    if (poke_n < 2)
        return;
    int flag = 0;
    PMPI_Iprobe(me, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    caracal_add_long((long *)&caracal_wait_pokes, 1);
}

int caracal_wait_sleep(double us)
{
    caracal_wait_hint_t h = caracal_wait_last;
    caracal_wait_last.word = NULL;
    if (!h.word)
        return 0;
    if (us < 1)
        us = 1;
    atomic_fetch_add_explicit(&h.line->sleepers, 1, memory_order_seq_cst);
    uint64_t cur = atomic_load_explicit(h.word, memory_order_seq_cst);
    if (cur < h.want) {
        struct timespec ts = {(time_t)(us / 1e6), (long)((long long)(us * 1000) % 1000000000LL)};
        /* not FUTEX_PRIVATE_FLAG: the word is shared between processes */
        syscall(SYS_futex, low_word(h.word), FUTEX_WAIT, (uint32_t)cur, &ts, NULL, 0);
    }
    atomic_fetch_sub_explicit(&h.line->sleepers, 1, memory_order_relaxed);
    return 1;
}

void caracal_wait_wake_slow(_Atomic uint64_t *word)
{
    syscall(SYS_futex, low_word(word), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
