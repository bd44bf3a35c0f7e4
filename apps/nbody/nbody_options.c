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
    "         [--checkpoint-dir DIR [--checkpoint-every K] [--restore]]\n"
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

static int opts_set_number(nbody_opts *o, const char *name, const char *value)
{
    if (strcmp(name, "particles") == 0)
        return app_parse_int(NB_APP, name, value, 1, 100000000, &o->particles);
    if (strcmp(name, "steps") == 0)
        return app_parse_int(NB_APP, name, value, 0, 10000000, &o->steps);
    if (strcmp(name, "seed") == 0) return app_parse_int(NB_APP, name, value, 0, 1L << 62, &o->seed);
    if (strcmp(name, "workers") == 0)
        return app_parse_int(NB_APP, name, value, 1, 4096, &o->workers);
    if (strcmp(name, "partitions") == 0)
        return app_parse_int(NB_APP, name, value, 1, NBODY_MAX_CELLS, &o->partitions);
    if (strcmp(name, "cutoff") == 0)
        return app_parse_double(NB_APP, name, value, 1e-9, 1e9, &o->cutoff);
    if (strcmp(name, "box") == 0) return app_parse_double(NB_APP, name, value, 1e-9, 1e12, &o->box);
    if (strcmp(name, "dt") == 0) return app_parse_double(NB_APP, name, value, 1e-12, 1e3, &o->dt);
    if (strcmp(name, "softening") == 0)
        return app_parse_double(NB_APP, name, value, 1e-9, 1e9, &o->softening);
    return app_parse_double(NB_APP, "vmax", value, 0.0, 1e9, &o->vmax);
}

static int opts_set_value(nbody_opts *o, const char *name, const char *value)
{
    if (strcmp(name, "input") == 0) o->input = value;
    else if (strcmp(name, "output") == 0) o->output = value;
    else if (strcmp(name, "metrics") == 0) o->metrics = value;
    else if (strcmp(name, "checkpoint-dir") == 0) o->ckpt.dir = value;
    else if (strcmp(name, "checkpoint-every") == 0)
        return app_ckpt_cli_parse_every(NB_APP, &o->ckpt, value);
    else return opts_set_number(o, name, value);
    return 0;
}

static int opt_takes_value(const char *name)
{
    static const char *const names[] = {
        "particles", "steps",          "cutoff",          "box",        "seed",  "dt",
        "softening", "vmax",           "workers",         "partitions", "input", "output",
        "metrics",   "checkpoint-dir", "checkpoint-every"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return 0;
}

/* A flag (no value); 0, or -1 if `name` is not one. */
static int opts_set_flag(nbody_opts *o, const char *name)
{
    if (strcmp(name, "progress") == 0) o->progress = APP_PROGRESS_ON;
    else if (strcmp(name, "quiet") == 0) o->progress = APP_PROGRESS_OFF;
    else if (strcmp(name, "restore") == 0) o->ckpt.restore = 1;
    else return -1;
    return 0;
}

/* One "--name[=value]" at argv[*i]; consumes its value argument. */
static int opts_one(nbody_opts *o, int argc, char **argv, int *i)
{
    char name[32];
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), arg);
    if (len < sizeof name && !eq && opts_set_flag(o, name) == 0) return 0;
    if (len >= sizeof name || !opt_takes_value(name)) {
        app_error(NB_APP, "unknown option '%s' (see --help)", argv[*i]);
        return -1;
    }
    const char *value = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!value) {
        app_error(NB_APP, "option --%s: missing value", name);
        return -1;
    }
    return opts_set_value(o, name, value);
}

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
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(nbody_usage, stdout);
            fputs(app_ckpt_cli_usage, stdout);
            return 1;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            app_error(NB_APP, "unexpected argument '%s' (see --help)", argv[i]);
            return -1;
        }
        if (opts_one(o, argc, argv, &i) != 0) return -1;
    }
    return opts_check(o, o->steps >= 0);
}
