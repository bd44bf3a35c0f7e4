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
    "         [--metrics FILE] [--checkpoint-dir DIR [--checkpoint-every N] [--restore]\n"
    "         [--checkpoint-overwrite]]\n"
    "         [--progress | --quiet] [--help]\n"
    "  Lloyd's k-means from the first K points as initial centres.  Writes K lines of\n"
    "  DIM coordinates (--output, else stdout); --assignments writes one centre index\n"
    "  per point.  With --gen, --k defaults to the spec's K.  The centres depend on\n"
    "  the partition count P (default min(2 x workers in total, N)) in the last bits\n"
    "  only, and not on worker or rank counts.  See docs/kmeans.md.\n";

/* ---------------------------------------------------------------- options */

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
    const char *const names[] = {"output", "assignments", "metrics"};
    const char *const paths[] = {o->run.output, o->assignments, o->run.metrics};
    if (app_outputs_distinct(KM_APP, names, paths, 3) != 0) return -1;
    const char *const in_o[] = {"points"}, *const in_p[] = {o->points_path};
    if (app_outputs_spare_inputs(KM_APP, in_o, in_p, 1, names, paths, 3) != 0) return -1;
    return app_ckpt_cli_check(KM_APP, &o->ckpt);
}

static int opts_gen(kmeans_opts *o, const char *text)
{
    char err[256];
    if (text == NULL) return 0;
    if (kmeans_gen_parse(text, &o->gen, err, sizeof err) != 0) {
        app_error(KM_APP, "option --gen: %s", err);
        return -1;
    }
    o->have_gen = 1;
    return 0;
}

/* 0 to run, 1 after --help, -1 after an error message. */
int kmeans_opts_parse(int argc, char **argv, kmeans_opts *o)
{
    memset(o, 0, sizeof *o);
    const char *gen = NULL;
    const app_opt opts[] = {
        {"points", APP_OPT_STRING, &o->points_path, 0, 0, 0, NULL, NULL},
        {"gen", APP_OPT_STRING, &gen, 0, 0, 0, NULL, NULL},
        {"k", APP_OPT_INT, &o->k, 1, KMEANS_MAX_K, 0, NULL, NULL},
        {"iterations", APP_OPT_INT, &o->iterations, 1, 1000000, 0, NULL, NULL},
        {"assignments", APP_OPT_STRING, &o->assignments, 0, 0, 0, NULL, NULL},
    };
    int rc = app_run_parse(KM_APP, kmeans_usage, &o->run, 1 << 20, &o->ckpt, opts,
                           (int)(sizeof opts / sizeof *opts), argc, argv);
    if (rc == 0) rc = opts_gen(o, gen);
    return rc != 0 ? rc : opts_check(o);
}
