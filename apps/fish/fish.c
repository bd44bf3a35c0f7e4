/*
 * fish.c — `tessera run fish`: the fish school of Couzin et al. 2005 on the
 * tick face (DESIGN §6, docs/fish.md).  The state is the particles class;
 * the model is in fish_model.c, the query functions and PART in
 * fish_part.c.  This file parses the options, runs the ticks and writes the
 * dump (40-byte little-endian records sorted by id) and the metrics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "fish.h"
#include "tick_app.h"

#define APP "fish"

typedef struct fish_app {
    long count;
    double informed;
    fish_params params;
    const char *dump_path;
    app_tick_cli cli;
    fish_model model;
    tess_particle_fns fns;
    tess_tick_app tick;
} fish_app;

static const char usage[] =
    "usage: tessera run fish --fish N --informed FRAC --ticks T [--dump FILE] [OPTIONS]\n"
    "\n"
    "The fish school of Couzin et al. 2005 on the tick face: N fish start uniformly\n"
    "in a disc of radius sqrt(N); fish 0 .. round(FRAC*N)-1 prefer the direction\n"
    "(1, 0).  See docs/fish.md for the exact model.\n"
    "\n"
    "  --fish N             number of fish (>= 1)\n"
    "  --informed FRAC      fraction of informed fish, in [0, 1]\n"
    "  --dump FILE          the final state: per fish, by id, 40 bytes little-endian\n"
    "                       (id u64, x, y, vx, vy f64), no header\n"
    "model (defaults in brackets):\n"
    "  --alpha A            zone of repulsion [1]\n"
    "  --rho R              zone of attraction and alignment, >= alpha [6]\n"
    "  --speed S            speed [1]\n"
    "  --theta T            maximal turning rate, rad/s [2]\n"
    "  --sigma S            standard deviation of the angular noise, rad [0.01]\n"
    "  --omega W            weight of the preferred direction [0.5]\n"
    "  --dt D               time step [0.2]\n"
    "\n";

/* ---------------------------------------------------------------- options */

static int check_options(fish_app *f, const int *seen)
{
    if (!seen[0] || !seen[1]) {
        app_error(APP, "option --%s: required", seen[0] ? "informed" : "fish");
        return -1;
    }
    if (f->params.alpha > f->params.rho) {
        app_error(APP, "option --alpha: must not exceed --rho (%g > %g)", f->params.alpha,
                  f->params.rho);
        return -1;
    }
    return app_tick_cli_check(APP, &f->cli);
}

/* 0 to run, 1 after --help, -1 after an error message.  This application's
 * options, each given at most once (the tick options are tick_cli's). */
static int parse(int argc, char **argv, fish_app *f)
{
    int seen[10] = {0};
    fish_params *p = &f->params;
    fish_params_default(p);
    const app_opt opts[] = {
        {"fish", APP_OPT_INT, &f->count, 1, 1e8, 0, &seen[0], NULL},
        {"informed", APP_OPT_DOUBLE, &f->informed, 0, 1, 0, &seen[1], NULL},
        {"dump", APP_OPT_TEXT, &f->dump_path, 0, 0, 0, &seen[2], NULL},
        {"alpha", APP_OPT_DOUBLE, &p->alpha, 0, 1e6, 0, &seen[3], NULL},
        {"rho", APP_OPT_DOUBLE, &p->rho, 1e-9, 1e6, 0, &seen[4], NULL},
        {"speed", APP_OPT_DOUBLE, &p->speed, 1e-9, 1e6, 0, &seen[5], NULL},
        {"theta", APP_OPT_DOUBLE, &p->theta, 0, 1e6, 0, &seen[6], NULL},
        {"sigma", APP_OPT_DOUBLE, &p->sigma, 0, 10, 0, &seen[7], NULL},
        {"omega", APP_OPT_DOUBLE, &p->omega, 0, 1e6, 0, &seen[8], NULL},
        {"dt", APP_OPT_DOUBLE, &p->dt, 1e-9, 1e3, 0, &seen[9], NULL},
    };
    int rc = app_tick_cli_parse(APP, &f->cli, usage, opts, (int)(sizeof opts / sizeof *opts), argc,
                                argv);
    if (rc != 0) return rc;
    /* the model's inputs, to the last bit: a checkpoint of others is refused */
    app_tick_cli_set_job(&f->cli,
                         "fish=%ld informed=%.17g alpha=%.17g rho=%.17g speed=%.17g theta=%.17g "
                         "sigma=%.17g omega=%.17g dt=%.17g",
                         f->count, f->informed, p->alpha, p->rho, p->speed, p->theta, p->sigma,
                         p->omega, p->dt);
    return check_options(f, seen);
}

/* ---------------------------------------------------------------- the application */

static void fish_setup(fish_app *f)
{
    fish_model_init(&f->model, &f->params, (uint64_t)f->count, f->informed);
    f->tick = fish_tick_app(&f->model, &f->fns, fish_part);
}

/* ---------------------------------------------------------------- outputs */

static int write_dump(void *arg, const tess_tick_result *res, FILE *fp)
{
    if (fp == NULL) return 0; /* no --dump */
    fish_app *f = arg;
    size_t n = (size_t)f->count;
    tess_particle *fish = malloc(n * sizeof *fish);
    if (fish == NULL) {
        app_error(APP, "out of memory for the dump");
        return -1;
    }
    int rc = tess_particles_unpack(res->final_state.data, res->final_state.len, n, fish);
    if (rc != 0) app_error(APP, "the final state is malformed (%s)", tess_strerror(rc));
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char rec[TESS_PARTICLE_BYTES];
        tess_particle_encode(&fish[i], rec);
        if (fwrite(rec, sizeof rec, 1, fp) != 1) {
            app_error(APP, "cannot write %s: %s", f->dump_path, strerror(errno ? errno : EIO));
            rc = -1;
        }
    }
    free(fish);
    return rc;
}

static void add_metrics(void *arg, app_metrics *m)
{
    const fish_app *f = arg;
    app_metrics_int(m, "fish", f->count);
    app_metrics_int(m, "informed", (int64_t)f->model.informed);
    app_metrics_num(m, "alpha", f->params.alpha);
    app_metrics_num(m, "rho", f->params.rho);
    app_metrics_num(m, "speed", f->params.speed);
    app_metrics_num(m, "theta", f->params.theta);
    app_metrics_num(m, "sigma", f->params.sigma);
    app_metrics_num(m, "omega", f->params.omega);
    app_metrics_num(m, "dt", f->params.dt);
}

static int64_t fish_count(void *arg) { return ((const fish_app *)arg)->count; }

static int prepare(tess_ctx *ctx, void *arg)
{
    (void)ctx;
    fish_setup(arg);
    return 0;
}

int fish_main(int argc, char **argv)
{
    fish_app f;
    memset(&f, 0, sizeof f);
    double start = tess_now();
    int rc = parse(argc, argv, &f);
    if (rc != 0) return rc > 0 ? 0 : 2;
    app_tick_spec spec = {.name = APP,
                          .app = &f,
                          .cli = &f.cli,
                          .tick = &f.tick,
                          .output_path = f.dump_path,
                          .output_option = "dump",
                          .start = start,
                          .prepare = prepare,
                          .write_output = write_dump,
                          .add_metrics = add_metrics,
                          .tuples = fish_count};
    return app_tick_main(&spec);
}
