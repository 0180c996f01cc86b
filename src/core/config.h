/* Caracal's settings: one declarative table (settings.def) read from CARACAL_*
 * environment variables. Values are parsed once at MPI_Init (or first use). */
#ifndef CARACAL_CORE_CONFIG_H
#define CARACAL_CORE_CONFIG_H
#include <stddef.h>

typedef enum { CARACAL_BOOL, CARACAL_INT, CARACAL_SIZE, CARACAL_STRING } caracal_setting_type;

typedef struct {
    const char *name;          /* without the CARACAL_ prefix */
    caracal_setting_type type;
    const char *default_value;
    const char *doc;
} caracal_setting_info;

enum {
#define CARACAL_SETTING(name, type, def, doc) CARACAL_SET_##name,
#include "settings.def"
#undef CARACAL_SETTING
    CARACAL_SET_COUNT
};

/** The table itself, CARACAL_SET_COUNT entries, in settings.def order. */
extern const caracal_setting_info caracal_settings[CARACAL_SET_COUNT];

/** Read the environment once; warn (through caracal_warn) about unknown CARACAL_* names. */
void caracal_config_load(void);

/** The raw string value (environment or default); never NULL. */
const char *caracal_setting_str(int id);
/** Integer value (INT, BOOL and SIZE settings); a malformed value warns and gives the default. */
long long caracal_setting_int(int id);
/** A STRING setting of auto, 1 or 0 (also yes/no/on/off): -1 for auto (or unset), else 0 or
 *  1; anything else warns once per job and gives auto. */
int caracal_setting_switch(int id);
/** Whether the user set this variable explicitly. */
int caracal_setting_is_set(int id);

/** Print the table as JSON (used by caracal-info and `caracal info`). */
void caracal_settings_print_json(void *FILE_stream);

#endif
