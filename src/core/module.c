#include "module.h"
#include "config.h"
#include "log.h"
#include <mpi.h>
#include "prof/profiler.h"

/* The modules, in initialisation order. */
extern const caracal_module caracal_coll_module;
static const caracal_module *const modules[] = {
    0, /* placeholder so the array is never empty */
    &caracal_prof_module,
    &caracal_coll_module,
};

static int active, done;

void caracal_core_after_init(void)
{
    if (active || done)
        return;
    active = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &caracal_world_rank);
    caracal_config_load();
    caracal_log_setup();
    caracal_log("init", "Caracal %s active", CARACAL_VERSION);
    for (unsigned i = 0; i < sizeof modules / sizeof *modules; i++)
        if (modules[i] && modules[i]->after_init)
            modules[i]->after_init();
}

void caracal_core_before_finalize(void)
{
    if (!active)
        return;
    for (int i = (int)(sizeof modules / sizeof *modules) - 1; i >= 0; i--)
        if (modules[i] && modules[i]->before_finalize)
            modules[i]->before_finalize();
    active = 0;
    done = 1;
}

int caracal_core_active(void) { return active; }
