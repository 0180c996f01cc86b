/* The profiler as a Caracal module (registered in src/core/module.c). */
#ifndef CARACAL_PROF_PROFILER_H
#define CARACAL_PROF_PROFILER_H
#include "module.h"

extern const caracal_module caracal_prof_module;
/** MPI_Pcontrol's effect: level 0 pauses counting, any other level resumes. */
void caracal_prof_pcontrol(int level);

#endif
