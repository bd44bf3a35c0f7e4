/*
 * nbody_app.h — the state of `tessera run nbody`, shared by nbody.c (the
 * kernel, the control function and the setup) and nbody_options.c (the
 * command line).  Private to apps/nbody.
 */
#ifndef TESS_APPS_NBODY_APP_H
#define TESS_APPS_NBODY_APP_H

#include "../common/ckpt_cli.h"
#include "../common/common.h"
#include "nbody.h"

#define NB_APP "nbody"

typedef struct nbody_opts {
    long particles; /* 0: from --input */
    long steps;
    double cutoff;
    double box; /* 0: derived from --particles and --cutoff */
    double softening;
    double dt;
    double vmax;
    long seed;
    const char *input;
    app_run_opts run;
    app_ckpt_cli ckpt;
} nbody_opts;

typedef struct nbody_app {
    nbody_opts opt;
    nbody_params prm;
    int cells;               /* per side */
    int partitions;          /* slabs of planes along x */
    nbody_particle *initial; /* the starting state (every rank reads it alike) */
    size_t n;
    double start;
    tess_table *state[2]; /* double-buffered cells: step t reads [t % 2] */
    /* control function (rank 0) only: */
    long first_step; /* 0, or the steps a restored checkpoint had done */
    uint64_t restored_epoch;
    double load_seconds;
    double *step_seconds;
    double momentum_initial[3];
    app_outfile out_particles, out_metrics;
} nbody_app;

/* Parse argv into *o: 0, 1 after --help, -1 after an error message. */
int nbody_opts_parse(int argc, char **argv, nbody_opts *o);

#endif
