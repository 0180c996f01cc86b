#include "schedule.h"
#include "log.h"
#include <stdlib.h>
#include "xalloc.h"

static int progress(caracal_task *t)
{
    caracal_schedule *s = (caracal_schedule *)t;
    int all, moved;
    do { /* a completion may release successors: run them in the same call */
        all = 1;
        moved = 0;
        for (int i = 0; i < s->ntasks; i++) {
            caracal_task *x = s->tasks[i];
            if (x->done)
                continue;
            if (caracal_task_step(x))
                moved = 1;
            else
                all = 0;
        }
    } while (!all && moved);
    for (int i = 0; all && i < s->ntasks && !t->error; i++) /* the call ends with a task's error */
        t->error = s->tasks[i]->error;
    return all ? CARACAL_TASK_DONE : CARACAL_TASK_PENDING;
}

static void destroy(caracal_task *t)
{
    caracal_schedule *s = (caracal_schedule *)t;
    for (int i = 0; i < s->ntasks; i++)
        s->tasks[i]->destroy(s->tasks[i]);
    for (int i = 0; i < 4; i++)
        free(s->scratch[i]);
    if (s->hier)
        caracal_hier_release(s->hier);
    free(s);
}

caracal_schedule *caracal_sched_new(const char *name, caracal_hier *h)
{
    caracal_schedule *s = caracal_xcalloc(1, sizeof *s);
    caracal_task_init(&s->task, name, progress, destroy);
    s->hier = h;
    if (h)
        caracal_hier_retain(h);
    return s;
}

caracal_task *caracal_sched_add(caracal_schedule *s, caracal_task *t)
{
    if (!t)
        return NULL;
    if (s->ntasks == CARACAL_SCHED_MAX) {
        caracal_warn("internal: schedule %s is full", s->task.name);
        abort();
    }
    s->tasks[s->ntasks++] = t;
    return t;
}

void caracal_sched_keep(caracal_schedule *s, void *mem)
{
    for (int i = 0; i < 4; i++)
        if (!s->scratch[i]) {
            s->scratch[i] = mem;
            return;
        }
    caracal_warn("internal: schedule %s keeps too much", s->task.name);
    abort();
}
