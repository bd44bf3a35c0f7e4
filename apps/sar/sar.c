/*
 * sar.c — `tessera run sar`: form a radar image by backprojection on the
 * tiles face (docs/tiles.md).  The scene (pulses) is small and every rank
 * holds all of it; the work area is the image, gathered on rank 0, which
 * writes each tile into --output as it arrives (tile_stream.h) unless
 * --image or --in-memory needs the whole image.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sar.h"
#include "tile_app.h"
#include "tile_stream.h"

#define SAR_APP "sar"
#define SAR_IMAGE_HEADER 12 /* --output: "TSIM", u32 width, u32 height */

static const char sar_usage[] =
    "usage: tessera run sar (--gen P:B:W:H[:SEED] | --input FILE) [--output FILE]\n"
    "         [--image FILE.png] [--save-scene FILE] [tiles options] [--help]\n"
    "  Forms a W x H radar image by backprojection of P range-compressed pulses of B\n"
    "  bins (the PERFECT suite's formulation: distance and phase in double precision,\n"
    "  accumulation in complex float).  --input: a TSAR scene file (docs/tiles.md);\n"
    "  --gen: a synthetic scene (a straight flight path, a few point scatterers and\n"
    "  noise), which --save-scene writes as a TSAR file.  --output: magic TSIM, u32 W,\n"
    "  u32 H, then W*H complex64 row-major.  --image: 20*log10(|pixel|/max) clipped to\n"
    "  [-60, 0] dB as a grayscale PNG.  Without --image, --output is written as tiles\n"
    "  finish (memory holds the tiles in flight) unless --in-memory.\n" APP_TILE_CLI_USAGE;

typedef struct sar_opts {
    const char *gen, *input, *output, *image, *save_scene;
    uint32_t gen_size[4];
    long seed;
    app_tile_cli tile;
} sar_opts;

typedef struct sar_app {
    sar_opts o;
    sar_scene scene;
    tess_tile_job job;
    float *out;
    int stream_out;     /* rank 0 writes --output as tiles finish */
    app_tile_sink sink; /* then: where */
    size_t bright_at;   /* and the brightest pixel so far (the summary's) */
    double bright;
} sar_app;

/* ---------------------------------------------------------------- options */

/* "P:B:W:H[:SEED]" */
static int parse_gen(sar_opts *o, const char *text)
{
    static const app_int_field fields[5] = {{"pulses", 1, 1L << 20},
                                            {"bins", 2, 1L << 24},
                                            {"width", 1, 1L << 20},
                                            {"height", 1, 1L << 20},
                                            {"seed", 0, 1L << 62}};
    long v[5];
    int n = app_parse_int_fields(SAR_APP, "gen", "P:B:W:H[:SEED]", text, fields, 5, 4, v);
    if (n < 0) return -1;
    for (int i = 0; i < 4; i++) o->gen_size[i] = (uint32_t)v[i];
    if (n == 5) o->seed = v[4];
    if ((uint64_t)o->gen_size[0] * o->gen_size[1] > (1ull << 28) ||
        (uint64_t)o->gen_size[2] * o->gen_size[3] > (1ull << 32)) {
        app_error(SAR_APP, "option --gen: '%s' is too large (P*B <= 2^28, W*H <= 2^32)", text);
        return -1;
    }
    o->gen = text;
    return 0;
}

static int set_value(void *opts, const char *name, const char *value)
{
    sar_opts *o = opts;
    if (strcmp(name, "gen") == 0) return parse_gen(o, value);
    if (strcmp(name, "input") == 0) o->input = value;
    else if (strcmp(name, "output") == 0) o->output = value;
    else if (strcmp(name, "image") == 0) o->image = value;
    else o->save_scene = value;
    return 0;
}

