/*
 * --farm: the dispatcher. Member i of the farm renders frame i first without asking (so
 * every member takes part, however late its threads start: a GPU member sets up its device
 * first); the dispatcher writes the frame numbers from there on (first, first + 1, ...) on
 * a share-mode shared conduit whose readers are the farm's raytrace tasks. A share-mode write waits until a
 * reader asks, and a raytrace task asks for its next frame when it reads one (the credit
 * window, 2 by default, keeps one frame ahead on its way), so frames go to whichever task
 * is free first: a slow task (a loaded node, a CPU beside a GPU) simply takes fewer. After the last frame it closes the stream; each raytrace task's next read
 * then returns UTC_ERR_CLOSED and the task ends.
 *
 * It is a task of its own (one thread, on the yuv task's rank), not part of yuv: yuv
 * blocks reading frames in order while the dispatcher blocks until a raytrace task asks,
 * and one thread doing both could wait on a raytrace task that waits on it.
 */
#include "pipeline.h"

static int dispatch_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    ryr_dispatch_task_t *t = (ryr_dispatch_task_t *)self;
    for (int f = t->first; f < t->pipe->frames; f++) {
        utc_status_t rc = utc_conduit_write(t->jobs, &f, sizeof f, 0);
        if (rc)
            return rc;
    }
    return utc_conduit_close(t->jobs);
}

const utc_task_ops_t ryr_dispatch_ops = {
    .name = "dispatch", .size = sizeof(ryr_dispatch_task_t), .run = dispatch_run};
