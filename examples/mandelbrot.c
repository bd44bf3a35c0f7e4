/*
 * mandelbrot.c — the tiles face walkthrough (docs/tiles.md): the iteration
 * counts of a W x H view of the Mandelbrot set, one cell per pixel, on CPU
 * workers and, where OpenCL is, on an OpenCL device beside them.  Prints
 * the sum of the counts and the pixels inside the set; the CPU and OpenCL
 * kernels do the same float operations in the same order, so every
 * processor mix gives the same bits.
 *
 *   mandelbrot W H [PROCESSORS]     e.g. mandelbrot 640 480 cpu*2+opencl
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera/tile.h>
#if __has_include(<CL/cl.h>)
#include <tessera/tile_opencl.h>
#define HAVE_OPENCL 1
#endif

#define MAX_ITER 200

typedef struct view {
    float x0, y0, dx, dy; /* pixel (r, c) is the point x0 + c dx, y0 + r dy */
} view;

static uint32_t count(float cx, float cy)
{
    float x = 0, y = 0, x2 = 0, y2 = 0;
    uint32_t k = 0;
    while (x2 + y2 <= 4.0f && k < MAX_ITER) {
        y = (2.0f * x) * y + cy;
        x = (x2 - y2) + cx;
        x2 = x * x;
        y2 = y * y;
        k++;
    }
    return k;
}

static int mandel_cpu(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    const view *v = arg;
    uint32_t *o = out;
    (void)in, (void)dev;
    for (int64_t r = b->lo[0]; r < b->hi[0]; r++)
        for (int64_t c = b->lo[1]; c < b->hi[1]; c++)
            *o++ = count(v->x0 + (float)c * v->dx, v->y0 + (float)r * v->dy);
    return TESS_OK;
}

#ifdef HAVE_OPENCL
/* The same loop in OpenCL C: work-item i is cell i of the tile, row-major. */
static const char mandel_source[] =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "__kernel void mandel(__global uint *out, int n, long r0, long c0, long c1,\n"
    "                     float x0, float y0, float dx, float dy) {\n"
    "  int i = get_global_id(0); if (i >= n) return;\n"
    "  long r = r0 + i / (c1 - c0), c = c0 + i % (c1 - c0);\n"
    "  float cx = x0 + (float)c * dx, cy = y0 + (float)r * dy;\n"
    "  float x = 0, y = 0, x2 = 0, y2 = 0; uint k = 0;\n"
    "  while (x2 + y2 <= 4.0f && k < 200) {\n"
    "    y = (2.0f * x) * y + cy; x = (x2 - y2) + cx; x2 = x * x; y2 = y * y; k++;\n"
    "  }\n"
    "  out[i] = k;\n"
    "}\n";

/* The parameters after those `params` names: the view. */
static cl_int mandel_args(cl_kernel k, cl_uint next, const tess_tile_box *b, void *arg)
{
    const view *v = arg;
    (void)b;
    cl_int err = clSetKernelArg(k, next, sizeof v->x0, &v->x0);
    err |= clSetKernelArg(k, next + 1, sizeof v->y0, &v->y0);
    err |= clSetKernelArg(k, next + 2, sizeof v->dx, &v->dx);
    return err | clSetKernelArg(k, next + 3, sizeof v->dy, &v->dy);
}

static const tess_tile_opencl_kernel mandel_cl = {.source = mandel_source,
                                                  .name = "mandel",
                                                  .params = "out,cells,lo0,lo1,hi1",
                                                  .out_bytes = sizeof(uint32_t),
                                                  .args = mandel_args};

static int mandel_opencl(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    return tess_tile_opencl_run(&mandel_cl, b, in, out, dev, arg);
}
#endif

typedef struct program {
    tess_tile_job job;
    const char *processors;
} program;

static int control(tess_ctx *ctx, void *arg)
{
    program *p = arg;
    tess_tile_options opt = {.processors = p->processors};
    tess_tile_stats st;
    int rc = tess_tile_run(ctx, &p->job, &opt, &st);
    if (rc != TESS_OK) {
        fprintf(stderr, "mandelbrot: %s\n", tess_last_error(ctx));
        return rc;
    }
    const uint32_t *counts = p->job.output;
    uint64_t sum = 0, inside = 0;
    for (uint64_t i = 0; i < st.cells; i++) sum += counts[i], inside += counts[i] == MAX_ITER;
    printf("sum %llu inside %llu\n", (unsigned long long)sum, (unsigned long long)inside);
    tess_tile_stats_free(&st);
    return TESS_OK;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mandelbrot W H [PROCESSORS]\n");
        return 2;
    }
    int64_t w = atol(argv[1]), h = atol(argv[2]);
    view v = {-2.0f, -1.25f, 3.0f / (float)w, 2.5f / (float)h};
    program p = {.processors = argc > 3 ? argv[3] : NULL};
    p.job = (tess_tile_job){.name = "mandelbrot",
                            .ndims = 2,
                            .extent = {h, w},
                            .min_tile = {1, w},
                            .max_tile = {h, w}, /* whole rows */
                            .out_bytes = sizeof(uint32_t),
                            .arg = &v};
    p.job.kernel[TESS_TILE_CPU] = mandel_cpu;
#ifdef HAVE_OPENCL
    p.job.kernel[TESS_TILE_OPENCL] = mandel_opencl;
#endif
    tess_ctx *ctx;
    if (tess_init(NULL, &ctx) != TESS_OK) return 1;
    if (tess_rank(ctx) == 0) p.job.output = malloc((size_t)(w * h) * sizeof(uint32_t));
    int rc = tess_tile_register(ctx, &p.job);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &p);
    else fprintf(stderr, "mandelbrot: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    free(p.job.output);
    return rc == TESS_OK ? 0 : 1;
}
