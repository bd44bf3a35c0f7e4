/*
 * tick_app.h — the skeleton every tick-face application's main shares:
 * start the runtime, check the options, let the application prepare its
 * tick description, run it on rank 0's control thread, write the main
 * output and the metrics atomically (nothing is left behind on failure),
 * print the summary, and map the outcome to an exit code.
 */
#ifndef TESS_APPS_TICK_APP_H
#define TESS_APPS_TICK_APP_H

#include <stdio.h>
#include "tick_cli.h"

typedef struct app_tick_spec {
    const char *name;        /* "jacobi": messages and metrics */
    void *app;               /* the application's state, passed to the hooks */
    app_tick_cli *cli;       /* the parsed shared options */
    tess_tick_app *tick;     /* what prepare fills in and the runtime runs */
    const char *output_path; /* the main output (--dump, --output), or NULL */
    double start;            /* tess_now() when main started (wall_seconds) */
    /* output_path's option without "--" (NULL: "output"), for messages */
    const char *output_option;
    /* An input file of the run (--graph), which no output may replace, and
     * its option without "--"; NULL: none */
    const char *input_path, *input_option;
    /* Every rank, after tess_init and the option checks: fill *tick (and
     * check it, e.g. that the grid is larger than the worker layout).  0, or
     * -1 after rank 0 printed why. */
    int (*prepare)(tess_ctx *ctx, void *app);
    /* Rank 0, after the run: write the final state to fp (the output file;
     * NULL without output_path: the application may print a summary of it
     * instead).  0 or -1 with a message printed. */
    int (*write_output)(void *app, const tess_tick_result *res, FILE *fp);
    /* Rank 0: the application's own keys in the metrics.  Optional. */
    void (*add_metrics)(void *app, app_metrics *m);
    /* The number of tuples (cells, fish, vertices), for tuple_ticks_per_second. */
    int64_t (*tuples)(void *app);
} app_tick_spec;

/* Run the application; returns the process exit code: 0, 2 for options that
 * do not fit together, 1 on another failure, 130 when interrupted by
 * SIGINT/SIGTERM. */
int app_tick_main(const app_tick_spec *spec);

#endif
