/* Exscan "recdbl": the exclusive form of scan's schedule (coll/scan/scan_recdbl.c); rank 0's
 * receive buffer is never written. */
#include "coll/starts.h"
#include "coll/scan/scan.h"

CARACAL_START(caracal_start_exscan_recdbl) { return caracal_scan_recdbl(a, call, 1); }
