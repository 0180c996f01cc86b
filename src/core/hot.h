/* The globals an interposed call reads on its way to the library, on one cache line.
 *
 * A collective the rules send to the library reads, besides its thread's native memo
 * (coll/native_memo.h): the profiler's switch (the generated wrapper), the family's
 * native-only flag, the rules' and the handles' generations (the memo's validity), the
 * native-blocking mode and the count of Caracal's collectives in flight (the tail call).
 * Defined each next to the code that sets it, they lay on four data pages of libcaracal
 * (.data and three places in .bss), each a first-level cache line and TLB entry that the
 * library's own work between two calls may have evicted. Together they are one 64-byte line
 * that nothing else shares. (Measured with the v-variants' shorter memo test, session 17: about
 * a point off Intel MPI's 8-byte allgatherv, 1.04-1.05x the library against 1.03-1.08x;
 * bench/results/defaults-s17.md.)
 *
 * Their names stay those of the separate variables they were (macros for the fields below),
 * so the files that set and test them read as before; only their definitions moved here
 * (core/hot.c). Written rarely (a rule change, a handle freed, the profiler switched, a
 * Caracal collective started or completed); read on every call. */
#ifndef CARACAL_CORE_HOT_H
#define CARACAL_CORE_HOT_H

/* room for every collective family's flag (coll/select.c checks CARACAL_NCOLL against it) */
#define CARACAL_HOT_NCOLL 32

typedef struct __attribute__((aligned(64))) {
    int prof_on;                      /* prof/prof.h: profiling is on */
    int native_mode;                  /* coll/call.h: CARACAL_NATIVE_*, -1 until read */
    _Atomic int active_requests;      /* core/progress.h: Caracal's collectives in flight */
    unsigned long select_generation;  /* coll/select.h: bumped by every change of the rules */
    unsigned long handle_generation;  /* coll/native_memo.h: bumped by every handle freed */
    unsigned char native_only[CARACAL_HOT_NCOLL]; /* coll/select.h: per family, its rules say only native */
} caracal_hot_line;

extern __attribute__((visibility("hidden"))) caracal_hot_line caracal_hot;

#define caracal_prof_on (caracal_hot.prof_on)
#define caracal_native_mode_ (caracal_hot.native_mode)
#define caracal_active_requests (caracal_hot.active_requests)
#define caracal_select_generation (caracal_hot.select_generation)
#define caracal_handle_generation (caracal_hot.handle_generation)
#define caracal_select_native_only (caracal_hot.native_only)

#endif
