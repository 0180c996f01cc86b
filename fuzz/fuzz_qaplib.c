/* libFuzzer target: the QAPLIB reader (src/map/qaplib_read.c) behind `caracal map --qaplib`.
 * Accepted: n >= 1 and 2 n^2 integers, all readable; refused: one line saying where. */
#include "map/qap.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    caracal_qap_problem pb;
    char err[512];
    err[0] = 0;
    if (caracal_qaplib_parse("fuzz", (const char *)data, size, &pb, err, sizeof err)) {
        if (!err[0] || strchr(err, '\n'))
            __builtin_trap();
        return 0;
    }
    if (pb.n < 1 || !pb.flow || !pb.dist)
        __builtin_trap();
    uint64_t sum = 0;
    for (long k = 0; k < (long)pb.n * pb.n; k++) /* every entry is there (ASan checks the bounds) */
        sum += (uint64_t)(pb.flow[k] ^ pb.dist[k]);
    __asm__ volatile("" : : "r"(sum)); /* keep the reads */
    caracal_qaplib_free(&pb);
    return 0;
}
