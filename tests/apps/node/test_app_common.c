/* apps/common: sizes, the shared command line, seeded inputs and the exact comparison. */
#include <stdio.h>
#include <string.h>

#include "app_cli.h"
#include "app_compare.h"
#include "app_image.h"
#include "app_rand.h"
#include "app_size.h"
#include "utc_test.h"

static const app_size_t presets[3] = {{"S", 320, 200}, {"M", 2048, 1024}, {"L", 8192, 3072}};

static void test_size_presets_and_custom(void)
{
    app_size_t s;
    char err[256];
    CU_ASSERT_EQUAL(app_size_parse("M", presets, &s, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(s.label, "M");
    CU_ASSERT(s.a == 2048 && s.b == 1024);
    CU_ASSERT_EQUAL(app_size_parse("l", presets, &s, err, sizeof err), 0);
    CU_ASSERT(s.a == 8192 && s.b == 3072);
    CU_ASSERT_EQUAL(app_size_parse("640x480", presets, &s, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(s.label, "640x480");
    CU_ASSERT(s.a == 640 && s.b == 480);
    CU_ASSERT_EQUAL(app_size_parse("2Kx1m", presets, &s, err, sizeof err), 0);
    CU_ASSERT(s.a == 2048 && s.b == 1048576);
    CU_ASSERT_EQUAL(app_size_parse("1X3G", presets, &s, err, sizeof err), 0);
    CU_ASSERT(s.a == 1 && s.b == 3LL << 30);
}

static void test_size_rejects(void)
{
    static const char *bad[] = {"", "XL", "0x10", "10x0", "-5x10", "10x-5", "10",
                                "10x", "x10", "1.5x2", "10kbx2", "10x2x3", " 10x2",
                                "99999999999999999999x1", "5000000000Gx1"};
    app_size_t s = presets[0];
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int rc = app_size_parse(bad[i], presets, &s, err, sizeof err);
        if (rc == 0)
            fprintf(stderr, "size '%s' was accepted\n", bad[i]);
        CU_ASSERT_EQUAL(rc, -1);
        CU_ASSERT(err[0] != '\0');
    }
    CU_ASSERT_STRING_EQUAL(s.label, "S"); /* untouched on error */
    app_size_parse("0x10", presets, &s, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "positive"));
    app_size_parse("-5x10", presets, &s, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "positive"));
}

static const app_info_t info = {
    .name = "t",
    .summary = "test",
    .sizes = {{"S", 320, 200}, {"M", 2048, 1024}, {"L", 8192, 3072}},
    .size_help = "W x H",
    .input_help = "in",
    .output_help = "out",
    .gpu_max_threads = 4,
};

/* Parse a NULL-terminated list of words (argv[0] added). */
static int parse(app_opts_t *o, const char *const *words)
{
    char *argv[32] = {"t"};
    int argc = 1;
    while (*words && argc < 31)
        argv[argc++] = (char *)*words++;
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w"); /* the parser's messages are not the test's output */
    int rc = app_cli_parse(&info, NULL, argc, argv, o);
    fclose(stderr);
    stderr = saved;
    return rc;
}

static void test_cli_defaults_and_values(void)
{
    app_opts_t o;
    const char *none[] = {NULL};
    CU_ASSERT_EQUAL(parse(&o, none), APP_CLI_RUN);
    CU_ASSERT_EQUAL(o.impl, APP_IMPL_SEQ);
    CU_ASSERT_EQUAL(o.threads, 1);
    CU_ASSERT_STRING_EQUAL(o.size.label, "S");
    CU_ASSERT_EQUAL(o.seed, 1);
    CU_ASSERT_EQUAL(o.reps, 1);
    CU_ASSERT(!o.verify && !o.json && !o.input && !o.output);

    const char *all[] = {"--impl", "utc",  "--threads=3", "--size",     "12x34", "--memtype",
                         "pinned", "--verify", "--json", "--seed",  "18446744073709551615",
                         "--reps", "4", "--input", "a.ppm", "--output=b.ppm", NULL};
    CU_ASSERT_EQUAL(parse(&o, all), APP_CLI_RUN);
    CU_ASSERT_EQUAL(o.impl, APP_IMPL_UTC);
    CU_ASSERT_EQUAL(o.threads, 3);
    CU_ASSERT(o.size.a == 12 && o.size.b == 34);
    CU_ASSERT_EQUAL(o.memtype, APP_MEM_PINNED);
    CU_ASSERT(o.verify && o.json);
    CU_ASSERT(o.seed == 18446744073709551615ULL);
    CU_ASSERT_EQUAL(o.reps, 4);
    CU_ASSERT_STRING_EQUAL(o.input, "a.ppm");
    CU_ASSERT_STRING_EQUAL(o.output, "b.ppm");

    const char *gpu[] = {"--impl", "gpu", NULL};
    CU_ASSERT_EQUAL(parse(&o, gpu), APP_CLI_RUN);
    CU_ASSERT_EQUAL(o.threads, 1); /* one GPU thread unless asked */
    const char *seq[] = {"--impl", "seq", "--threads", "8", NULL};
    CU_ASSERT_EQUAL(parse(&o, seq), APP_CLI_RUN);
    CU_ASSERT_EQUAL(o.threads, 1); /* seq is one thread whatever --threads says */
}

static void test_cli_rejects(void)
{
    static const char *const bad[][4] = {
        {"--impl", "cuda", NULL},     {"--impl", NULL},           {"--threads", "0", NULL},
        {"--threads", "-2", NULL},    {"--threads", "x", NULL},   {"--threads", "5000", NULL},
        {"--size", "0x7", NULL},      {"--size", "huge", NULL},   {"--memtype", "shared", NULL},
        {"--seed", "-1", NULL},       {"--seed", "1e3", NULL},    {"--reps", "0", NULL},
        {"--input", "", NULL},        {"--verify=yes", NULL},     {"--bogus", NULL},
        {"stray", NULL},              {"--impl", "gpu", "--threads", "5"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *words[6] = {bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL};
        app_opts_t o;
        int rc = parse(&o, words);
        if (rc != APP_CLI_ERROR)
            fprintf(stderr, "accepted: %s %s\n", bad[i][0], bad[i][1] ? bad[i][1] : "");
        CU_ASSERT_EQUAL(rc, APP_CLI_ERROR);
    }
}

static void test_rand_is_deterministic(void)
{
    unsigned char a[100], b[100], c[100];
    app_rand_fill(a, sizeof a, 42, 7);
    app_rand_fill(b, sizeof b, 42, 7);
    app_rand_fill(c, sizeof c, 42, 8);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(a, c, sizeof a), 0);
    /* a fixed value: the generator must not change, or every seeded input changes */
    app_rand_t r = app_rand_make(1, 0);
    uint64_t first = app_rand_next(&r);
    app_rand_t r2 = app_rand_make(1, 0);
    CU_ASSERT_EQUAL(first, app_rand_next(&r2));
    for (int i = 0; i < 1000; i++) {
        CU_ASSERT(app_rand_below(&r, 10) < 10);
        double u = app_rand_unit(&r);
        CU_ASSERT(u >= 0.0 && u < 1.0);
    }
    uint8_t img1[3 * 7 * 5], img2[3 * 7 * 5];
    app_image_generate(3, 7, 5, 9, img1);
    app_image_generate(3, 7, 5, 9, img2);
    CU_ASSERT_EQUAL(memcmp(img1, img2, sizeof img1), 0);
}

static void test_compare(void)
{
    unsigned char a[64] = {0}, b[64] = {0};
    CU_ASSERT_EQUAL(app_compare_bytes(a, b, sizeof a), -1);
    b[37] = 1;
    CU_ASSERT_EQUAL(app_compare_bytes(a, b, sizeof a), 37);
    CU_ASSERT_EQUAL(app_compare_bytes(a, b, 37), -1);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"sizes: presets and custom AxB", test_size_presets_and_custom},
        {"sizes: zero, negative, malformed are refused", test_size_rejects},
        {"command line: defaults and every option", test_cli_defaults_and_values},
        {"command line: bad values are refused", test_cli_rejects},
        {"seeded inputs are deterministic", test_rand_is_deterministic},
        {"exact comparison finds the first difference", test_compare},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "apps/common", cases);
}
