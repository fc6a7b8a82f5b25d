/* cudahost: host versions of the RYR sample's kernels (apps/ryr/render_gpu.cu,
 * apps/ryr/pixel_kernels.cu). They run the rules the kernels run (render_rules.h with the
 * GPU renderer's loop form, yuv_rules.h, rotate_rules.h), built without contraction as the
 * C renderer is, so --verify holds here as on a GPU; what they prove is the GPU stages'
 * plumbing (streams, device buffers, device conduits), not the kernels' code on a GPU. */
#include "render_rules.h"
#include "rotate_rules.h"
#include "yuv_rules.h"

#include "cudahost.h"

/* One CUDA thread per pixel: x across the grid's x, rows y0 + across its y, up to y1. */
static void render_run(dim3 grid, dim3 block, void **a)
{
    ryr_trace_scene_t s = *(ryr_trace_scene_t *)a[0];
    const ryr_view_t *view = a[1];
    int w = *(int *)a[2], h = *(int *)a[3], y0 = *(int *)a[4], y1 = *(int *)a[5];
    unsigned char *out = ch_kernel_mem(*(unsigned char **)a[6], (size_t)(y1 - y0) * w * 3);
    s.spheres = ch_kernel_mem(s.spheres, sizeof(ryr_sphere_t) * (size_t)s.nspheres);
    long long xs = (long long)grid.x * block.x, ys = (long long)grid.y * block.y;
    for (int y = y0; y < y1 && y - y0 < ys; y++)
        for (int x = 0; x < w && x < xs; x++) {
            ryr_vec3_t col = ryr__trace_levels(&s, ryr__primary_ray(view, w, h, x, y));
            unsigned char *px = out + ((size_t)(y - y0) * w + x) * 3;
            px[0] = ryr__channel_byte(col.x);
            px[1] = ryr__channel_byte(col.y);
            px[2] = ryr__channel_byte(col.z);
        }
}

static void yuv_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    size_t n = *(size_t *)a[1];
    const uint8_t *rgb = ch_kernel_mem(*(const uint8_t **)a[0], 3 * n);
    uint8_t *planes = ch_kernel_mem(*(uint8_t **)a[2], 3 * n);
    for (size_t i = 0; i < n; i++)
        ryr__yuv_pixel(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &planes[i], &planes[n + i],
                       &planes[2 * n + i]);
}

static void rotate_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    ryr_rotation_t rot = *(ryr_rotation_t *)a[0];
    long long r0 = *(long long *)a[2], npix = *(long long *)a[3];
    if (npix <= 0)
        return;
    size_t plane = (size_t)rot.w * rot.h;
    long long last_plane = (r0 + (npix - 1) / rot.ow) / rot.oh;
    const uint8_t *src = ch_kernel_mem(*(const uint8_t **)a[1], plane * (size_t)(last_plane + 1));
    uint8_t *dst = ch_kernel_mem(*(uint8_t **)a[4], (size_t)npix);
    for (long long i = 0; i < npix; i++) {
        long long r = r0 + i / rot.ow;
        int x = (int)(i % rot.ow), p = (int)(r / rot.oh), y = (int)(r % rot.oh);
        dst[i] = ryr__rotate_pixel(rot, src + (size_t)p * plane, x, y);
    }
}

#define PTR sizeof(void *)
const ch_kernel_t ch_kernels_ryr[] = {
    {"render_kernel",
     "17ryr_trace_scene_t8ryr_viewiiiiPh",
     7,
     {sizeof(ryr_trace_scene_t), sizeof(ryr_view_t), sizeof(int), sizeof(int), sizeof(int),
      sizeof(int), PTR},
     render_run},
    {"yuv_kernel", "PKhmPh", 3, {PTR, sizeof(size_t), PTR}, yuv_run},
    {"rotate_kernel",
     "12ryr_rotationPKhxxPh",
     5,
     {sizeof(ryr_rotation_t), PTR, sizeof(long long), sizeof(long long), PTR},
     rotate_run},
    {0},
};
