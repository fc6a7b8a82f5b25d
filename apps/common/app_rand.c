#include "app_rand.h"

#define GOLDEN 0x9e3779b97f4a7c15ULL

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

app_rand_t app_rand_make(uint64_t seed, uint64_t stream)
{
    /* Streams start far apart: the stream number goes through the mixer first. */
    app_rand_t r = {mix(seed ^ mix(stream + GOLDEN))};
    return r;
}

uint64_t app_rand_next(app_rand_t *r)
{
    r->state += GOLDEN;
    return mix(r->state);
}

uint64_t app_rand_below(app_rand_t *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)app_rand_next(r) * n) >> 64);
}

double app_rand_unit(app_rand_t *r)
{
    return (double)(app_rand_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

void app_rand_fill(void *buf, size_t len, uint64_t seed, uint64_t stream)
{
    app_rand_t r = app_rand_make(seed, stream);
    unsigned char *p = buf;
    /* Little-endian on every host, so a seed means the same bytes everywhere (compilers
     * turn the shifts into one store on little-endian machines). */
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t v = app_rand_next(&r);
        for (int k = 0; k < 8; k++)
            p[k] = (unsigned char)(v >> (8 * k));
    }
    if (len) {
        uint64_t v = app_rand_next(&r);
        for (size_t k = 0; k < len; k++)
            p[k] = (unsigned char)(v >> (8 * k));
    }
}
