/*
 * texture.c — `tessera run texture`: texture features of a slide image per
 * block on the tiles face (docs/tiles.md).  An --image file is read by
 * band as tiles need it, on every rank, and the features are written as
 * tiles finish (texture_stream.c).  With --in-memory or --data-on (and
 * always for --gen) the whole image starts on one rank (--data-on, 0 by
 * default) and its blocks stream to the ranks that process them through
 * the storage layer; the features are gathered on rank 0.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tessera/tile_pipe.h"
#include "texture.h"
#include "tile_app.h"
#include "tile_stream.h"

#define TEX_APP "texture"

static const char tex_usage[] =
    "usage: tessera run texture (--image FILE | --gen W:H[:SEED]) [--block S] [--output FILE]\n"
    "         [--map FILE.png [--feature NAME]] [--save-image FILE.pgm] [tiles options]\n"
    "         [--help]\n"
    "  Texture features of an 8-bit grey image per block of S x S pixels (default 32;\n"
    "  partial blocks at the right and bottom edges are left out).  --image: a binary\n"
    "  PGM (P5) or PPM (P6, grey = (r+g+b)/3); --gen: a synthetic tissue-like slide,\n"
    "  which --save-image writes as a PGM.  Per block, 16 features: contrast,\n"
    "  dissimilarity, homogeneity, energy, correlation and asm of the grey-level\n"
    "  co-occurrence matrix (32 levels, offset one pixel right, symmetric, normalised),\n"
    "  then lbp0..lbp9, the rotation-invariant uniform LBP histogram (P=8, R=1).\n"
    "  --output: a line per block, row<TAB>col<TAB>16 features.  --map: a heat map of\n"
    "  --feature (default contrast).  An --image file is read by band as tiles need\n"
    "  it and --output written as tiles finish (memory holds the tiles in flight); with\n"
    "  --in-memory, --data-on R or --gen the image starts whole on rank R (default 0);\n"
    "  --map keeps every block's features in memory.\n"
    "  Two stages (docs/tiles.md, Pipelines): stage 1 makes each block's record (grey,\n"
    "  with its 1-pixel halo) from the image, stage 2 its features.\n"
    "    --stages 2          run both at once, connected by a bounded stream; the same\n"
    "                        output as one stage\n"
    "    --window MB         the stream's window (default 64)\n"
    "    --stage-processors A,B  stage 1 on A, stage 2 on B (default: --processors for\n"
    "                        both, or stage 1 on cpu and stage 2 on a cpu per core)\n"
    "    --stage 1 --output FILE     stage 1 alone: the records file\n"
    "    --stage 2 --input FILE      stage 2 alone, from a records file\n"
    "  (embedded mode only, no checkpoints; --stats holds the last stage's)\n" APP_TILE_CLI_USAGE;

typedef struct tex_opts {
    const char *image, *gen, *output, *map, *save_image;
    const char *input; /* --stage 2: the records file */
    uint32_t gen_size[2];
    long seed, block;
    long stage, stages, window_mb; /* stage 0: both, as one job or --stages 2 */
    char *stage_procs[2];          /* --stage-processors A,B */
    int feature;
    int data_on_given;
    app_tile_cli tile;
} tex_opts;

typedef struct tex_app {
    tex_opts o;
    tex_params params;
    tex_image img;
    tess_tile_job job;
    tess_tile_job first;    /* --stages 2: stage 1 */
    app_tile_sink rec_sink; /* --stage 1: the records file */
    uint8_t *records;
    float *out;
    tex_reader src; /* the image read by band (params.src), fd -1 if not */
    int stream_out; /* rank 0 writes --output as tiles finish */
    tex_sink sink;  /* then: through this */
} tex_app;

/* ---------------------------------------------------------------- options */

static int parse_gen(tex_opts *o, const char *text)
{
    static const app_int_field fields[3] = {
        {"width", 1, 1L << 20}, {"height", 1, 1L << 20}, {"seed", 0, 1L << 62}};
    long v[3];
    int n = app_parse_int_fields(TEX_APP, "gen", "W:H[:SEED]", text, fields, 3, 2, v);
    if (n < 0) return -1;
    o->gen_size[0] = (uint32_t)v[0];
    o->gen_size[1] = (uint32_t)v[1];
    if (n == 3) o->seed = v[2];
    o->gen = text;
    return 0;
}

