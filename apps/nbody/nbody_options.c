/*
 * nbody_options.c — the command line of `tessera run nbody`.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nbody_app.h"

static const char nbody_usage[] =
    "usage: tessera run nbody (--particles N | --input FILE --box L) --steps T --cutoff R\n"
    "         [--box L] [--seed S] [--dt DT] [--softening EPS] [--vmax V]\n"
    "         [--workers W] [--partitions P] [--output FILE] [--metrics FILE]\n"
    "         [--checkpoint-dir DIR [--checkpoint-every K] [--restore]\n"
    "         [--checkpoint-overwrite]]\n"
    "         [--progress | --quiet] [--help]\n"
    "  Short-range n-body in a periodic box [0, L)^3: unit masses, particles closer\n"
    "  than R attract with the softened force d/(|d|^2+EPS^2)^1.5, leapfrog steps of\n"
    "  DT (default 0.001; EPS default 0.05).  --particles N generates N particles\n"
    "  (uniform positions, velocities uniform in [-V, V) with V default 1, zero total\n"
    "  momentum) from --seed (default 1); --input reads 'id x y z vx vy vz' lines.\n"
    "  L defaults to R * max(2, cbrt(N/8)), about 8 particles per R^3; R <= L/2.\n"
    "  Writes the final state, one particle per line by id (--output, else stdout).\n"
    "  The result is the same bits for every worker, rank and partition count, and\n"
    "  after a restore.  See docs/nbody.md.\n";

/* The box, given or derived: about 8 particles per R^3 and at least 2R. */
static int opts_box(nbody_opts *o, int have_steps)
{
    if (!have_steps || o->cutoff == 0.0) {
        app_error(NB_APP, "option --%s is required", !have_steps ? "steps" : "cutoff");
        return -1;
    }
    if (o->box == 0.0 && o->input) {
        app_error(NB_APP, "option --box is required with --input (positions lie in [0, L))");
        return -1;
    }
    if (o->box == 0.0) o->box = o->cutoff * fmax(2.0, cbrt((double)o->particles / 8.0));
    if (o->cutoff > 0.5 * o->box) {
        app_error(NB_APP, "option --cutoff: %g is more than half the box (%g)", o->cutoff, o->box);
        return -1;
    }
    return 0;
}

static int opts_check(nbody_opts *o, int have_steps)
{
    if ((o->particles > 0) == (o->input != NULL)) {
        app_error(NB_APP, "give exactly one of --particles N and --input FILE");
        return -1;
    }
    if (opts_box(o, have_steps) != 0) return -1;
    const char *const names[] = {"output", "metrics"};
    const char *const paths[] = {o->run.output, o->run.metrics};
    if (app_outputs_distinct(NB_APP, names, paths, 2) != 0) return -1;
    const char *const in_o[] = {"input"}, *const in_p[] = {o->input};
    if (app_outputs_spare_inputs(NB_APP, in_o, in_p, 1, names, paths, 2) != 0) return -1;
    return app_ckpt_cli_check(NB_APP, &o->ckpt);
}

static void opts_defaults(nbody_opts *o)
{
    memset(o, 0, sizeof *o);
    o->softening = 0.05;
    o->dt = 0.001;
    o->vmax = 1.0;
    o->seed = 1;
    o->steps = -1;
}

/* 0 to run, 1 after --help, -1 after an error message. */
int nbody_opts_parse(int argc, char **argv, nbody_opts *o)
{
    opts_defaults(o);
    const app_opt opts[] = {
        {"particles", APP_OPT_INT, &o->particles, 1, 100000000, 0, NULL, NULL},
        {"steps", APP_OPT_INT, &o->steps, 0, 10000000, 0, NULL, NULL},
        {"seed", APP_OPT_INT, &o->seed, 0, (double)(1L << 62), 0, NULL, NULL},
        {"cutoff", APP_OPT_DOUBLE, &o->cutoff, 1e-9, 1e9, 0, NULL, NULL},
        {"box", APP_OPT_DOUBLE, &o->box, 1e-9, 1e12, 0, NULL, NULL},
        {"dt", APP_OPT_DOUBLE, &o->dt, 1e-12, 1e3, 0, NULL, NULL},
        {"softening", APP_OPT_DOUBLE, &o->softening, 1e-9, 1e9, 0, NULL, NULL},
        {"vmax", APP_OPT_DOUBLE, &o->vmax, 0.0, 1e9, 0, NULL, NULL},
        {"input", APP_OPT_STRING, &o->input, 0, 0, 0, NULL, NULL},
    };
    int rc = app_run_parse(NB_APP, nbody_usage, &o->run, NBODY_MAX_CELLS, &o->ckpt, opts,
                           (int)(sizeof opts / sizeof *opts), argc, argv);
    return rc != 0 ? rc : opts_check(o, o->steps >= 0);
}
