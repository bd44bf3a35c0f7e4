/*
 * blackscholes.c — `tessera run blackscholes`: price a book of European
 * options on the tiles face (docs/tiles.md).  Under mpirun each rank holds a
 * contiguous share of the options (or rank --data-on holds them all); the
 * prices are gathered and written by rank 0.  An --input file is read by
 * region as tiles need it and --output written at each tile's place as it
 * finishes (tile_stream.h), unless --in-memory or --data-on asks for the
 * whole input first.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "blackscholes.h"
#include "tile_app.h"
#include "tile_stream.h"

#define BS_APP "blackscholes"

static const char bs_usage[] =
    "usage: tessera run blackscholes (--options N [--seed S] [--save-input FILE] | --input FILE)\n"
    "         [--output FILE]"
    " [--iterations K] [--riskfree R] [--volatility V] [--min-tile C] [--max-tile C]\n"
    "         [tiles options] [--help]\n"
    "  Prices European call and put options with the Black-Scholes formula of the CUDA\n"
    "  SDK sample (single precision).  --input: records of 3 little-endian float32 (stock\n"
    "  price, strike, years); without it N options are generated from --seed (price\n"
    "  5-30, strike 1-100, years 0.25-10), which --save-input writes as an --input file.\n"
    "  --output: records of 2 float32 (call, put) in\n"
    "  option order.  --iterations K prices each option K times (the compute/communication\n"
    "  ratio knob; the output is that of K=1).  Riskfree rate 0.02, volatility 0.30 by\n"
    "  default.  Tiles hold between --min-tile (64) and --max-tile (all) options.\n"
    "  --input is read by region as tiles need it and --output written as tiles\n"
    "  finish (memory holds the tiles in flight), unless --in-memory or --data-on.\n" APP_TILE_CLI_USAGE;

typedef struct bs_opts {
    long options, iterations, min_tile, max_tile;
    long seed;
    double riskfree, volatility;
    const char *input, *output, *save_input;
    app_tile_cli tile;
} bs_opts;

typedef struct bs_app {
    bs_opts o;
    bs_params params;
    tess_tile_job job;
    float *in, *out;
    int stream_out;     /* rank 0 writes --output as tiles finish */
    app_tile_sink sink; /* then: where */
} bs_app;

/* ---------------------------------------------------------------- options */

static int set_value(void *opts, const char *name, const char *value)
{
    bs_opts *o = opts;
    if (strcmp(name, "options") == 0)
        return app_parse_int(BS_APP, name, value, 1, 1L << 40, &o->options);
    if (strcmp(name, "seed") == 0) return app_parse_int(BS_APP, name, value, 0, LONG_MAX, &o->seed);
    if (strcmp(name, "iterations") == 0)
        return app_parse_int(BS_APP, name, value, 1, 1000000, &o->iterations);
    if (strcmp(name, "min-tile") == 0)
        return app_parse_int(BS_APP, name, value, 1, 1L << 40, &o->min_tile);
    if (strcmp(name, "max-tile") == 0)
        return app_parse_int(BS_APP, name, value, 1, 1L << 40, &o->max_tile);
    if (strcmp(name, "riskfree") == 0)
        return app_parse_double(BS_APP, name, value, -1.0, 1.0, &o->riskfree);
    if (strcmp(name, "volatility") == 0)
        return app_parse_double(BS_APP, name, value, 1e-6, 10.0, &o->volatility);
    if (strcmp(name, "input") == 0) o->input = value;
    else if (strcmp(name, "save-input") == 0) o->save_input = value;
    else o->output = value;
    return 0;
}

