/*
 * kmeans_app.h — the state of `tessera run kmeans`, shared by kmeans.c (the
 * kernels, the control function and the setup) and kmeans_options.c (the
 * command line).  Private to apps/kmeans.
 */
#ifndef TESS_APPS_KMEANS_APP_H
#define TESS_APPS_KMEANS_APP_H

#include "../common/ckpt_cli.h"
#include "../common/common.h"
#include "kmeans.h"

#define KM_APP "kmeans"
#define KM_CHUNK 1024 /* points per batched table write */

typedef struct kmeans_opts {
    const char *points_path;
    int have_gen;
    kmeans_gen_spec gen;
    long k;
    long iterations;
    app_run_opts run;
    app_ckpt_cli ckpt;
    const char *assignments;
} kmeans_opts;

typedef struct kmeans_app {
    kmeans_opts opt;
    kmeans_points pts;
    int k;
    int dim;
    int partitions;
    double start;        /* tess_now() when the command started */
    double load_seconds; /* reading or generating, plus the load kernel (rank 0) */
    tess_table *points, *assignment, *centres, *partials, *moved;
    /* control function (rank 0) only: */
    double *centre_values; /* K*DIM, the current centres */
    int64_t moved_before;  /* the moved table's count after the previous iteration */
    long first_iteration;  /* 0, or the iterations a restored checkpoint had done */
    uint64_t restored_epoch;
    double *iteration_seconds;
    app_outfile out_centres, out_assign, out_metrics;
} kmeans_app;

/* Parse argv into *o: 0, 1 after --help, -1 after an error message. */
int kmeans_opts_parse(int argc, char **argv, kmeans_opts *o);

#endif
