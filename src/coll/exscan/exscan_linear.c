/* Exscan "linear": the exclusive form of scan's schedule (coll/scan/scan_linear.c); rank 0's
 * receive buffer is never written. */
#include "coll/starts.h"
#include "coll/scan/scan.h"

CARACAL_START(caracal_start_exscan_linear) { return caracal_scan_linear(a, call, 1); }
