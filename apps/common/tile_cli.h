/*
 * tile_cli.h — what the tiles-face applications share: their tiles options
 * (--policy, --processors, --tile-queue-ms, --tile-chunk, --data-on,
 * --stats, --progress/--quiet) and the statistics JSON (--stats FILE.json).
 */
#ifndef TESS_APPS_TILE_CLI_H
#define TESS_APPS_TILE_CLI_H

#include <stdio.h>
#include "common.h"
#include "tessera/tile.h"

#define APP_TILE_MAX_GIVEN 32

/* An application option as given (name without "--", value or NULL). */
typedef struct app_tile_given {
    char name[32];
    const char *value;
} app_tile_given;

typedef struct app_tile_cli {
    tess_tile_options opt;
    const char *stats_path;
    long data_on; /* -1: spread over the ranks */
    app_progress_mode progress;
    /* checkpoints (tile_ckpt.h): --checkpoint-dir, --checkpoint-every
     * (seconds between journal flushes), --restore, --checkpoint-overwrite */
    const char *ckpt_dir;
    double ckpt_every_s;
    int restore, ckpt_overwrite;
    /* --in-memory: read the whole input before the run and write the
     * outputs after it, instead of streaming them (tile_stream.h) */
    int in_memory;
    /* the application's options, in the order given: a checkpoint's identity */
    app_tile_given given[APP_TILE_MAX_GIVEN];
    int ngiven;
} app_tile_cli;

#define APP_TILE_CLI_USAGE                                                                     \
    "  tiles options (docs/tiles.md):\n"                                                       \
    "    --policy P          apc (default), capc, dd:SIZE, static:SIZE, ws:SIZE (SIZE: cell\n" \
    "                        count or box AxB; capc: one controller for all ranks)\n"          \
    "    --processors SPEC   cpu*N, cpu@F (slowed to fraction F), cpu@F/S (from S seconds\n"   \
    "                        on), opencl[:N], cuda[:N], joined with '+' (default: cpu per\n"   \
    "                        core)\n"                                                          \
    "    --tile-queue-ms T   most queued work per processor (default 100)\n"                   \
    "    --tile-chunk BYTES  storage-layer transfer unit (default 1048576)\n"                  \
    "    --data-on R         all input on rank R (default: spread over the ranks)\n"           \
    "    --stats FILE.json   the run's statistics (time split, per processor and rank)\n"      \
    "    --progress | --quiet\n"                                                               \
    "    --in-memory         all input read first, outputs written last (default: file\n"      \
    "                        input read by region, outputs written as tiles finish)\n"         \
    "    --checkpoint-dir DIR  journal finished tiles in DIR (docs/checkpoints.md, Tiles)\n"   \
    "    --checkpoint-every S  seconds between journal flushes (default 1)\n"                  \
    "    --restore           compute only the tiles DIR's journal lacks (tessera supervise\n"  \
    "                        adds it on a restart); none there: start afresh\n"                \
    "    --checkpoint-overwrite  DIR may hold another job's checkpoint: replace it\n"

void app_tile_cli_init(app_tile_cli *c);
/* An application's own option: `value` is NULL for a flag.  0, or -1
 * after printing "tessera APP: option --NAME: ...". */
typedef int (*app_tile_set_fn)(void *opts, const char *name, const char *value);
/*
 * Parse argv[1..]: --help/-h prints `usage` and returns 1; the tiles options
 * go to `c`; the application's options, named (without "--") in the
 * NULL-terminated `values` (they take a value, as "--NAME V" or
 * "--NAME=V") and `flags`, go to `set`.  0, or -1 after a one-line error.
 */
int app_tile_cli_parse(app_tile_cli *c, const char *app, const char *usage, int argc, char **argv,
                       const char *const *values, const char *const *flags, app_tile_set_fn set,
                       void *opts);
/* Run `job` with the parsed options (progress as asked, `seed` for victim
 * choice); 0, or -1 after printing the error. */
int app_tile_cli_run(const app_tile_cli *c, tess_ctx *ctx, const tess_tile_job *job, uint64_t seed,
                     const char *app, tess_tile_stats *st);
/* After a run: the statistics JSON into `stats_fp` when --stats was given,
 * and the summary line unless --quiet.  0, or -1 after printing why. */
int app_tile_cli_report(const app_tile_cli *c, tess_ctx *ctx, const tess_tile_stats *st,
                        FILE *stats_fp, const char *app, const char *what, double units);
/* Check that --data-on names a rank; 0, or -1 (rank 0 printed why). */
int app_tile_cli_check_data_on(const app_tile_cli *c, tess_ctx *ctx, const char *app);
/* Check the processors and policy for `job`; 0, or -1 (rank 0 printed why). */
int app_tile_cli_check(const app_tile_cli *c, tess_ctx *ctx, const tess_tile_job *job,
                       const char *app);

#endif
