#include "report.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

double ryr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double fps_of(const ryr_report_t *r)
{
    return r->seconds > 0.0 ? r->frames / r->seconds : 0.0;
}

static const char *const path_names[] = {"handover", "ipc", "staged"};
#define NPATHS 3

ryr_stage_t ryr_report_pace(const ryr_report_t *r)
{
    int pace = 0;
    for (int s = 1; s < RYR_NSTAGES; s++)
        if (r->stages[s].busy_s > r->stages[pace].busy_s)
            pace = s;
    return (ryr_stage_t)pace;
}

unsigned ryr_report_path_bit(const char *name)
{
    for (int i = 0; name && i < NPATHS; i++)
        if (strcmp(name, path_names[i]) == 0)
            return 1u << i;
    return 0;
}

void ryr_report_print(FILE *f, const ryr_report_t *r)
{
    fprintf(f, "ryr: preset %s, %d frames of %dx%d in %.3f s: %.3f frames/s%s\n", r->preset,
            r->frames, r->width, r->height, r->seconds, fps_of(r),
            r->verified ? " (verified)" : "");
    fprintf(f, "  %-9s %6s %8s %10s\n", "stage", "tasks", "threads", "busy (s)");
    ryr_stage_t pace = ryr_report_pace(r);
    for (int s = 0; s < RYR_NSTAGES; s++)
        fprintf(f, "  %-9s %6d %8d %10.3f%s%s\n", ryr_stage_name((ryr_stage_t)s),
                r->stages[s].tasks, r->stages[s].threads, r->stages[s].busy_s,
                r->stages[s].gpu ? "  GPU" : "", (int)pace == s ? "  <- sets the pace" : "");
    if (r->resident) {
        fprintf(f, "  frames in device memory; device conduits' paths:");
        for (int i = 0; i < NPATHS; i++)
            if (r->device_paths & (1u << i))
                fprintf(f, " %s", path_names[i]);
        fputc('\n', f);
    }
    long long all = r->rows_cpu + r->rows_gpu;
    if (r->farm) {
        fprintf(f, "  raytrace rows by kind: GPU threads %lld (%.1f%%), CPU threads %lld "
                   "(%.1f%%)\n", r->rows_gpu, all ? 100.0 * (double)r->rows_gpu / (double)all : 0.0,
                r->rows_cpu, all ? 100.0 * (double)r->rows_cpu / (double)all : 0.0);
        for (int i = 0; i < r->nmembers; i++)
            fprintf(f, "  farm member %d: %lld frames, rows by GPU threads %lld, CPU threads "
                       "%lld\n", i, r->members[i].frames, r->members[i].rows_gpu,
                    r->members[i].rows_cpu);
    }
}

/* Preset names are ours and plain ASCII; escape anyway so the line is always JSON. */
static void json_string(FILE *f, const char *s)
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

void ryr_report_json(FILE *f, const ryr_report_t *r)
{
    fputs("{\"preset\": ", f);
    json_string(f, r->preset);
    fprintf(f, ", \"frames\": %d, \"width\": %d, \"height\": %d, \"seconds\": %.6f, "
               "\"fps\": %.6f, \"verified\": %s, \"gpu\": %s, ",
            r->frames, r->width, r->height, r->seconds, fps_of(r),
            r->verified ? "true" : "false", r->gpu ? "true" : "false");
    if (r->farm) {
        fprintf(f, "\"rows_cpu\": %lld, \"rows_gpu\": %lld, \"members\": [", r->rows_cpu,
                r->rows_gpu);
        for (int i = 0; i < r->nmembers; i++)
            fprintf(f, "%s{\"frames\": %lld, \"rows_cpu\": %lld, \"rows_gpu\": %lld}",
                    i ? ", " : "", r->members[i].frames, r->members[i].rows_cpu,
                    r->members[i].rows_gpu);
        fputs("], ", f);
    }
    if (r->resident) {
        fputs("\"device_paths\": [", f);
        for (int i = 0, n = 0; i < NPATHS; i++)
            if (r->device_paths & (1u << i))
                fprintf(f, "%s\"%s\"", n++ ? ", " : "", path_names[i]);
        fputs("], ", f);
    }
    fprintf(f, "\"pace\": \"%s\", \"stages\": {", ryr_stage_name(ryr_report_pace(r)));
    for (int s = 0; s < RYR_NSTAGES; s++)
        fprintf(f, "%s\"%s\": {\"tasks\": %d, \"threads\": %d, \"busy_s\": %.6f, "
                   "\"gpu\": %s}",
                s ? ", " : "", ryr_stage_name((ryr_stage_t)s), r->stages[s].tasks,
                r->stages[s].threads, r->stages[s].busy_s, r->stages[s].gpu ? "true" : "false");
    fputs("}}\n", f);
    fflush(f);
}

void ryr_progress_init(ryr_progress_t *p, FILE *f, int total)
{
    p->f = f;
    p->total = total > 0 ? total : 1;
    p->tty = f && isatty(fileno(f));
    p->shown = 0;
    p->open = 0;
}

void ryr_progress_update(ryr_progress_t *p, int done)
{
    if (!p->f)
        return;
    if (p->tty) {
        /* shown: the last frame count printed */
        if (done == p->shown)
            return;
        fprintf(p->f, "\rryr: frame %d/%d (%d%%)", done, p->total, done * 100 / p->total);
        fflush(p->f);
        p->open = 1;
        p->shown = done;
    } else {
        /* shown: the last tenth printed */
        int tenth = done * 10 / p->total;
        if (tenth <= p->shown)
            return;
        fprintf(p->f, "ryr: %d%% (%d/%d frames)\n", tenth * 10, done, p->total);
        fflush(p->f);
        p->shown = tenth;
    }
}

void ryr_progress_finish(ryr_progress_t *p)
{
    if (p->f && p->open) {
        fputc('\n', p->f);
        fflush(p->f);
        p->open = 0;
    }
}
