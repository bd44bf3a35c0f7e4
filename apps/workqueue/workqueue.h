/*
 * workqueue.h — `tessera run workqueue`: a long-running kernel application
 * that checks the asynchronous checkpoint (CpPeriodic).  N items, generated
 * from (--items, --seed), sit in a dense table split into P partitions; one
 * kernel instance per partition processes its items in order and records
 * each one with sum accumulators:
 *
 *   items      dense, N keys of {payload, bucket} (i64 pair), static
 *   processed  dense, N keys of i64, grouped with items: processed[i] += 1
 *   sums       dense, B keys of {count, checksum} (i64 pair), partitioned on
 *              its own, so most updates cross ranks: sums[bucket(i)] +=
 *              {1, result(i)}
 *
 * After each item (or every --point-every items) the kernel calls
 * tess_task_checkpoint_point() with the index of its next item, and resumes
 * from tess_task_restored_position() after a restore.  The control function
 * then checks, against values it computes itself from the generator, that
 * every item was processed exactly once: after a killed rank and a restore
 * nothing may fall through the cracks or be counted twice.
 */
#ifndef TESS_APPS_WORKQUEUE_H
#define TESS_APPS_WORKQUEUE_H

#include <stdint.h>
#include "common.h"

#define WQ_APP "workqueue"

typedef struct wq_options {
    long items, seed, work, item_us, partitions, buckets, workers, point_every, keep;
    double checkpoint_seconds;
    const char *checkpoint_dir, *output, *metrics;
    int restore;
    int overwrite; /* --checkpoint-overwrite */
    app_progress_mode progress;
} wq_options;

/* What the control function found; the output file prints it. */
typedef struct wq_verdict {
    uint64_t once, missing, repeated; /* items with processed == 1, 0, > 1 */
    int64_t count_total, count_expected;
    uint64_t checksum, checksum_expected; /* sums of the per-bucket checksums */
    long buckets_ok;                      /* buckets whose {count, checksum} match */
    int ok;
} wq_verdict;

typedef struct wq_app {
    wq_options opt;
    int partitions, sum_partitions; /* after clamping to the item / bucket counts */
    tess_table *items, *processed, *sums;
    int progress;
    double start; /* tess_now() before tess_init: the metrics' wall time */
    int restored; /* a checkpoint was restored (rank 0) */
    uint64_t restored_epoch;
    int checkpoint_failures; /* tess_checkpoint_wait reported a failed epoch */
    double load_seconds, process_seconds;
    wq_verdict verdict;
} wq_app;

/* Arguments of the process kernel (copied to every instance). */
typedef enum wq_fault { WQ_FAULT_NONE = 0, WQ_FAULT_SKIP = 1, WQ_FAULT_TWICE = 2 } wq_fault;

typedef struct wq_process_args {
    int64_t work, item_us, point_every;
    int32_t checkpointing;
    int32_t progress;
    /* Test hook TESS_WQ_FAULT=skip:I or twice:I, so the tests can show that
     * the check catches a lost or a repeated item. */
    int32_t fault;
    uint64_t fault_item;
} wq_process_args;

/* ---- the items (workqueue_items.c): pure functions of their arguments ---- */
int64_t wq_item_payload(uint64_t seed, uint64_t item);
int64_t wq_item_bucket(uint64_t seed, uint64_t item, uint64_t buckets);
/* The deterministic work of one item: a hash chain of work..2*work rounds. */
int64_t wq_item_result(uint64_t item, int64_t payload, int64_t work);

/* ---- kernels (workqueue_kernels.c) ---- */
int wq_register_kernels(tess_ctx *ctx);

/* ---- verification and output (workqueue_verify.c), control function ---- */
int wq_verify(tess_ctx *ctx, wq_app *app);
/* The verification report: to --output (atomically) or stdout.  0 or -1. */
int wq_write_report(const wq_app *app);
int wq_write_metrics(wq_app *app, tess_ctx *ctx, double wall_seconds); /* 0, or -1 said */

/* ---- checkpoint control (workqueue_ckpt.c) ---- */
typedef enum wq_phase { WQ_FRESH = 0, WQ_LOADED = 1, WQ_PROCESSING = 2, WQ_DONE = 3 } wq_phase;
/* Before tess_main: enable checkpoints and mark the items static. */
int wq_checkpoint_setup(tess_ctx *ctx, wq_app *app);
/* --restore: the phase the checkpoint was taken in (WQ_FRESH if none). */
int wq_checkpoint_restore(tess_ctx *ctx, wq_app *app, wq_phase *phase_out);
/* A barrier that also checkpoints `phase` when checkpoints are on. */
int wq_checkpoint_barrier(tess_ctx *ctx, const wq_app *app, wq_phase phase);
/* Start (seconds > 0) or stop periodic checkpoints of the processing phase. */
int wq_checkpoint_periodic(tess_ctx *ctx, const wq_app *app, int on);
/* Wait for the writers; a failed epoch is reported but does not fail the job. */
int wq_checkpoint_finish(tess_ctx *ctx, wq_app *app);

#endif
