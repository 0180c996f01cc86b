/* Profiler hooks used by the generated MPI wrappers (src/interpose/gen_wrappers.py).
 *
 * CARACAL_PROF_ENTER(fn) / CARACAL_PROF_EXIT(fn) bracket every interposed call.
 * A function that needs its own accounting (bytes, peers, roots) defines
 * CARACAL_HOOK_<MPI name>(target, args...) here: it replaces the generic body and
 * must call target(args...) and return its result. */
#ifndef CARACAL_PROF_HOOKS_H
#define CARACAL_PROF_HOOKS_H

#define CARACAL_PROF_ENTER(fn) ((void)0)
#define CARACAL_PROF_EXIT(fn) ((void)0)

#endif
