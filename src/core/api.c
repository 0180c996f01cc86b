#include "caracal.h"
#include "config.h"
#include <stdio.h>

const char *caracal_version(void) { return CARACAL_VERSION; }

void caracal_print_settings(void) { caracal_settings_print_json(stdout); }

void caracal_algorithms_print_json(void *stream);
void caracal_print_algorithms(void) { caracal_algorithms_print_json(stdout); }
