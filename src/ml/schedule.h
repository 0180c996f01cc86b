/* Schedules (ML): a collective is primitives on levels, in an order. A schedule is a
 * task that owns a set of tasks chained by completion events (caracal_task_then) and
 * completes when they all have; tasks whose predecessors are done progress together,
 * so primitives on different levels run concurrently where the order allows. */
#ifndef CARACAL_ML_SCHEDULE_H
#define CARACAL_ML_SCHEDULE_H
#include "progress.h"
#include "sbgp/hier.h"
#include "coll/select.h"

#define CARACAL_SCHED_MAX 64

typedef struct {
    caracal_task task;
    int ntasks;
    caracal_task *tasks[CARACAL_SCHED_MAX];
    void *scratch[4];      /* freed with the schedule */
    caracal_hier *hier;    /* released with the schedule */
} caracal_schedule;

caracal_schedule *caracal_sched_new(const char *name, caracal_hier *h);
/** Add a task (NULL is ignored); returns it. */
caracal_task *caracal_sched_add(caracal_schedule *s, caracal_task *t);
/** Memory freed with the schedule. */
void caracal_sched_keep(caracal_schedule *s, void *mem);

/* The schedules, one per file (ml/<collective>_hier.c). Arguments as in MPI, already
 * resolved: no MPI_IN_PLACE (src == dst instead), src NULL on non-roots where unused. */
typedef struct {
    caracal_hier *h;
    const caracal_choice *choice;
    int tag;
} caracal_ml_args;

caracal_task *caracal_ml_barrier(const caracal_ml_args *a);
caracal_task *caracal_ml_bcast(const caracal_ml_args *a, void *buf, int count, MPI_Datatype dt, int root);
caracal_task *caracal_ml_reduce(const caracal_ml_args *a, const void *src, void *dst, int count, MPI_Datatype dt,
                                MPI_Op op, int root);
caracal_task *caracal_ml_allreduce(const caracal_ml_args *a, const void *src, void *dst, int count,
                                   MPI_Datatype dt, MPI_Op op);

#endif
