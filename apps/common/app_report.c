#include "app_report.h"

void app_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void app_report(const app_info_t *info, const app_opts_t *opts, double seconds,
                app_verified_t verified, const char *detail)
{
    if (opts->json) {
        printf("{\"app\": ");
        app_json_string(stdout, info->name);
        printf(", \"impl\": ");
        app_json_string(stdout, app_impl_name(opts->impl));
        printf(", \"size\": ");
        app_json_string(stdout, opts->size.label);
        printf(", \"threads\": %d, \"seconds\": %.6f, \"verified\": %s}\n", opts->threads,
               seconds, verified == APP_VERIFY_OK ? "true" : "false");
    } else {
        printf("%s: impl %s, size %s%s%s%s, %d thread%s, %.6f s%s\n", info->name,
               app_impl_name(opts->impl), opts->size.label, detail ? " (" : "",
               detail ? detail : "", detail ? ")" : "", opts->threads,
               opts->threads == 1 ? "" : "s", seconds,
               verified == APP_VERIFY_OK         ? ", verified against seq"
               : verified == APP_VERIFY_MISMATCH ? ", MISMATCH against seq"
                                                 : "");
    }
    fflush(stdout);
}
