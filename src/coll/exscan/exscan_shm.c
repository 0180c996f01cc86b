/* Exscan "shm": scan shm (coll/scan/scan_shm.c) over members 0..q-1; rank 0's receive
 * buffer is never written. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_exscan_shm)
{
    return caracal_shm_scan(a->h, call->sbuf, call->rbuf, call->scount, call->sdt, call->op, 1);
}
