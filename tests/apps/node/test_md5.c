/* md5: the digest against RFC 1321's test suite and Python's hashlib (an independent
 * implementation) at the padding boundaries, and every CPU version against it. */
#include <stdlib.h>
#include <string.h>

#include "md5.h"
#include "md5_impl.h"
#include "utc_test.h"

static void hex_of(const void *data, size_t len, char hex[33])
{
    uint8_t d[MD5_DIGEST_BYTES];
    md5_digest(data, len, d);
    md5_hex(d, hex);
}

static void test_rfc1321_suite(void)
{
    static const char *const cases[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"1234567890123456789012345678901234567890123456789012345678901234567890123456789"
         "0",
         "57edf4a22be3c955ac49da2e2107b67a"}};
    char hex[33];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hex_of(cases[i][0], strlen(cases[i][0]), hex);
        CU_ASSERT_STRING_EQUAL(hex, cases[i][1]);
    }
}

/* Bytes (7 i + 3) mod 256: lengths around the 56- and 64-byte padding edges, digests from
 * Python's hashlib.md5. */
static void test_padding_boundaries(void)
{
    static const struct {
        size_t len;
        const char *hex;
    } cases[] = {{0, "d41d8cd98f00b204e9800998ecf8427e"},   {1, "8666683506aacd900bbd5a74ac4edf68"},
                 {55, "52c0e574e1198de5fe3f8f11440dcb1b"},  {56, "46c9907fc908ee68b1e7b8e71286a518"},
                 {57, "1c805dd236c35cab25fcb1bc73802c51"},  {63, "a62f6d59e837867693f042f5b8f5a236"},
                 {64, "7160b8fb5e9e4023d549c3971fbaeead"},  {65, "70bd662e7aefbda85a0f7244167b7897"},
                 {119, "e84905d4214f4d1ca56c2cdcc152b143"}, {120, "e3eb5a6c8669ea01a8c185b8abc8a5dc"},
                 {127, "acce2474d6cc8302120d09c818d17ef7"}, {128, "10b2da1a82f16d99a81a7203fe9f02cb"},
                 {129, "03fefbbcebe2959cf2270241aafe0250"}, {1000, "10046f077f2082ac19676b8079f1cb1a"}};
    uint8_t data[1000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7 + 3);
    char hex[33];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hex_of(data, cases[i].len, hex);
        if (strcmp(hex, cases[i].hex) != 0)
            fprintf(stderr, "length %zu: got %s\n", cases[i].len, hex);
        CU_ASSERT_STRING_EQUAL(hex, cases[i].hex);
    }
}

/* 1000 bytes in buffers of 64: 16 buffers, the last one 40 bytes. */
static void test_versions_agree(void)
{
    md5_input_t in = {.total = 1000, .len = 64, .count = 16};
    in.data = malloc(in.total);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in.data);
    for (size_t i = 0; i < in.total; i++)
        in.data[i] = (uint8_t)(i * 7 + 3);
    CU_ASSERT_EQUAL(md5_input_buf_len(&in, 15), 40);

    uint8_t want[16 * MD5_DIGEST_BYTES], got[16 * MD5_DIGEST_BYTES];
    app_opts_t o = {.impl = APP_IMPL_SEQ, .threads = 1, .reps = 2};
    double secs = -1.0;
    CU_ASSERT_EQUAL(md5_run_seq(&in, want, &o, &secs), APP_EXIT_OK);
    CU_ASSERT(secs >= 0.0);
    char hex[33];
    md5_hex(want, hex);
    CU_ASSERT_STRING_EQUAL(hex, "7160b8fb5e9e4023d549c3971fbaeead"); /* hashlib, bytes 0..63 */
    md5_hex(want + 15 * MD5_DIGEST_BYTES, hex);
    CU_ASSERT_STRING_EQUAL(hex, "c884a0cd8e9b7c463d189ed0d00a93bf"); /* hashlib, bytes 960..999 */

    static const int threads[] = {1, 2, 3, 16, 20}; /* 20: more threads than buffers */
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        o.threads = threads[k];
        memset(got, 0, sizeof got);
        CU_ASSERT_EQUAL(md5_run_omp(&in, got, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
        memset(got, 0, sizeof got);
        CU_ASSERT_EQUAL(md5_run_utc(&in, got, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
    }
    free(in.data);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"RFC 1321 test suite", test_rfc1321_suite},
        {"padding boundaries against hashlib", test_padding_boundaries},
        {"seq, omp and utc agree, short last buffer", test_versions_agree},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "md5", cases);
}
