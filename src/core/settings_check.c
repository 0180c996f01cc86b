/* caracal_check_settings (caracal.h): every CARACAL_* setting and selection rule judged the
 * way a job judges it, without MPI, for `caracal info --check`. Each setting keeps its one
 * parser in the module that uses it; this file only calls them all, so a check and a job
 * cannot disagree. The two files a job opens late (a topology, an hwloc XML) and the
 * profile's directory are tried here, since a job would find them wrong only at MPI_Init or
 * at finalize, after its run. */
#include "caracal.h"
#include "config.h"
#include "log.h"
#include "wait.h"
#include "coll/call.h"
#include "coll/peer_budget.h"
#include "coll/select.h"
#include "map/reorder.h"
#include "map/topology.h"
#include "sbgp/hier.h"
#include <hwloc.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static void check_topology(void)
{
    const char *path = caracal_setting_str(CARACAL_SET_TOPOLOGY);
    if (!*path)
        return;
    caracal_topology t;
    char err[320];
    if (caracal_topology_read(path, &t, err, sizeof err))
        caracal_warn_job("CARACAL_TOPOLOGY ignored: %s", err);
    else
        caracal_topology_free(&t); /* (its rank count is checked against the job's at MPI_Init) */
}

static void check_hwloc_xml(void)
{
    hwloc_topology_t topo; /* hier.c's own loader, which warns for a file that does not load */
    if (*caracal_setting_str(CARACAL_SET_HWLOC_XML) && !caracal_hwloc_load(&topo))
        hwloc_topology_destroy(topo);
}

/* The profile is written at MPI_Finalize; a directory that is missing or not writable would
 * lose the whole run's profile. */
static void check_profile_dir(void)
{
    const char *path = caracal_setting_str(CARACAL_SET_PROFILE);
    if (!*path)
        return;
    char copy[4096];
    if (snprintf(copy, sizeof copy, "%s", path) >= (int)sizeof copy) {
        caracal_warn_job("CARACAL_PROFILE: the path is longer than %zu bytes", sizeof copy - 1);
        return;
    }
    const char *dir = dirname(copy);
    if (access(dir, W_OK | X_OK))
        caracal_warn_job("CARACAL_PROFILE=%s: directory %s is not writable (%s); the profile would be lost", path,
                         dir, strerror(errno));
}

int caracal_check_settings(void)
{
    unsigned before = caracal_warning_count();
    caracal_config_load(); /* unknown CARACAL_* names */
    for (int id = 0; id < CARACAL_SET_COUNT; id++) {
        const caracal_setting_info *s = &caracal_settings[id];
        if (s->type == CARACAL_STRING ||
            (!strcasecmp(s->default_value, "auto") && !strcasecmp(caracal_setting_str(id), "auto")))
            continue; /* numbers with an automatic default (CARACAL_SHM_CAP) take "auto" too */
        (void)caracal_setting_int(id);
    }
    caracal_log_setup();
    (void)caracal_coll_mode();
    (void)caracal_peer_budget();
    caracal_select_setup(); /* every family's rules and the rules file */
    (void)caracal_native_blocking_mode_init();
    (void)caracal_native_yield_decide();
    (void)caracal_wait_strategy();
    (void)caracal_setting_switch(CARACAL_SET_SHM_CMA);
    (void)caracal_setting_switch(CARACAL_SET_SHM_CMA_BCAST);
    (void)caracal_setting_switch(CARACAL_SET_SHM_CMA_ALLREDUCE);
    (void)caracal_reorder_time_budget();
    check_topology();
    check_hwloc_xml();
    check_profile_dir();
    return (int)(caracal_warning_count() - before);
}
