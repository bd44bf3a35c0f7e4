/*
 * tile_app.h — the skeleton every tiles-face application's main shares
 * (blackscholes, sar, texture): start the runtime with one worker (the
 * controller; processors are threads of their own), let the application
 * prepare and register its job, check the tiles options against it, read
 * its checkpoint (--checkpoint-dir, tile_ckpt.h), run it from rank 0's
 * control thread, write the outputs atomically (nothing is
 * left behind on failure), print the statistics and the summary, and map
 * the outcome to one exit code for the same failure in every application.
 */
#ifndef TESS_APPS_TILE_APP_H
#define TESS_APPS_TILE_APP_H

#include <stdio.h>
#include "tile_cli.h"

#define APP_TILE_MAX_FILES 4

/* One of the application's output files. */
typedef struct app_tile_file {
    const char *path; /* NULL: not asked for */
    /* Rank 0: write it (0, or -1 with errno set where the system said why). */
    int (*write)(const void *app, FILE *fp);
    int before; /* 1: written before the run (it does not depend on it) */
    /* Rank 0, once the file is open, before the run: a streamed output
     * keeps fileno(fp) to write tiles at their place while the run goes
     * on (tile_stream.h); `write` then has nothing left to do.  Optional. */
    void (*opened)(void *app, FILE *fp);
    const char *option; /* its option without "--", for messages: "output" */
} app_tile_file;

typedef struct app_tile_spec {
    const char *name;   /* "blackscholes": messages and statistics */
    const char *what;   /* what the summary counts: "options" */
    void *app;          /* the application's state, passed to the hooks */
    app_tile_cli *cli;  /* the parsed tiles options */
    tess_tile_job *job; /* what prepare fills in and registers */
    uint64_t seed;      /* victim choice when stealing */
    /* Opened on rank 0 before the run in this order, then --stats;
     * committed after it, --stats first and these in the reverse order. */
    app_tile_file files[APP_TILE_MAX_FILES];
    /* The run's input files, which no output may replace: their paths
     * (NULL: not given) and options without "--" */
    const char *inputs[2], *input_options[2];
    /* Every rank, after tess_init: fill and register *job.  0, or -1 after
     * rank 0 printed why. */
    int (*prepare)(tess_ctx *ctx, void *app);
    /* How many `what` the run computed (after prepare), for the summary. */
    double (*units)(const void *app);
    /* Rank 0, after the summary unless --quiet: a line of the
     * application's own.  Optional. */
    void (*after)(const void *app);
    /* Every rank, at the end: free the application's memory. */
    void (*release)(void *app);
    /* A checkpoint's identity (tile_ckpt.h) holds the application's options
     * as given, but for these (NULL-terminated names without "--"; options
     * that change no output: output paths, a cost knob); those named in
     * identity_files count by their file's size and checksum. */
    const char *const *identity_skip;
    const char *const *identity_files;
    /* A pipeline (docs/tiles.md, "Pipelines"): with stages 2, prepare
     * also fills and registers *first_stage, whose output streams into
     * *job's input (a window of window_bytes; 0: 64 MiB) while both run,
     * stage k on stage_processors[k], else --processors, else stage 1 on
     * one CPU and stage 2 on one per core (the first is held back by the
     * window when it runs ahead, and leaves its core to the second); the
     * context then has a worker per stage.  --stats holds the last
     * stage's. */
    int stages;
    tess_tile_job *first_stage;
    size_t window_bytes;
    const char *stage_processors[2];
} app_tile_spec;

/* Run the application whose options were parsed; returns the process exit
 * code: 0, 2 for tiles options that do not fit the job, 1 for bad input or
 * another failure, 130 when interrupted by SIGINT/SIGTERM. */
int app_tile_main(const app_tile_spec *spec);

#endif
