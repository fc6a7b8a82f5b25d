/**
 * @file app_rand.h
 * @brief Deterministic pseudo-random numbers for generated inputs (splitmix64).
 *
 * Inputs depend only on --seed: the same seed gives the same bytes on every machine
 * and with every --impl. A stream number lets parts of an input (rows, buffers) be made
 * independently, in any order.
 */
#ifndef APP_RAND_H
#define APP_RAND_H

#include <stddef.h>
#include <stdint.h>

/** A generator: its whole state is one 64-bit word. */
typedef struct app_rand {
    uint64_t state;
} app_rand_t;

/** @brief The generator of stream @p stream of seed @p seed. */
app_rand_t app_rand_make(uint64_t seed, uint64_t stream);

/** @brief Next 64 random bits. */
uint64_t app_rand_next(app_rand_t *r);

/** @brief A number in [0, n) (n > 0), by multiply-shift (bias below 2^-32 for n < 2^32). */
uint64_t app_rand_below(app_rand_t *r, uint64_t n);

/** @brief A double in [0, 1) with 53 random bits. */
double app_rand_unit(app_rand_t *r);

/** @brief Fill @p len bytes with the output of stream @p stream of @p seed. */
void app_rand_fill(void *buf, size_t len, uint64_t seed, uint64_t stream);

#endif /* APP_RAND_H */
