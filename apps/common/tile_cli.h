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

typedef struct app_tile_cli {
    tess_tile_options opt;
    const char *stats_path;
    long data_on; /* -1: spread over the ranks */
    app_progress_mode progress;
} app_tile_cli;

#define APP_TILE_CLI_USAGE                                                                     \
    "  tiles options (docs/tiles.md):\n"                                                       \
    "    --policy P          apc (default), dd:SIZE, static:SIZE or ws:SIZE (SIZE: cells or\n" \
    "                        a box AxB)\n"                                                     \
    "    --processors SPEC   cpu*N, cpu@F (slowed to fraction F), cpu@F/S (from S seconds\n"   \
    "                        on), opencl[:N], joined with '+' (default: cpu per core)\n"       \
    "    --tile-queue-ms T   most queued work per processor (default 100)\n"                   \
    "    --tile-chunk BYTES  storage-layer transfer unit (default 1048576)\n"                  \
    "    --data-on R         all input on rank R (default: spread over the ranks)\n"           \
    "    --stats FILE.json   the run's statistics (time split, per processor and rank)\n"      \
    "    --progress | --quiet\n"

void app_tile_cli_init(app_tile_cli *c);
/* 1 if `name` (without "--") is a tiles option taking a value, 2 a flag, 0 neither. */
int app_tile_cli_is_option(const char *name);
/* Apply one; 0 or -1 after printing "tessera APP: option --NAME: ...". */
int app_tile_cli_set(app_tile_cli *c, const char *app, const char *name, const char *value);
/* The statistics as a JSON object, printed to fp; 0 or -1. */
int app_tile_stats_print(const tess_tile_stats *s, tess_ctx *ctx, const char *app, FILE *fp);
/* One line on stderr: time, rate and the split. */
void app_tile_summary(const tess_tile_stats *s, const char *app, const char *what, double units);

#endif
