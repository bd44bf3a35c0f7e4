/*
 * blackscholes.c — `tessera run blackscholes`: price a book of European
 * options on the tiles face (docs/tiles.md).  Under mpirun each rank holds a
 * contiguous share of the options (or rank --data-on holds them all); the
 * prices are gathered and written by rank 0.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "blackscholes.h"
#include "tile_app.h"

#define BS_APP "blackscholes"

static const char bs_usage[] =
    "usage: tessera run blackscholes (--options N [--seed S] | --input FILE) [--output FILE]\n"
    "         [--iterations K] [--riskfree R] [--volatility V] [--min-tile C] [--max-tile C]\n"
    "         [tiles options] [--help]\n"
    "  Prices European call and put options with the Black-Scholes formula of the CUDA\n"
    "  SDK sample (single precision).  --input: records of 3 little-endian float32 (stock\n"
    "  price, strike, years); without it N options are generated from --seed (price\n"
    "  5-30, strike 1-100, years 0.25-10).  --output: records of 2 float32 (call, put) in\n"
    "  option order.  --iterations K prices each option K times (the compute/communication\n"
    "  ratio knob; the output is that of K=1).  Riskfree rate 0.02, volatility 0.30 by\n"
    "  default.  Tiles hold between --min-tile (64) and --max-tile (all) options.\n" APP_TILE_CLI_USAGE;

typedef struct bs_opts {
    long options, iterations, min_tile, max_tile;
    long seed;
    double riskfree, volatility;
    const char *input, *output;
    app_tile_cli tile;
} bs_opts;

typedef struct bs_app {
    bs_opts o;
    bs_params params;
    tess_tile_job job;
    float *in, *out;
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
    else o->output = value;
    return 0;
}

/* 0 ok, 1 --help printed, -1 usage error printed. */
static int parse(bs_opts *o, int argc, char **argv)
{
    static const char *const values[] = {"options",  "seed",     "iterations", "min-tile",
                                         "max-tile", "riskfree", "volatility", "input",
                                         "output",   NULL};
    *o = (bs_opts){.iterations = 1, .min_tile = 64, .riskfree = 0.02, .volatility = 0.30};
    app_tile_cli_init(&o->tile);
    int p = app_tile_cli_parse(&o->tile, BS_APP, bs_usage, argc, argv, values, NULL, set_value, o);
    if (p != 0) return p;
    if ((o->options > 0) == (o->input != NULL)) {
        app_error(BS_APP, "give either --options N or --input FILE (see --help)");
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

static int prepare(tess_ctx *ctx, void *arg)
{
    bs_app *a = arg;
    int rank = tess_rank(ctx);
    if (app_tile_cli_check_data_on(&a->o.tile, ctx, BS_APP) != 0) return -1;
    if (a->o.input && input_count(a, rank) != 0) return -1;
    int64_t lo, hi;
    my_slab(a, ctx, &lo, &hi);
    a->in = malloc((size_t)(hi - lo > 0 ? hi - lo : 1) * BS_IN_BYTES);
    if (rank == 0) a->out = malloc((size_t)a->o.options * BS_OUT_BYTES);
    if (a->in == NULL || (rank == 0 && a->out == NULL)) {
        app_error(BS_APP, "out of memory for %ld options", a->o.options);
        return -1;
    }
    if (a->o.input) {
        if (hi > lo && read_slab(a, lo, hi, rank) != 0) return -1;
    } else {
        bs_generate((uint64_t)a->o.seed, lo, hi - lo, a->in);
    }
    a->params =
        (bs_params){(float)a->o.riskfree, (float)a->o.volatility, (int)a->o.iterations, ctx};
    tess_tile_job *j = &a->job;
    *j = (tess_tile_job){.name = BS_APP,
                         .ndims = 1,
                         .in_bytes = BS_IN_BYTES,
                         .out_bytes = BS_OUT_BYTES,
                         .arg = &a->params,
                         .input = a->in,
                         .input_lo = lo,
                         .input_hi = hi,
                         .output = a->out};
    j->extent[0] = a->o.options;
    j->min_tile[0] = a->o.min_tile < a->o.options ? a->o.min_tile : a->o.options;
    j->max_tile[0] = a->o.max_tile > 0 ? a->o.max_tile : a->o.options;
    if (j->max_tile[0] < j->min_tile[0]) j->min_tile[0] = j->max_tile[0];
    j->kernel[TESS_TILE_CPU] = bs_kernel_cpu;
    j->kernel[TESS_TILE_OPENCL] = bs_kernel_opencl;
    j->kernel[TESS_TILE_CUDA] = bs_kernel_cuda;
    int rc = tess_tile_register(ctx, j);
    if (rc != TESS_OK && rank == 0) app_error(BS_APP, "%s", tess_last_error(ctx));
    return rc == TESS_OK ? 0 : -1;
}

/* ---------------------------------------------------------------- run */

static int write_prices(const void *arg, FILE *fp)
{
    const bs_app *a = arg;
    size_t n = (size_t)a->o.options * 2;
    return fwrite(a->out, sizeof(float), n, fp) == n ? 0 : -1;
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
}

/* Options that change no output (a checkpoint's identity leaves them out),
 * and the input files (their content is part of it). */
static const char *const no_identity[] = {"output", "iterations", "min-tile", "max-tile", NULL};
static const char *const input_files[] = {"input", NULL};

int blackscholes_main(int argc, char **argv)
{
    bs_app a = {0};
    int p = parse(&a.o, argc, argv);
    if (p != 0) return p > 0 ? 0 : 2;
    app_tile_spec spec = {.name = BS_APP,
                          .what = "options",
                          .app = &a,
                          .cli = &a.o.tile,
                          .job = &a.job,
                          .seed = (uint64_t)a.o.seed,
                          .files = {{a.o.output, write_prices}},
                          .prepare = prepare,
                          .units = priced,
                          .release = release,
                          .identity_skip = no_identity,
                          .identity_files = input_files};
    return app_tile_main(&spec);
}
