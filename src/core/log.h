/* Logging: one line per message on stderr, prefixed "caracal[rank]:".
 * Warnings always print (on every rank); topics (CARACAL_LOG=algo,init,...)
 * print on the ranks chosen by CARACAL_LOG_RANKS. */
#ifndef CARACAL_CORE_LOG_H
#define CARACAL_CORE_LOG_H

/** This process's rank in MPI_COMM_WORLD, or -1 before MPI_Init. */
extern int caracal_world_rank;

/** Apply CARACAL_LOG / CARACAL_LOG_RANKS (called at init, after the rank is known). */
void caracal_log_setup(void);
/** Whether log lines of this topic are printed by this rank. */
int caracal_log_enabled(const char *topic);
/** Print one line for a topic if it is enabled. */
void caracal_log(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Print one warning line, always. */
void caracal_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** A warning about something every rank sees alike (settings, rules): printed once per
 *  job, by world rank 0 (or by whoever calls before MPI_Init has given ranks). */
void caracal_warn_job(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** How many warning lines this process has printed (caracal_settings_check counts with it). */
unsigned caracal_warning_count(void);

#endif
