/* The message sizes: log-spaced base points with NetPIPE-style perturbations.
 *
 * Base points are round(2^(i/per_octave)) for every i, kept inside [lo, hi] and
 * deduplicated; lo and hi themselves are always base points. Around each base
 * point b the sizes b-p and b+p are added (p = perturb) when they stay clear of
 * the neighbours' perturbations (b-p > prev+p, b+p < next-p) and inside [lo, hi]: sizes just off a power
 * of two expose alignment and protocol-threshold effects that the round sizes hide. */
#include "probe.h"

#include <math.h>
#include <stdlib.h>

static int add(size_t **v, size_t *n, size_t *cap, size_t x)
{
    if (*n && (*v)[*n - 1] >= x)
        return 0;               /* keep strictly increasing */
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        size_t *nv = realloc(*v, *cap * sizeof **v);
        if (!nv)
            return -1;
        *v = nv;
    }
    (*v)[(*n)++] = x;
    return 0;
}

size_t probe_sizes(size_t lo, size_t hi, int per_octave, int perturb, size_t **out)
{
    size_t *base = NULL, nb = 0, cb = 0;
    if (lo < 1 || hi < lo || per_octave < 1)
        return 0;
    add(&base, &nb, &cb, lo);
    for (int i = 0;; i++) {
        double x = round(pow(2.0, (double)i / per_octave));
        if (x > (double)hi)
            break;
        if (x > (double)lo)
            add(&base, &nb, &cb, (size_t)x);
    }
    add(&base, &nb, &cb, hi);

    size_t *v = NULL, n = 0, cap = 0;
    for (size_t i = 0; i < nb; i++) {
        size_t b = base[i], p = (size_t)(perturb > 0 ? perturb : 0);
        size_t prev = i ? base[i - 1] : 0, next = i + 1 < nb ? base[i + 1] : (size_t)-1;
        if (p && b > p && b - p > prev + p && b - p >= lo)
            add(&v, &n, &cap, b - p);
        add(&v, &n, &cap, b);
        if (p && b + p + p < next && b + p <= hi)
            add(&v, &n, &cap, b + p);
    }
    free(base);
    *out = v;
    return n;
}