static int parse_feature(tex_opts *o, const char *name)
{
    for (int k = 0; k < TEX_FEATURES; k++)
        if (strcmp(name, tex_feature_names[k]) == 0) {
            o->feature = k;
            return 0;
        }
    app_error(TEX_APP,
              "option --feature: unknown feature '%s' (contrast, dissimilarity, "
              "homogeneity, energy, correlation, asm, lbp0..lbp9)",
              name);
    return -1;
}

/* --stage-processors A,B: stage 1's processors, then stage 2's. */
static int parse_stage_procs(tex_opts *o, const char *text)
{
    const char *comma = strchr(text, ',');
    if (comma == NULL || comma == text || comma[1] == '\0' || strchr(comma + 1, ',')) {
        app_error(TEX_APP, "option --stage-processors: expected SPEC1,SPEC2, got '%s'", text);
        return -1;
    }
    free(o->stage_procs[0]);
    free(o->stage_procs[1]);
    o->stage_procs[0] = strndup(text, (size_t)(comma - text));
    o->stage_procs[1] = strdup(comma + 1);
    return o->stage_procs[0] && o->stage_procs[1] ? 0 : -1;
}

static int set_value(void *opts, const char *name, const char *value)
{
    tex_opts *o = opts;
    if (strcmp(name, "gen") == 0) return parse_gen(o, value);
    if (strcmp(name, "block") == 0) return app_parse_int(TEX_APP, name, value, 2, 4096, &o->block);
    if (strcmp(name, "feature") == 0) return parse_feature(o, value);
    if (strcmp(name, "stage") == 0) return app_parse_int(TEX_APP, name, value, 1, 2, &o->stage);
    if (strcmp(name, "stages") == 0) return app_parse_int(TEX_APP, name, value, 1, 2, &o->stages);
    if (strcmp(name, "window") == 0)
        return app_parse_int(TEX_APP, name, value, 1, 1L << 20, &o->window_mb);
    if (strcmp(name, "stage-processors") == 0) return parse_stage_procs(o, value);
    if (strcmp(name, "input") == 0) o->input = value;
    else if (strcmp(name, "image") == 0) o->image = value;
    else if (strcmp(name, "output") == 0) o->output = value;
    else if (strcmp(name, "map") == 0) o->map = value;
    else o->save_image = value;
    return 0;
}

/* --stage, --stages and what goes with them; 0 or -1 after printing why. */
static int stage_error(const char *why)
{
    app_error(TEX_APP, "%s", why);
    return -1;
}

static int check_stages(const tex_opts *o)
{
    int staged = o->stage > 0 || o->stages > 1;
    if (o->stage > 0 && o->stages > 1) return stage_error("give --stage or --stages, not both");
    if (staged && o->tile.ckpt_dir)
        return stage_error("option --checkpoint-dir: not supported with --stage or --stages yet");
    if (o->window_mb > 0 && o->stages < 2) return stage_error("option --window: needs --stages 2");
    if (o->stage_procs[0] && o->stages < 2)
        return stage_error("option --stage-processors: needs --stages 2");
    if ((o->input != NULL) != (o->stage == 2))
        return stage_error("option --input FILE (a records file) goes with --stage 2");
    if (o->stage == 2 && (o->image || o->gen || o->save_image))
        return stage_error("--stage 2 reads its records from --input, not an image");
    if (o->stage == 1 && (o->map || o->output == NULL))
        return stage_error("--stage 1 writes the records file --output FILE (and no --map)");
    return 0;
}

