/*
 * kmeans_options.c — the command line of `tessera run kmeans`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmeans_app.h"

static const char kmeans_usage[] =
    "usage: tessera run kmeans (--points FILE | --gen N:DIM:K[:SEED]) --k K --iterations I\n"
    "         [--workers W] [--partitions P] [--output FILE] [--assignments FILE]\n"
    "         [--metrics FILE] [--checkpoint-dir DIR [--checkpoint-every N] [--restore]]\n"
    "         [--progress | --quiet] [--help]\n"
    "  Lloyd's k-means from the first K points as initial centres.  Writes K lines of\n"
    "  DIM coordinates (--output, else stdout); --assignments writes one centre index\n"
    "  per point.  With --gen, --k defaults to the spec's K.  The centres depend on\n"
    "  the partition count P (default min(2 x workers in total, N)) in the last bits\n"
    "  only, and not on worker or rank counts.  See docs/kmeans.md.\n";

/* ---------------------------------------------------------------- options */

static int opts_set_value(kmeans_opts *o, const char *name, const char *value)
{
    char err[256];
    if (strcmp(name, "points") == 0) o->points_path = value;
    else if (strcmp(name, "gen") == 0) {
        if (kmeans_gen_parse(value, &o->gen, err, sizeof err) != 0) {
            app_error(KM_APP, "option --gen: %s", err);
            return -1;
        }
        o->have_gen = 1;
    } else if (strcmp(name, "k") == 0)
        return app_parse_int(KM_APP, "k", value, 1, KMEANS_MAX_K, &o->k);
    else if (strcmp(name, "iterations") == 0)
        return app_parse_int(KM_APP, "iterations", value, 1, 1000000, &o->iterations);
    else if (strcmp(name, "workers") == 0)
        return app_parse_int(KM_APP, "workers", value, 1, 4096, &o->workers);
    else if (strcmp(name, "partitions") == 0)
        return app_parse_int(KM_APP, "partitions", value, 1, 1 << 20, &o->partitions);
    else if (strcmp(name, "checkpoint-dir") == 0) o->ckpt.dir = value;
    else if (strcmp(name, "checkpoint-every") == 0)
        return app_ckpt_cli_parse_every(KM_APP, &o->ckpt, value);
    else if (strcmp(name, "output") == 0) o->output = value;
    else if (strcmp(name, "assignments") == 0) o->assignments = value;
    else o->metrics = value;
    return 0;
}

static int opt_takes_value(const char *name)
{
    static const char *const names[] = {
        "points", "gen",         "k",       "iterations",     "workers",         "partitions",
        "output", "assignments", "metrics", "checkpoint-dir", "checkpoint-every"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return 0;
}

/* A flag (no value); 0, or -1 if `name` is not one. */
static int opts_set_flag(kmeans_opts *o, const char *name)
{
    if (strcmp(name, "progress") == 0) o->progress = APP_PROGRESS_ON;
    else if (strcmp(name, "quiet") == 0) o->progress = APP_PROGRESS_OFF;
    else if (strcmp(name, "restore") == 0) o->ckpt.restore = 1;
    else return -1;
    return 0;
}

/* One "--name[=value]" at argv[*i]; consumes its value argument. */
static int opts_one(kmeans_opts *o, int argc, char **argv, int *i)
{
    char name[32];
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), arg);
    if (len < sizeof name && !eq && opts_set_flag(o, name) == 0) return 0;
    if (len >= sizeof name || !opt_takes_value(name)) {
        app_error(KM_APP, "unknown option '%s' (see --help)", argv[*i]);
        return -1;
    }
    const char *value = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!value) {
        app_error(KM_APP, "option --%s: missing value", name);
        return -1;
    }
    return opts_set_value(o, name, value);
}

static int opts_check(kmeans_opts *o)
{
    if (!o->points_path == !o->have_gen) {
        app_error(KM_APP, "give exactly one of --points FILE and --gen N:DIM:K[:SEED]");
        return -1;
    }
    if (o->k == 0 && o->have_gen) o->k = o->gen.k;
    if (o->k == 0 || o->iterations == 0) {
        app_error(KM_APP, "option --%s is required", o->k == 0 ? "k" : "iterations");
        return -1;
    }
    return app_ckpt_cli_check(KM_APP, &o->ckpt);
}

/* 0 to run, 1 after --help, -1 after an error message. */
int kmeans_opts_parse(int argc, char **argv, kmeans_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(kmeans_usage, stdout);
            fputs(app_ckpt_cli_usage, stdout);
            return 1;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            app_error(KM_APP, "unexpected argument '%s' (see --help)", argv[i]);
            return -1;
        }
        if (opts_one(o, argc, argv, &i) != 0) return -1;
    }
    return opts_check(o);
}
