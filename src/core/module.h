/* Caracal's modules (profiler, collectives, mapping, ...) hook into MPI's
 * lifetime here. The list lives in module.c: adding a module is one line. */
#ifndef CARACAL_CORE_MODULE_H
#define CARACAL_CORE_MODULE_H

typedef struct {
    const char *name;
    /** After PMPI_Init*: MPI is usable. */
    void (*after_init)(void);
    /** Before PMPI_Finalize: MPI is still usable; called in reverse order. */
    void (*before_finalize)(void);
} caracal_module;

/** Run every module's after_init once (idempotent: C and Fortran paths may both call it). */
void caracal_core_after_init(void);
/** Run every module's before_finalize once, in reverse order. */
void caracal_core_before_finalize(void);
/** Whether caracal_core_after_init has run and finalize has not. */
int caracal_core_active(void);

#endif