/* 0 ok, 1 --help printed, -1 usage error printed. */
static int parse(bs_opts *o, int argc, char **argv)
{
    static const char *const values[] = {"options",  "seed",       "iterations", "min-tile",
                                         "max-tile", "riskfree",   "volatility", "input",
                                         "output",   "save-input", NULL};
    *o = (bs_opts){.iterations = 1, .min_tile = 64, .riskfree = 0.02, .volatility = 0.30};
    app_tile_cli_init(&o->tile);
    int p = app_tile_cli_parse(&o->tile, BS_APP, bs_usage, argc, argv, values, NULL, set_value, o);
    if (p != 0) return p;
    if ((o->options > 0) == (o->input != NULL)) {
        app_error(BS_APP, "give either --options N or --input FILE (see --help)");
        return -1;
    }
    if (o->save_input && o->input) {
        app_error(BS_APP, "option --save-input: only with --options N");
        return -1;
    }
    if (o->max_tile > 0 && o->min_tile > o->max_tile) {
        app_error(BS_APP, "option --min-tile: %ld is larger than --max-tile %ld", o->min_tile,
                  o->max_tile);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- input */

/* The option count of --input: its size must be whole records. */
static int input_count(bs_app *a, int rank)
{
    struct stat st;
    int found = stat(a->o.input, &st) == 0;
    if (!found || !S_ISREG(st.st_mode)) {
        /* errno only when stat failed: after a success it is whatever an
         * earlier call left there */
        if (rank == 0)
            app_error(BS_APP, "%s: %s", a->o.input, found ? "not a regular file" : strerror(errno));
        return -1;
    }
    if (st.st_size % BS_IN_BYTES != 0 || st.st_size == 0) {
        if (rank == 0)
            app_error(BS_APP, "%s: size %lld is not a multiple of %d bytes%s", a->o.input,
                      (long long)st.st_size, BS_IN_BYTES, st.st_size ? "" : " (empty)");
        return -1;
    }
    a->o.options = (long)(st.st_size / BS_IN_BYTES);
    return 0;
}

static int read_slab(bs_app *a, int64_t lo, int64_t hi, int rank)
{
    FILE *fp = fopen(a->o.input, "rb");
    size_t n = (size_t)(hi - lo) * 3;
    int ok = fp != NULL && fseeko(fp, (off_t)lo * BS_IN_BYTES, SEEK_SET) == 0 &&
             fread(a->in, sizeof(float), n, fp) == n;
    int err = errno;
    if (fp) fclose(fp);
    if (!ok && rank == 0)
        app_error(BS_APP, "cannot read %s: %s", a->o.input, err ? strerror(err) : "short file");
    return ok ? 0 : -1;
}

/* Read-ahead after a tile: its own length, at least this much (the
 * bootstrap's tiny tiles otherwise each waited for the disk, and a 10 ms
 * read ended the bootstrap at 512 options). */
#define BS_READ_AHEAD ((off_t)4 << 20)

/* The job's read() for a streamed --input: the tile's records, on the
 * processor's thread; the kernel is told to fetch the rows after them,
 * where this processor's next tile most likely starts. */
static int read_region(const tess_tile_box *box, void *buf, void *arg)
{
    const bs_params *p = arg;
    size_t len = (size_t)(box->hi[0] - box->lo[0]) * BS_IN_BYTES;
    off_t off = (off_t)box->lo[0] * BS_IN_BYTES;
    if (app_pread_full(p->in_fd, buf, len, off) != 0)
        return app_tile_input_error(p->ctx, p->in_path, errno);
    off_t ahead = (off_t)len > BS_READ_AHEAD ? (off_t)len : BS_READ_AHEAD;
    (void)posix_fadvise(p->in_fd, off + (off_t)len, ahead, POSIX_FADV_WILLNEED);
    return TESS_OK;
}

/* This rank's options: rows [lo, hi). */
static void my_slab(const bs_app *a, tess_ctx *ctx, int64_t *lo, int64_t *hi)
{
    int64_t n = a->o.options;
    int r = tess_rank(ctx), nr = tess_nranks(ctx);
    if (a->o.tile.data_on >= 0) { /* all on one rank, none elsewhere */
        *lo = 0;
        *hi = r == a->o.tile.data_on ? n : 0;
        return;
    }
    *lo = n * r / nr;
    *hi = n * (r + 1) / nr;
}

/* The input: read by region (streamed), or this rank's slab read or
 * generated now.  0, or -1 after rank 0 printed why. */
static int prepare_input(bs_app *a, tess_ctx *ctx, int64_t *lo, int64_t *hi)
{
    int rank = tess_rank(ctx);
    *lo = *hi = 0;
    if (a->o.input && !a->o.tile.in_memory && a->o.tile.data_on < 0)
        return app_tile_input_open(BS_APP, a->o.input, rank, &a->params.in_fd);
    my_slab(a, ctx, lo, hi);
    a->in = malloc((size_t)(*hi - *lo > 0 ? *hi - *lo : 1) * BS_IN_BYTES);
    if (a->in == NULL) {
        app_error(BS_APP, "out of memory for %ld options", a->o.options);
        return -1;
    }
    if (a->o.input) return *hi > *lo ? read_slab(a, *lo, *hi, rank) : 0;
    bs_generate((uint64_t)a->o.seed, *lo, *hi - *lo, a->in);
    return 0;
}

/* Rank 0's output: written as tiles finish, or the whole of it in memory. */
static int prepare_output(bs_app *a, tess_ctx *ctx)
{
    if (tess_rank(ctx) != 0) return 0;
    a->stream_out = app_tile_stream_output(&a->o.tile, a->o.output, 0);
    if (a->stream_out) return 0;
    a->out = malloc((size_t)a->o.options * BS_OUT_BYTES);
    if (a->out != NULL) return 0;
    app_error(BS_APP, "out of memory for %ld options", a->o.options);
    return -1;
}

static int prepare(tess_ctx *ctx, void *arg)
{
    bs_app *a = arg;
    int rank = tess_rank(ctx);
    if (app_tile_cli_check_data_on(&a->o.tile, ctx, BS_APP) != 0) return -1;
    if (a->o.input && input_count(a, rank) != 0) return -1;
    a->params = (bs_params){
        (float)a->o.riskfree, (float)a->o.volatility, (int)a->o.iterations, ctx, -1, a->o.input};
    int64_t lo, hi;
    if (prepare_input(a, ctx, &lo, &hi) != 0 || prepare_output(a, ctx) != 0) return -1;
    tess_tile_job *j = &a->job;
    *j = (tess_tile_job){.name = BS_APP,
                         .ndims = 1,
                         .in_bytes = BS_IN_BYTES,
                         .out_bytes = BS_OUT_BYTES,
                         .arg = &a->params,
                         .input = a->in,
                         .input_lo = lo,
                         .input_hi = hi,
                         .read = a->params.in_fd >= 0 ? read_region : NULL,
                         .output = a->out};
    j->extent[0] = a->o.options;
    j->min_tile[0] = a->o.min_tile < a->o.options ? a->o.min_tile : a->o.options;
    j->max_tile[0] = a->o.max_tile > 0 ? a->o.max_tile : a->o.options;
    if (j->max_tile[0] < j->min_tile[0]) j->min_tile[0] = j->max_tile[0];
    j->kernel[TESS_TILE_CPU] = bs_kernel_cpu;
    j->kernel[TESS_TILE_OPENCL] = bs_kernel_opencl;
    j->kernel[TESS_TILE_CUDA] = bs_kernel_cuda;
    app_tile_sink_init(&a->sink, ctx, j, a->o.output, 0);
    if (a->stream_out) {
        j->write = app_tile_sink_write;
        j->write_arg = &a->sink;
    }
    int rc = tess_tile_register(ctx, j);
    if (rc != TESS_OK && rank == 0) app_error(BS_APP, "%s", tess_last_error(ctx));
    return rc == TESS_OK ? 0 : -1;
}

/* ---------------------------------------------------------------- run */

/* A streamed --output: its tiles go there as they finish. */
static void output_opened(void *arg, FILE *fp)
{
    bs_app *a = arg;
    if (a->stream_out) a->sink.fd = fileno(fp);
}

static int write_prices(const void *arg, FILE *fp)
{
    const bs_app *a = arg;
    if (a->stream_out) return 0; /* written during the run */
    size_t n = (size_t)a->o.options * 2;
    return fwrite(a->out, sizeof(float), n, fp) == n ? 0 : -1;
}

/* --save-input: the generated options, a million at a time (any size
 * fits in little memory). */
static int write_input(const void *arg, FILE *fp)
{
    const bs_app *a = arg;
    enum { CHUNK = 1 << 20 };
    float *buf = malloc((size_t)CHUNK * BS_IN_BYTES);
    int rc = buf ? 0 : -1;
    for (int64_t i = 0; rc == 0 && i < a->o.options; i += CHUNK) {
        int64_t n = a->o.options - i < CHUNK ? a->o.options - i : CHUNK;
        bs_generate((uint64_t)a->o.seed, i, n, buf);
        rc = fwrite(buf, BS_IN_BYTES, (size_t)n, fp) == (size_t)n ? 0 : -1;
    }
    free(buf);
    return rc;
}

static double priced(const void *arg)
{
    const bs_app *a = arg;
    return (double)a->o.options * (double)a->o.iterations;
}

static void release(void *arg)
{
    bs_app *a = arg;
    free(a->in);
    free(a->out);
    if (a->params.in_fd >= 0) close(a->params.in_fd);
}

/* Options that change no output (a checkpoint's identity leaves them out),
 * and the input files (their content is part of it). */
static const char *const no_identity[] = {"output",   "iterations", "min-tile",
                                          "max-tile", "save-input", NULL};
static const char *const input_files[] = {"input", NULL};

int blackscholes_main(int argc, char **argv)
{
    bs_app a = {.params.in_fd = -1};
    int p = parse(&a.o, argc, argv);
    if (p != 0) return p > 0 ? 0 : 2;
    app_tile_spec spec = {.name = BS_APP,
                          .what = "options",
                          .app = &a,
                          .cli = &a.o.tile,
                          .job = &a.job,
                          .seed = (uint64_t)a.o.seed,
                          .files = {{a.o.output, write_prices, 0, output_opened, "output"},
                                    {a.o.save_input, write_input, 1, NULL, "save-input"}},
                          .inputs = {a.o.input},
                          .input_options = {"input"},
                          .prepare = prepare,
                          .units = priced,
                          .release = release,
                          .identity_skip = no_identity,
                          .identity_files = input_files};
    return app_tile_main(&spec);
}