static int parse(tex_opts *o, int argc, char **argv)
{
    static const char *const values[] = {
        "image",  "gen",   "block",  "output",           "map", "feature", "save-image", "stage",
        "stages", "input", "window", "stage-processors", NULL};
    memset(o, 0, sizeof *o);
    o->block = 32;
    o->stages = 1;
    app_tile_cli_init(&o->tile);
    int p =
        app_tile_cli_parse(&o->tile, TEX_APP, tex_usage, argc, argv, values, NULL, set_value, o);
    if (p != 0) return p;
    if (check_stages(o) != 0) return -1;
    if (o->stage == 2) return 0; /* its input is the records file */
    if ((o->gen != NULL) == (o->image != NULL)) {
        app_error(TEX_APP, "give either --image FILE or --gen W:H[:SEED] (see --help)");
        return -1;
    }
    o->data_on_given = o->tile.data_on >= 0;
    if (o->tile.data_on < 0) o->tile.data_on = 0; /* the image starts on one rank */
    if (o->save_image && o->tile.data_on != 0) {
        app_error(TEX_APP, "option --save-image: needs the image on rank 0 (--data-on 0)");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- setup */

/* The image: all of it on the owner rank, its size elsewhere.  The owner
 * reports errors: its checks include the header checks of the others. */
static int load_image(tex_app *a, int owner)
{
    char err[512];
    if (a->o.image) {
        if (tex_read_pnm(a->o.image, !owner, &a->img, err, sizeof err) == 0) return 0;
        if (owner) app_error(TEX_APP, "%s", err);
        return -1;
    }
    a->img = (tex_image){.width = a->o.gen_size[0], .height = a->o.gen_size[1]};
    if (!owner || tex_generate(a->img.width, a->img.height, (uint64_t)a->o.seed, &a->img) == 0)
        return 0;
    app_error(TEX_APP, "out of memory for a %u x %u image", a->img.width, a->img.height);
    return -1;
}

static int make_params(tex_app *a, int rank)
{
    tex_params *p = &a->params;
    p->block = (int)a->o.block;
    p->width = a->img.width;
    p->height = a->img.height;
    p->grid_w = p->width / (uint32_t)p->block;
    p->grid_h = p->height / (uint32_t)p->block;
    if (p->grid_w > 0 && p->grid_h > 0) return 0;
    if (rank == 0)
        app_error(TEX_APP, "option --block: %d is larger than the image (%u x %u)", p->block,
                  p->width, p->height);
    return -1;
}

static int make_records(tex_app *a, int owner)
{
    tex_params *p = &a->params;
    size_t cells = (size_t)(p->grid_w * p->grid_h);
    if (!owner) return 0;
    a->records = malloc(cells * tex_record_bytes(p->block));
    if (a->records == NULL) {
        app_error(TEX_APP, "out of memory for %zu blocks", cells);
        return -1;
    }
    tex_make_records(&a->img, p, 0, p->grid_h, a->records);
    if (a->o.save_image == NULL) { /* the records hold every pixel used */
        free(a->img.pixels);
        a->img.pixels = NULL;
    }
    return 0;
}

/* --stage 2: the records file written by --stage 1. */
static int records_input(tex_app *a, tess_ctx *ctx)
{
    char err[512];
    a->params.ctx = ctx;
    if (tex_records_open(a->o.input, &a->params, err, sizeof err) == 0) return 0;
    if (tess_rank(ctx) == 0) app_error(TEX_APP, "%s", err);
    return -1;
}

/* The image: read by band during the run (every rank opens the file), or
 * loaded whole on the owner rank and cut into records now. */
static int prepare_input(tex_app *a, tess_ctx *ctx)
{
    const tex_opts *o = &a->o;
    int rank = tess_rank(ctx), owner = rank == o->tile.data_on;
    if (o->stage == 2) return records_input(a, ctx);
    if (o->image && !o->tile.in_memory && !o->data_on_given && !o->save_image) {
        if (tex_reader_open(&a->src, ctx, o->image, TEX_APP) != 0) return -1;
        a->img = (tex_image){.width = a->src.head.width, .height = a->src.head.height};
        a->params.src = &a->src;
        return make_params(a, rank);
    }
    if (load_image(a, owner) != 0 || make_params(a, rank) != 0) return -1;
    if (o->stage == 1 || o->stages > 1) { /* stage 1's kernel cuts the records */
        a->params.pixels = a->img.pixels;
        return 0;
    }
    return make_records(a, owner);
}

/* Rank 0's features: written as tiles finish, or all of them in memory. */
static int prepare_output(tex_app *a, tess_ctx *ctx)
{
    if (tess_rank(ctx) != 0) return 0;
    a->stream_out = app_tile_stream_output(&a->o.tile, a->o.output, a->o.map != NULL);
    if (a->stream_out) return tex_sink_open(&a->sink, ctx, a->o.output, TEX_APP);
    size_t cells = (size_t)(a->params.grid_w * a->params.grid_h);
    if ((a->out = malloc(cells * TEX_OUT_BYTES)) != NULL) return 0;
    app_error(TEX_APP, "out of memory for the features of %zu blocks", cells);
    return -1;
}

/* The features job (a single-stage run's, or stage 2's). */
static void features_job(tex_app *a, int owner)
{
    tex_params *p = &a->params;
    tess_tile_job *j = &a->job;
    *j = (tess_tile_job){.name = TEX_APP,
                         .ndims = 2,
                         .in_bytes = tex_record_bytes(p->block),
                         .out_bytes = TEX_OUT_BYTES,
                         .arg = p,
                         .input = a->records,
                         .input_lo = 0,
                         .input_hi = owner ? p->grid_h : 0,
                         .read = p->src ? tex_read_records : NULL,
                         .output = a->out};
    if (a->stream_out) {
        j->write = tex_sink_write;
        j->write_arg = &a->sink;
    }
    j->extent[0] = j->max_tile[0] = p->grid_h;
    j->extent[1] = j->max_tile[1] = p->grid_w;
    j->min_tile[0] = j->min_tile[1] = 1;
    j->kernel[TESS_TILE_CPU] = tex_kernel_cpu;
    j->kernel[TESS_TILE_OPENCL] = tex_kernel_opencl;
    j->kernel[TESS_TILE_CUDA] = tex_kernel_cuda;
}

/* Stage 1's job: every block's record, from the image. */
static void records_job(tex_app *a, tess_tile_job *j)
{
    tex_params *p = &a->params;
    *j = (tess_tile_job){
        .name = "texture-records", .ndims = 2, .out_bytes = tex_record_bytes(p->block), .arg = p};
    j->extent[0] = j->max_tile[0] = p->grid_h;
    j->extent[1] = j->max_tile[1] = p->grid_w;
    j->min_tile[0] = j->min_tile[1] = 1;
    j->kernel[TESS_TILE_CPU] = tex_kernel_records;
}

/* The jobs of --stage 1, --stage 2 or --stages 2 (features_job made). */
static void stage_jobs(tex_app *a, tess_ctx *ctx)
{
    if (a->o.stage == 1) {
        records_job(a, &a->job);
        app_tile_sink_init(&a->rec_sink, ctx, &a->job, a->o.output, TEX_REC_HEADER);
        a->job.write = app_tile_sink_write;
        a->job.write_arg = &a->rec_sink;
    } else if (a->o.stage == 2) {
        a->job.read = tex_read_records_file;
    } else if (a->o.stages > 1) {
        records_job(a, &a->first);
        a->first.write = tess_tile_stream_write;
        a->job.read = tess_tile_stream_read;
    }
}

static int prepare(tess_ctx *ctx, void *arg)
{
    tex_app *a = arg;
    int rank = tess_rank(ctx);
    int staged = a->o.stage > 0 || a->o.stages > 1;
    if (staged && tess_nranks(ctx) > 1) {
        if (rank == 0)
            app_error(TEX_APP, "--stage and --stages run in embedded mode only for now (%d ranks)",
                      tess_nranks(ctx));
        return -1;
    }
    if (app_tile_cli_check_data_on(&a->o.tile, ctx, TEX_APP) != 0) return -1;
    if (prepare_input(a, ctx) != 0) return -1;
    if (a->o.stage != 1 && prepare_output(a, ctx) != 0) return -1;
    int owner = rank == a->o.tile.data_on && a->params.src == NULL; /* of the whole image */
    features_job(a, owner && !staged);
    stage_jobs(a, ctx);
    int rc = a->o.stages > 1 ? tess_tile_register(ctx, &a->first) : TESS_OK;
    if (rc == TESS_OK) rc = tess_tile_register(ctx, &a->job);
    if (rc == TESS_OK) return 0;
    if (rank == 0) app_error(TEX_APP, "%s", tess_last_error(ctx));
    return -1;
}

/* ---------------------------------------------------------------- outputs */

/* --stage 1: the records went to their places as tiles finished; the
 * header last. */
static int write_records_header(const void *arg, FILE *fp)
{
    const tex_app *a = arg;
    uint8_t h[TEX_REC_HEADER];
    tex_records_header(&a->params, h);
    return app_pwrite_full(fileno(fp), h, sizeof h, 0);
}

static void records_opened(void *arg, FILE *fp)
{
    tex_app *a = arg;
    a->rec_sink.fd = fileno(fp);
}

static int write_features(const void *arg, FILE *fp)
{
    const tex_app *a = arg;
    if (a->stream_out) /* the run is over: the sink is rank 0's alone to sort */
        return tex_sink_finish((tex_sink *)&a->sink, fp);
    const tex_params *p = &a->params;
    const float *f = a->out;
    char line[TEX_LINE_MAX];
    for (int64_t by = 0; by < p->grid_h; by++)
        for (int64_t bx = 0; bx < p->grid_w; bx++, f += TEX_FEATURES) {
            size_t n = tex_format_line(line, by, bx, f);
            if (fwrite(line, 1, n, fp) != n) return -1;
        }
    return ferror(fp) ? -1 : 0;
}

/* A dark-blue .. cyan .. yellow .. red ramp for t in [0, 1]. */
static void heat_colour(double t, uint8_t rgb[3])
{
    static const double stops[5][3] = {
        {20, 20, 90}, {30, 140, 200}, {120, 200, 120}, {250, 220, 60}, {200, 30, 30}};
    double x = (t < 0 ? 0 : t > 1 ? 1 : t) * 4;
    int i = x >= 4 ? 3 : (int)x;
    double w = x - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround((1 - w) * stops[i][c] + w * stops[i + 1][c]);
}

/* One square of k x k pixels per block, k so that the map is about 1024 wide. */
static int write_map(const void *arg, FILE *fp)
{
    const tex_app *a = arg;
    const tex_params *p = &a->params;
    int64_t side = p->grid_w > p->grid_h ? p->grid_w : p->grid_h;
    int k = side >= 1024 ? 1 : (int)(1024 / side);
    if (k > p->block) k = p->block;
    size_t mw = (size_t)p->grid_w * k, mh = (size_t)p->grid_h * k, cells = p->grid_w * p->grid_h;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < cells; i++) {
        double v = a->out[i * TEX_FEATURES + a->o.feature];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    uint8_t *rgb = malloc(mw * mh * 3);
    if (rgb == NULL) return -1;
    for (size_t y = 0; y < mh; y++)
        for (size_t x = 0; x < mw; x++) {
            double v = a->out[((y / k) * p->grid_w + x / k) * TEX_FEATURES + a->o.feature];
            heat_colour(hi > lo ? (v - lo) / (hi - lo) : 0.5, rgb + 3 * (y * mw + x));
        }
    int rc = app_png_write(fp, (int)mw, (int)mh, 3, rgb);
    free(rgb);
    return rc;
}

static int write_pgm(const void *arg, FILE *fp)
{
    const tex_app *a = arg;
    size_t n = (size_t)a->img.width * a->img.height;
    fprintf(fp, "P5\n%u %u\n255\n", a->img.width, a->img.height);
    return fwrite(a->img.pixels, 1, n, fp) == n ? 0 : -1;
}

/* ---------------------------------------------------------------- run */

static double blocks(const void *arg)
{
    const tex_params *p = &((const tex_app *)arg)->params;
    return (double)p->grid_w * (double)p->grid_h;
}

static void release(void *arg)
{
    tex_app *a = arg;
    free(a->img.pixels);
    free(a->records);
    free(a->out);
    tex_sink_free(&a->sink);
    if (a->src.fd >= 0) close(a->src.fd);
    if (a->params.records_fd >= 0) close(a->params.records_fd);
}

/* Options that change no output (a checkpoint's identity leaves them out),
 * and the input files (their content is part of it). */
static const char *const no_identity[] = {"output", "map", "feature", "save-image", NULL};
static const char *const input_files[] = {"image", NULL};

int texture_main(int argc, char **argv)
{
    tex_app a = {.src.fd = -1, .sink.fd = -1, .params.records_fd = -1};
    int p = parse(&a.o, argc, argv);
    if (p != 0) {
        free(a.o.stage_procs[0]);
        free(a.o.stage_procs[1]);
        return p > 0 ? 0 : 2;
    }
    app_tile_spec spec = {
        .name = TEX_APP,
        .what = "blocks",
        .app = &a,
        .cli = &a.o.tile,
        .job = &a.job,
        .seed = (uint64_t)a.o.seed,
        .files = {{a.o.output, a.o.stage == 1 ? write_records_header : write_features, 0,
                   a.o.stage == 1 ? records_opened : NULL, "output"},
                  {a.o.map, write_map, 0, NULL, "map"},
                  {a.o.save_image, write_pgm, 1, NULL, "save-image"}},
        .inputs = {a.o.image, a.o.input},
        .input_options = {"image", "input"},
        .prepare = prepare,
        .units = blocks,
        .release = release,
        .identity_skip = no_identity,
        .identity_files = input_files,
        .stages = (int)a.o.stages,
        .first_stage = &a.first,
        .window_bytes = (size_t)a.o.window_mb << 20,
        .stage_processors = {a.o.stage_procs[0], a.o.stage_procs[1]}};
    int rc = app_tile_main(&spec);
    free(a.o.stage_procs[0]);
    free(a.o.stage_procs[1]);
    return rc;
}
