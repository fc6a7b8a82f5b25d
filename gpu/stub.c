/*
 * The gpu module of a build without GPU support (UTC_WITH_CUDA=OFF or no CUDA toolkit):
 * every call fails with UTC_ERR_NO_GPU_SUPPORT, and so does creating a GPU task.
 */
#include <stddef.h>

#include <utc/gpu.h>

#include "gpu_module.h"

static utc_status_t no_gpu(const char *fn)
{
    return utc__error(UTC_ERR_NO_GPU_SUPPORT,
                      "%s: UTC was built without GPU support (configure with a CUDA toolkit "
                      "and UTC_WITH_CUDA=ON)",
                      fn);
}

int utc_gpu_supported(void) { return 0; }
const char *utc_gpu_unavailable_reason(void)
{
    return "UTC was built without GPU support (UTC_WITH_CUDA=OFF or no CUDA toolkit found)";
}
int utc_gpu_device_count(void) { return no_gpu("utc_gpu_device_count"); }
int utc_gpu_device(void) { return no_gpu("utc_gpu_device"); }

void *utc_gpu_stream(void)
{
    (void)no_gpu("utc_gpu_stream");
    return NULL;
}

utc_status_t utc_gpu_synchronize(void) { return no_gpu("utc_gpu_synchronize"); }
utc_status_t utc_gpu_check(const char *what)
{
    (void)what;
    return no_gpu("utc_gpu_check");
}

utc_status_t utc_gpu_data_create(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                 utc_mem_kind_t kind, utc_gpu_data_t **out)
{
    (void)elem_size, (void)nx, (void)ny, (void)nz, (void)kind, (void)out;
    return no_gpu("utc_gpu_data_create");
}

utc_status_t utc_gpu_data_create_default(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                         utc_gpu_data_t **out)
{
    (void)elem_size, (void)nx, (void)ny, (void)nz, (void)out;
    return no_gpu("utc_gpu_data_create_default");
}

/* No buffer can exist in this build: the getters have nothing to report. */
void utc_gpu_data_destroy(utc_gpu_data_t *data) { (void)data; }
void *utc_gpu_data_host(const utc_gpu_data_t *data) { (void)data; return NULL; }
void *utc_gpu_data_device(const utc_gpu_data_t *data) { (void)data; return NULL; }
size_t utc_gpu_data_size(const utc_gpu_data_t *data) { (void)data; return 0; }
size_t utc_gpu_data_elem_size(const utc_gpu_data_t *data) { (void)data; return 0; }
utc_mem_kind_t utc_gpu_data_kind(const utc_gpu_data_t *data) { (void)data; return UTC_MEM_PAGEABLE; }
int utc_gpu_data_device_id(const utc_gpu_data_t *data)
{
    (void)data;
    return no_gpu("utc_gpu_data_device_id");
}

utc_status_t utc_gpu_data_dims(const utc_gpu_data_t *data, size_t *nx, size_t *ny, size_t *nz)
{
    (void)data, (void)nx, (void)ny, (void)nz;
    return no_gpu("utc_gpu_data_dims");
}

#define UTC_GPU_STUB_OP_(name)                                                           \
    utc_status_t name(utc_gpu_data_t *data)                                              \
    {                                                                                    \
        (void)data;                                                                      \
        return no_gpu(#name);                                                            \
    }
#define UTC_GPU_STUB_COPY_(name, qual)                                                   \
    utc_status_t name(utc_gpu_data_t *data, qual void *ptr)                              \
    {                                                                                    \
        (void)data, (void)ptr;                                                           \
        return no_gpu(#name);                                                            \
    }

UTC_GPU_STUB_COPY_(utc_gpu_data_put_host, const)
UTC_GPU_STUB_COPY_(utc_gpu_data_put_device, const)
UTC_GPU_STUB_COPY_(utc_gpu_data_fetch_host, )
UTC_GPU_STUB_COPY_(utc_gpu_data_fetch_device, )
UTC_GPU_STUB_OP_(utc_gpu_data_sync_host)
UTC_GPU_STUB_OP_(utc_gpu_data_sync_device)
UTC_GPU_STUB_OP_(utc_gpu_data_mark_host)
UTC_GPU_STUB_OP_(utc_gpu_data_mark_device)
UTC_GPU_STUB_OP_(utc_gpu_data_wait)
UTC_GPU_STUB_OP_(utc_gpu_data_reset_stats)

utc_status_t utc_gpu_data_stats(const utc_gpu_data_t *data, utc_gpu_data_stats_t *out)
{
    (void)data, (void)out;
    return no_gpu("utc_gpu_data_stats");
}

/* ---- overlapped pipelines: none without GPU support ---- */

utc_status_t utc_gpu_pipeline_create(const utc_gpu_pipeline_options_t *opts,
                                     utc_gpu_pipeline_t **out)
{
    (void)opts, (void)out;
    return no_gpu("utc_gpu_pipeline_create");
}

utc_status_t utc_gpu_pipeline_next(utc_gpu_pipeline_t *p, utc_gpu_item_t *item)
{
    (void)p, (void)item;
    return no_gpu("utc_gpu_pipeline_next");
}

utc_status_t utc_gpu_pipeline_done(utc_gpu_pipeline_t *p, const utc_gpu_item_t *item)
{
    (void)p, (void)item;
    return no_gpu("utc_gpu_pipeline_done");
}

void utc_gpu_pipeline_destroy(utc_gpu_pipeline_t *p) { (void)p; }

utc_status_t utc_gpu_pipeline_run(const utc_gpu_pipeline_options_t *opts,
                                  utc_gpu_kernel_fn kernel, void *arg, uint64_t *processed)
{
    (void)opts, (void)kernel, (void)arg;
    if (processed)
        *processed = 0;
    return no_gpu("utc_gpu_pipeline_run");
}

/* ---- the task extension: GPU tasks cannot be created ---- */

static utc_status_t stub_task_create(utc_task_t *task)
{
    const struct utc__task *t = task->impl;
    if (t->opts.kind == UTC_TASK_CPU)
        return UTC_OK;
    return utc__error(UTC_ERR_NO_GPU_SUPPORT,
                      "utc_task_create: task '%s' has GPU threads (kind %s), but UTC was built "
                      "without GPU support (configure with a CUDA toolkit and UTC_WITH_CUDA=ON)",
                      utc__text_name(t->ops ? t->ops->name : NULL),
                      t->opts.kind == UTC_TASK_GPU ? "UTC_TASK_GPU" : "UTC_TASK_MIXED");
}

static void stub_task_destroy(utc_task_t *task) { (void)task; }
static utc_status_t stub_thread_start(utc_ctx_t *ctx)
{
    (void)ctx;
    return UTC_OK;
}
static void stub_thread_stop(utc_ctx_t *ctx) { (void)ctx; }

const utc__task_ext_t utc__gpu_ext = {
    .name = "gpu",
    .create = stub_task_create,
    .destroy = stub_task_destroy,
    .thread_start = stub_thread_start,
    .thread_stop = stub_thread_stop,
};

utc_status_t utc_gpu_malloc(size_t size, void **out)
{
    (void)size;
    (void)out;
    return no_gpu("utc_gpu_malloc");
}

utc_status_t utc_gpu_free(void *ptr)
{
    (void)ptr;
    return no_gpu("utc_gpu_free");
}
