/* Exscan "hier": the exclusive form of scan's schedule (coll/scan/scan_hier.c); rank 0's
 * receive buffer is never written. */
#include "coll/starts.h"
#include "coll/scan/scan.h"

CARACAL_START(caracal_start_exscan_hier) { return caracal_scan_hier(a, call, 1); }
