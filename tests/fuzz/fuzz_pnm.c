/*
 * Fuzz harness: the PGM/PPM reader (ryr_pnm_read), fed through an in-memory file. Any
 * input either gives an image whose size matches the header (the pixels are all read, so
 * ASan sees any overrun) or fails with a message and leaves the outputs untouched.
 */
#include "fuzz_util.h" /* first: it defines _GNU_SOURCE */
#include "pnm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    if (fuzz_memfile(data, size, path, sizeof path) != 0)
        return 0;
    int channels = -7, w = -7, h = -7;
    uint8_t *px = (uint8_t *)&channels; /* a sentinel: must stay as it is on error */
    ryr_err_t err = {{0}};
    if (ryr_pnm_read(path, &channels, &w, &h, &px, &err) != 0) {
        fuzz_check_message(err.msg, sizeof err.msg);
        FUZZ_CHECK(channels == -7 && w == -7 && h == -7 && px == (uint8_t *)&channels);
        return 0;
    }
    FUZZ_CHECK(channels == 1 || channels == 3);
    FUZZ_CHECK(w >= 1 && w <= RYR_PNM_MAX_SIDE && h >= 1 && h <= RYR_PNM_MAX_SIDE);
    size_t n = (size_t)w * (size_t)h * (size_t)channels;
    FUZZ_CHECK(n < size); /* the pixels came from the input, after a header */
    FUZZ_CHECK(memcmp(px, data + size - n, n) == 0);
    free(px);
    return 0;
}
