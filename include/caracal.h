/* Caracal public C API.
 *
 * Applications do not need this header: Caracal works on unmodified MPI
 * programs through LD_PRELOAD or by linking -lcaracal. The functions here are
 * for tools and for applications that want to talk to Caracal directly. */
#ifndef CARACAL_H
#define CARACAL_H

#ifdef __cplusplus
extern "C" {
#endif

/** Caracal's version, "major.minor.patch". */
const char *caracal_version(void);

/** Print the table of CARACAL_* settings as JSON (schema caracal.settings/1) to stdout. */
void caracal_print_settings(void);

/** How many collectives Caracal's own algorithms ran in this process (the rest went native). */
long caracal_coll_count(void);

#ifdef __cplusplus
}
#endif
#endif
