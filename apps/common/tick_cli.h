/*
 * tick_cli.h — the command-line options every tick-face application shares
 * (--alg, --depth, --period, --layers, --ticks, --workers, --jitter, --seed,
 * --step-cost, --repart-every, --progress-every, --quiet, --metrics, and the
 * checkpoint options of ckpt_cli.h, N counting ticks) and the tick metrics
 * JSON of DESIGN §6.
 */
#ifndef TESS_APPS_TICK_CLI_H
#define TESS_APPS_TICK_CLI_H

#include "ckpt_cli.h"
#include "common.h"
#include "tessera/tick.h"

typedef struct app_tick_cli {
    tess_tick_options opt;
    long workers;             /* 0: runtime default */
    const char *metrics_path; /* NULL: none */
    int quiet;
    int seen[16];      /* repeated-option detection */
    app_ckpt_cli ckpt; /* --checkpoint-dir, --checkpoint-every (ticks), --restore */
    char job[256];     /* what a checkpoint belongs to (app_tick_cli_set_job) */
} app_tick_cli;

/* Defaults (ticks = 0 means "required": app_tick_cli_check reports it). */
void app_tick_cli_init(app_tick_cli *c);

/* A tick application's command line (app_parse_options): c initialised,
 * the shared tick options, then the application's own `own` (n of
 * them); the application then checks its own, then app_tick_cli_check.
 * --help prints `usage`, then app_tick_cli_usage.
 * 0 to run, 1 after --help, -1 after "tessera APP: option --NAME: REASON". */
int app_tick_cli_parse(const char *app, app_tick_cli *c, const char *usage, const app_opt *own,
                       int n, int argc, char **argv);

/* Cross-checks (k <= m+1, ...): 0 or -1 with a message. */
int app_tick_cli_check(const char *app, app_tick_cli *c);
/* After tess_init: the options against each other and the --jitter spec
 * (tess_tick_options_check), reported by rank 0 as "option --FLAG: ...";
 * 0 or -1 on every rank alike. */
int app_tick_cli_validate(const char *app, const app_tick_cli *c, tess_ctx *ctx);

/* The options that change the application's result ("rows=64 cols=64"),
 * printf-style: a checkpoint of other options is refused on --restore. */
void app_tick_cli_set_job(app_tick_cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Usage text of the shared options, for an app's --help. */
extern const char app_tick_cli_usage[];

/* tess_config for tess_init (workers). */
void app_tick_cli_config(const app_tick_cli *c, tess_config *cfg);

/* Add the tick metrics to m (DESIGN §6): the standard keys, jitter, seed,
 * emulated, ticks, ticks_per_second, tuple_ticks_per_second,
 * step/wait/runtime_seconds, messages, bytes, per_worker, alg, depth,
 * period, layers, step_cost_us.  `tuples` is the application's tuple count
 * (cells, fish, vertices) for tuple_ticks_per_second. */
void app_tick_metrics(app_metrics *m, tess_ctx *ctx, const char *app, const app_tick_cli *c,
                      const tess_tick_result *res, double wall_seconds, int64_t tuples);

/* With --restore, one line on stderr saying which checkpoint the run resumed
 * from and how long reading and loading it took ("APP: restored checkpoint
 * epoch E (tick T of N) from DIR in S s"). */
void app_tick_restored_line(const char *app, const app_tick_cli *c, const tess_tick_result *res);

/* One summary line on stderr unless quiet ("... ticks/s, emulated" when so). */
void app_tick_summary(const char *app, const app_tick_cli *c, const tess_tick_result *res,
                      int64_t tuples);

#endif
