/* Message buffers, data patterns and the test-only corruption hook.
 *
 * Cache mode reuses one slot so the data stays in cache (the best case an
 * application sees when it sends the same buffer again). No-cache mode rotates
 * through a region of at least twice the last-level cache, so every message
 * starts from main memory, as with a large application working set. */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t probe_llc_bytes(void)
{
    /* sysfs is what the kernel read from CPUID; sysconf can be wrong in VMs. */
    size_t best = 0;
    for (int idx = 0; idx < 8; idx++) {
        char path[96], buf[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            size_t v = strtoull(buf, &end, 10);
            if (*end == 'K') v <<= 10;
            else if (*end == 'M') v <<= 20;
            if (v > best) best = v;
        }
        fclose(f);
    }
    return best ? best : (size_t)32 << 20;
}

int probe_buf_init(struct probe_buf *b, size_t region, size_t maxsize, int nocache)
{
    size_t want = maxsize + 64;
    if (nocache && region > want)
        want = region;
    b->bytes = want;
    if (posix_memalign((void **)&b->base, 4096, want))
        return -1;
    memset(b->base, 0, want);  /* touch every page now, not inside a timed loop */
    b->stride = want;
    b->nslots = 1;
    b->next = 0;
    b->rotate = nocache;
    return 0;
}

void probe_buf_layout(struct probe_buf *b, size_t size)
{
    size_t stride = (size + 63) & ~(size_t)63;
    if (stride == 0)
        stride = 64;
    /* Cache mode must keep to one slot: walking the whole region (sized for the
     * largest message) would make every small message a cache miss. */
    b->nslots = b->rotate ? b->bytes / stride : 1;
    if (b->nslots < 1)
        b->nslots = 1;
    b->stride = stride;
    b->next = 0;
}

char *probe_buf_slot(struct probe_buf *b)
{
    char *p = b->base + b->next * b->stride;
    if (++b->next == b->nslots)
        b->next = 0;
    return p;
}

void probe_buf_free(struct probe_buf *b)
{
    free(b->base);
    b->base = NULL;
}

/* A pattern that differs per size and direction and catches shifted, repeated
 * or zeroed blocks: a byte of a 32-bit LCG stream seeded per message. */
void probe_fill(char *p, size_t n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (char)(x >> 24);
    }
}

size_t probe_check(const char *p, size_t n, unsigned seed, size_t *first_bad)
{
    unsigned x = seed * 2654435761u + 1u;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        if (p[i] != (char)(x >> 24)) {
            if (!bad && first_bad)
                *first_bad = i;
            bad++;
        }
    }
    return bad;
}

/* TEST ONLY: CARACAL_PROBE_CORRUPT=SIZE flips the middle byte of every buffer of
 * exactly SIZE bytes received in integrity mode, so tests can prove that the
 * check catches corruption. Always compiled in: one comparison per message. */
void probe_corrupt_hook(struct probe_ctx *c, char *p, size_t n)
{
    if (c->corrupt_size >= 0 && (size_t)c->corrupt_size == n && n > 0)
        p[n / 2] ^= 0x5a;
}
