/*
 * ckpt_cli.h — the checkpoint options of the iterative applications
 * (--checkpoint-dir DIR, --checkpoint-every N, --restore,
 * --checkpoint-overwrite) and the steps every one of them takes with them:
 * enable checkpoints before tess_main, restore first thing in the control
 * function, decide after which iterations to take a checkpoint, and wait for
 * the last one before a successful exit.  The runtime side is
 * include/tessera/checkpoint.h.
 */
#ifndef TESS_APPS_CKPT_CLI_H
#define TESS_APPS_CKPT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include "common.h"

#define APP_CKPT_DEFAULT_EVERY 10

typedef struct app_ckpt_cli {
    const char *dir; /* --checkpoint-dir; NULL: no checkpoints */
    long every;      /* --checkpoint-every; 0 until given (then the default) */
    int restore;     /* --restore */
    int overwrite;   /* --checkpoint-overwrite: take a directory of another job */
} app_ckpt_cli;

/* Usage lines of the four options, for an app's --help. */
extern const char app_ckpt_cli_usage[];

/* Parse the value of --checkpoint-every; 0 or -1 after a one-line message. */
int app_ckpt_cli_parse_every(const char *app, app_ckpt_cli *c, const char *text);
/* The three options as entries of an option table (app_parse_options_with)
 * into out; returns APP_CKPT_CLI_OPTIONS. */
#define APP_CKPT_CLI_OPTIONS 4
int app_ckpt_cli_options(app_ckpt_cli *c, app_opt *out);

/* After all options: --restore, --checkpoint-every and --checkpoint-overwrite
 * need --checkpoint-dir (0, or -1 after one line naming the option); sets
 * the default interval. */
int app_ckpt_cli_check(const char *app, app_ckpt_cli *c);

/* 1 when a checkpoint follows iteration `done` (1-based) of `total`: every
 * `every` iterations, never after the last (its output is the result). */
int app_ckpt_cli_due(const app_ckpt_cli *c, long done, long total);

/* tess_checkpoint_enable(ctx, dir, job, 0) when --checkpoint-dir was given
 * (and tess_checkpoint_set_overwrite with --checkpoint-overwrite);
 * before tess_main on every rank.  Rank 0 reports a failure in one line. */
int app_ckpt_cli_enable(const char *app, tess_ctx *ctx, const app_ckpt_cli *c, const char *job);

/*
 * With --restore, restore the newest checkpoint (control function, first).
 * 1: restored; `len` bytes of user data copied to user_out and the epoch to
 * *epoch_out.  0: nothing to restore (no --restore, or no usable checkpoint:
 * then "APP: no checkpoint in DIR; starting afresh" on stderr, the tables
 * empty).  Negative: the status after a one-line error (another job's
 * checkpoint, ...).  An epoch whose user data is not `len` bytes is passed
 * over for an older one; so is one whose count of work done (`done`, may be
 * NULL) is out of range, or that validate (may be NULL; gets `arg`) refuses
 * on the tables once loaded (tess_checkpoint_restore_checked).
 */
typedef struct app_ckpt_done {
    /* The user data starts with the int64_t count of UNITs done: an epoch
     * is usable when 1 <= done <= total, else passed over "after UNIT DONE,
     * beyond --OPTION TOTAL" (a longer run's checkpoint has older epochs
     * that may be usable). */
    long total;
    const char *unit, *option;
} app_ckpt_done;
int app_ckpt_cli_restore(const char *app, tess_ctx *ctx, const app_ckpt_cli *c,
                         const app_ckpt_done *done, tess_checkpoint_validate_fn validate, void *arg,
                         void *user_out, size_t len, uint64_t *epoch_out);

/* "APP: restored checkpoint epoch E (UNIT DONE of TOTAL) from DIR" on
 * stderr, the line every application prints once it took up a restored
 * epoch (scripts and tests look for it). */
void app_ckpt_cli_restored(const char *app, const app_ckpt_cli *c, const char *unit, uint64_t epoch,
                           int64_t done, long total);

/* For validate functions: every value of every partition of t (fixed-size
 * values of doubles) is finite, and *count_out (may be NULL) the number of
 * keys; 0, or 1 with "TABLE holds a non-finite value" in why. */
int app_ckpt_cli_all_finite(tess_table *t, const char *name, int64_t *count_out, char *why,
                            size_t whylen);

/* Wait for the checkpoints still being written (control function, before a
 * successful exit).  A failed checkpoint does not fail the run — the runtime
 * already reported it and the previous epoch stays usable — but the app says
 * in one line which epoch a restart would use. */
void app_ckpt_cli_finish(const char *app, tess_ctx *ctx, const app_ckpt_cli *c);

/* With --checkpoint-dir, add checkpoint_every, restored_epoch and
 * restored_iteration (0 when the run started afresh) and checkpoints_started;
 * app_metrics_standard has the runtime's other checkpoint figures. */
void app_ckpt_cli_metrics(app_metrics *m, const tess_ctx *ctx, const app_ckpt_cli *c,
                          uint64_t restored_epoch, long restored_iteration);

/* 64-bit hash of `len` bytes chained onto `h` (start with 0), for the job
 * strings: the input of a computation is part of its identity. */
uint64_t app_hash_bytes(uint64_t h, const void *data, size_t len);

#endif