static int parse(sar_opts *o, int argc, char **argv)
{
    static const char *const values[] = {"gen", "input", "output", "image", "save-scene", NULL};
    memset(o, 0, sizeof *o);
    app_tile_cli_init(&o->tile);
    int p =
        app_tile_cli_parse(&o->tile, SAR_APP, sar_usage, argc, argv, values, NULL, set_value, o);
    if (p != 0) return p;
    if ((o->gen != NULL) == (o->input != NULL)) {
        app_error(SAR_APP, "give either --gen P:B:W:H[:SEED] or --input FILE (see --help)");
        return -1;
    }
    if (o->tile.data_on >= 0) {
        app_error(SAR_APP, "option --data-on: the scene is on every rank (it is small)");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- setup */

static int load_scene(sar_app *a, int rank)
{
    char err[512];
    if (a->o.input) {
        if (sar_read(a->o.input, &a->scene, err, sizeof err) == 0) return 0;
        if (rank == 0) app_error(SAR_APP, "%s", err);
        return -1;
    }
    double targets[16];
    int nt;
    const uint32_t *g = a->o.gen_size;
    if (sar_generate(g[0], g[1], g[2], g[3], (uint64_t)a->o.seed, &a->scene, targets, &nt) == 0)
        return 0;
    if (rank == 0) app_error(SAR_APP, "out of memory for the scene of --gen %s", a->o.gen);
    return -1;
}

/* The job's write() for a streamed --output: note the brightest pixel (the
 * first in row-major order among equals, as brightest() finds it), then
 * write the tile at its place. */
static int write_tile(const tess_tile_box *box, const void *out, void *arg)
{
    sar_app *a = arg;
    const float *v = out;
    for (int64_t y = box->lo[0]; y < box->hi[0]; y++)
        for (int64_t x = box->lo[1]; x < box->hi[1]; x++, v += 2) {
            double m = hypot(v[0], v[1]);
            size_t at = (size_t)y * a->scene.width + (size_t)x;
            if (m > a->bright || (m == a->bright && m > 0 && at < a->bright_at))
                a->bright = m, a->bright_at = at;
        }
    return app_tile_sink_write(box, out, &a->sink);
}

static int prepare(tess_ctx *ctx, void *arg)
{
    sar_app *a = arg;
    int rank = tess_rank(ctx);
    if (load_scene(a, rank) != 0) return -1;
    const sar_scene *s = &a->scene;
    size_t pixels = (size_t)s->width * s->height;
    a->stream_out =
        rank == 0 && app_tile_stream_output(&a->o.tile, a->o.output, a->o.image != NULL);
    if (rank == 0 && !a->stream_out && (a->out = malloc(pixels * SAR_PIXEL_BYTES)) == NULL) {
        app_error(SAR_APP, "out of memory for a %u x %u image", s->width, s->height);
        return -1;
    }
    tess_tile_job *j = &a->job;
    *j = (tess_tile_job){.name = SAR_APP,
                         .ndims = 2,
                         .in_bytes = 0,
                         .out_bytes = SAR_PIXEL_BYTES,
                         .arg = &a->scene,
                         .output = a->out};
    j->extent[0] = j->max_tile[0] = s->height;
    j->extent[1] = j->max_tile[1] = s->width;
    j->min_tile[0] = j->min_tile[1] = 1;
    j->kernel[TESS_TILE_CPU] = sar_kernel_cpu;
    j->kernel[TESS_TILE_OPENCL] = sar_kernel_opencl;
    j->kernel[TESS_TILE_CUDA] = sar_kernel_cuda;
    app_tile_sink_init(&a->sink, ctx, j, a->o.output, SAR_IMAGE_HEADER);
    if (a->stream_out) {
        j->write = write_tile;
        j->write_arg = a;
    }
    if (tess_tile_register(ctx, j) == TESS_OK) return 0;
    if (rank == 0) app_error(SAR_APP, "%s", tess_last_error(ctx));
    return -1;
}

/* ---------------------------------------------------------------- outputs */

/* A streamed --output: its tiles go there as they finish. */
static void output_opened(void *arg, FILE *fp)
{
    sar_app *a = arg;
    if (a->stream_out) a->sink.fd = fileno(fp);
}

static int write_image_file(const void *arg, FILE *fp)
{
    const sar_app *a = arg;
    uint8_t h[SAR_IMAGE_HEADER] = {'T', 'S', 'I', 'M'};
    uint32_t wh[2] = {a->scene.width, a->scene.height};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) h[4 + 4 * k + i] = (uint8_t)(wh[k] >> (8 * i));
    if (a->stream_out) /* the pixels were written during the run */
        return app_pwrite_full(fileno(fp), h, sizeof h, 0);
    size_t n = 2 * (size_t)wh[0] * wh[1];
    return fwrite(h, 1, sizeof h, fp) == sizeof h && fwrite(a->out, sizeof(float), n, fp) == n ? 0
                                                                                               : -1;
}

/* The brightest pixel's index and magnitude. */
static size_t brightest(const sar_app *a, double *mag)
{
    size_t n = (size_t)a->scene.width * a->scene.height, best = 0;
    *mag = 0;
    if (a->stream_out) { /* noted as the tiles went by */
        *mag = a->bright;
        return a->bright_at;
    }
    for (size_t i = 0; i < n; i++) {
        double m = hypot(a->out[2 * i], a->out[2 * i + 1]);
        if (m > *mag) *mag = m, best = i;
    }
    return best;
}

/* 20*log10(|pixel|/max) in [-60, 0] dB as 0..255. */
static int write_png(const void *arg, FILE *fp)
{
    const sar_app *a = arg;
    size_t n = (size_t)a->scene.width * a->scene.height;
    uint8_t *gray = malloc(n);
    if (gray == NULL) return -1;
    double top;
    brightest(a, &top);
    for (size_t i = 0; i < n; i++) {
        double m = hypot(a->out[2 * i], a->out[2 * i + 1]);
        double db = top > 0 && m > 0 ? 20 * log10(m / top) : -60;
        if (db < -60) db = -60;
        gray[i] = (uint8_t)lround((db + 60) / 60 * 255);
    }
    int rc = app_png_write(fp, (int)a->scene.width, (int)a->scene.height, 1, gray);
    free(gray);
    return rc;
}

static int write_scene(const void *arg, FILE *fp)
{
    return sar_write(&((const sar_app *)arg)->scene, fp);
}

/* ---------------------------------------------------------------- run */

static double pixel_pulses(const void *arg)
{
    const sar_scene *s = &((const sar_app *)arg)->scene;
    return (double)s->width * s->height * s->pulses;
}

static void print_brightest(const void *arg)
{
    const sar_app *a = arg;
    const sar_scene *s = &a->scene;
    double mag;
    size_t at = brightest(a, &mag);
    fprintf(stderr, "sar: %u x %u image from %u pulses; brightest pixel (%zu, %zu), |v| %.4g\n",
            s->width, s->height, s->pulses, at % s->width, at / s->width, mag);
}

static void release(void *arg)
{
    sar_app *a = arg;
    sar_free(&a->scene);
    free(a->out);
}

/* Options that change no output (a checkpoint's identity leaves them out),
 * and the input files (their content is part of it). */
static const char *const no_identity[] = {"output", "image", "save-scene", NULL};
static const char *const input_files[] = {"input", NULL};

int sar_main(int argc, char **argv)
{
    sar_app a = {0};
    int p = parse(&a.o, argc, argv);
    if (p != 0) return p > 0 ? 0 : 2;
    app_tile_spec spec = {.name = SAR_APP,
                          .what = "pixel-pulses",
                          .app = &a,
                          .cli = &a.o.tile,
                          .job = &a.job,
                          .seed = (uint64_t)a.o.seed,
                          .files = {{a.o.output, write_image_file, 0, output_opened, "output"},
                                    {a.o.image, write_png, 0, NULL, "image"},
                                    {a.o.save_scene, write_scene, 1, NULL, "save-scene"}},
                          .inputs = {a.o.input},
                          .input_options = {"input"},
                          .prepare = prepare,
                          .units = pixel_pulses,
                          .after = print_brightest,
                          .release = release,
                          .identity_skip = no_identity,
                          .identity_files = input_files};
    return app_tile_main(&spec);
}
