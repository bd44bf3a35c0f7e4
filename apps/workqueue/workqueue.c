/*
 * workqueue.c — `tessera run workqueue`: options, tables and the control
 * function (see workqueue.h for the design).
 *
 * Control: restore if asked (workqueue_ckpt.c says what each checkpoint
 * phase leaves to do), load the items and take a CpBarrier, process them
 * under CpPeriodic, take a final CpBarrier, then check every item against
 * the generator and write the report.  Exit status 0 only if every item was
 * processed exactly once and every bucket's checksum is right.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workqueue.h"

#define WQ_UNVERIFIED 1 /* control's result when the check failed */

/* ---------------------------------------------------------------- control */

static int load_items(tess_ctx *ctx, wq_app *app)
{
    double t0 = tess_now();
    int rc = tess_run(ctx, "wq_load", app->partitions, app->items, NULL, 0);
    if (rc == TESS_OK) rc = wq_checkpoint_barrier(ctx, app, WQ_LOADED);
    app->load_seconds = tess_now() - t0;
    if (rc == TESS_OK && app->progress)
        fprintf(stderr, "%s: %ld items loaded in %.3f s\n", WQ_APP, app->opt.items,
                app->load_seconds);
    return rc;
}

/* TESS_WQ_FAULT=skip:I or twice:I (a test hook); ignored when malformed. */
static void test_fault(wq_process_args *a)
{
    const char *spec = getenv("TESS_WQ_FAULT");
    unsigned long long item;
    char kind[8];
    if (spec == NULL || sscanf(spec, "%7[a-z]:%llu", kind, &item) != 2) return;
    a->fault = strcmp(kind, "skip") == 0    ? WQ_FAULT_SKIP
               : strcmp(kind, "twice") == 0 ? WQ_FAULT_TWICE
                                            : WQ_FAULT_NONE;
    a->fault_item = item;
}

static wq_process_args process_args(const wq_app *app)
{
    wq_process_args a = {.work = app->opt.work,
                         .item_us = app->opt.item_us,
                         .point_every = app->opt.point_every,
                         .checkpointing = app->opt.checkpoint_dir != NULL,
                         .progress = app->progress};
    test_fault(&a);
    return a;
}

/* Periodic checkpoints run exactly while the kernels do; a restored run's
 * first tess_run of wq_process resumes the instances of the checkpoint. */
static int process_items(tess_ctx *ctx, wq_app *app)
{
    wq_process_args a = process_args(app);
    double t0 = tess_now();
    int rc = wq_checkpoint_periodic(ctx, app, 1);
    if (rc == TESS_OK) rc = tess_run(ctx, "wq_process", app->partitions, app->items, &a, sizeof a);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    int stop = wq_checkpoint_periodic(ctx, app, 0);
    if (rc == TESS_OK) rc = stop;
    if (rc == TESS_OK) rc = wq_checkpoint_barrier(ctx, app, WQ_DONE);
    app->process_seconds = tess_now() - t0;
    if (rc == TESS_OK && app->progress)
        fprintf(stderr, "%s: processed in %.3f s (%.0f items/s)\n", WQ_APP, app->process_seconds,
                (double)app->opt.items / app->process_seconds);
    return rc;
}

static void print_start(tess_ctx *ctx, const wq_app *app)
{
    if (!app->progress) return;
    fprintf(stderr, "%s: %ld items, %d partitions, %ld buckets on %d rank(s) x %d worker(s)%s\n",
            WQ_APP, app->opt.items, app->partitions, app->opt.buckets, tess_nranks(ctx),
            tess_workers(ctx), app->opt.checkpoint_dir ? "; checkpointing" : "");
}

static int control(tess_ctx *ctx, void *arg)
{
    wq_app *app = arg;
    wq_phase phase = WQ_FRESH;
    print_start(ctx, app);
    int rc = wq_checkpoint_restore(ctx, app, &phase);
    if (rc != TESS_OK) return rc; /* reported */
    if (phase == WQ_FRESH) rc = load_items(ctx, app);
    if (rc == TESS_OK && phase != WQ_DONE) rc = process_items(ctx, app);
    if (rc == TESS_OK) rc = wq_checkpoint_finish(ctx, app);
    if (rc == TESS_OK) rc = wq_verify(ctx, app);
    else app_error(WQ_APP, "%s", tess_last_error(ctx));
    if (rc != TESS_OK) return rc;
    if (wq_write_report(app) != 0) return TESS_ERR_IO;
    if (!app->verdict.ok)
        app_error(WQ_APP,
                  "verification FAILED: %llu of %ld items processed exactly once, "
                  "%ld/%ld buckets match",
                  (unsigned long long)app->verdict.once, app->opt.items, app->verdict.buckets_ok,
                  app->opt.buckets);
    return app->verdict.ok ? TESS_OK : WQ_UNVERIFIED;
}

/* ---------------------------------------------------------------- options */

static const char usage[] =
    "usage: tessera run workqueue [options]\n"
    "\n"
    "A work queue of N generated items, each to be processed exactly once, by one\n"
    "kernel instance per partition in index order; a long-running check of the\n"
    "asynchronous checkpoint.  Processing item i runs a hash chain (--work) and\n"
    "adds 1 to processed[i] and {1, result} to the checksum of a bucket stored\n"
    "elsewhere.  At the end every item must have been processed exactly once and\n"
    "every bucket must hold the count and checksum computed independently from\n"
    "the generator; the exit status is 0 only then.\n"
    "\n"
    "  --items N               items (default 100000)\n"
    "  --seed S                seed of the item generator (default 1)\n"
    "  --work W                hash rounds per item, W..2W (default 100)\n"
    "  --item-us US            also sleep US microseconds per item (default 0),\n"
    "                          to make a run last long enough to be killed\n"
    "  --partitions P          item partitions = kernel instances (default 12;\n"
    "                          fixed, so a restore may use other rank counts)\n"
    "  --buckets B             checksum buckets (default 64)\n"
    "  --workers W             worker threads per rank (default: cores available)\n"
    "  --checkpoint-dir DIR    checkpoint into DIR: a CpBarrier after loading and\n"
    "                          after processing, CpPeriodic while processing\n"
    "  --checkpoint-seconds S  period of the asynchronous checkpoints (default 1;\n"
    "                          0: only the two barrier checkpoints)\n"
    "  --point-every K         a checkpoint point every K items (default 1)\n"
    "  --keep K                epochs kept in DIR (default 2)\n"
    "  --restore               restore the newest checkpoint in DIR first (none:\n"
    "                          start afresh); added by `tessera supervise`\n"
    "  --checkpoint-overwrite  DIR may hold another job's checkpoints: delete\n"
    "                          them (by default such a DIR is refused)\n"
    "  --output FILE           write the verification report to FILE (default\n"
    "                          stdout)\n"
    "  --metrics FILE          write run metrics as JSON\n"
    "  --progress              progress lines on stderr (default when a terminal)\n"
    "  --quiet                 no progress lines\n"
    "  --help                  this text\n"
    "\n"
    "Runs unchanged under mpirun -np R; --workers is per rank.  Example:\n"
    "  tessera supervise -- mpirun -np 3 tessera run workqueue --item-us 200 \\\n"
    "      --checkpoint-dir ck --checkpoint-seconds 0.5\n";

/* An output's directory must be writable before the work starts. */

/* The options, each given at most once; seen[] counts them, in this order. */
enum { WQ_SEEN_CKPT_SECONDS = 8, WQ_SEEN_KEEP = 10, WQ_OPTIONS = 17 };

static int check_options(const wq_options *o, const int *seen)
{
    const char *needs_dir = o->restore                   ? "--restore"
                            : o->overwrite               ? "--checkpoint-overwrite"
                            : seen[WQ_SEEN_CKPT_SECONDS] ? "--checkpoint-seconds"
                            : seen[WQ_SEEN_KEEP]         ? "--keep"
                                                         : NULL;
    if (needs_dir != NULL && o->checkpoint_dir == NULL)
        return app_error(WQ_APP, "option %s: needs --checkpoint-dir DIR", needs_dir), -1;
    if (o->checkpoint_dir != NULL && o->checkpoint_dir[0] == '\0')
        return app_error(WQ_APP, "option --checkpoint-dir: empty path"), -1;
    return app_check_outputs(WQ_APP, o->output, o->metrics);
}

/* 0 to run, 1 after --help, -1 on a usage error, -2 on an unwritable output
 * (message printed). */
static int parse_options(wq_options *o, int argc, char **argv)
{
    *o = (wq_options){.items = 100000,
                      .seed = 1,
                      .work = 100,
                      .partitions = 12,
                      .buckets = 64,
                      .point_every = 1,
                      .keep = 2,
                      .checkpoint_seconds = 1.0};
    int seen[WQ_OPTIONS] = {0}, progress = APP_PROGRESS_AUTO;
    const app_opt opts[WQ_OPTIONS] = {
        {"items", APP_OPT_INT, &o->items, 1, 1L << 36, 0, &seen[0], NULL},
        {"seed", APP_OPT_INT, &o->seed, 0, 1L << 62, 0, &seen[1], NULL},
        {"work", APP_OPT_INT, &o->work, 0, 100000000, 0, &seen[2], NULL},
        {"item-us", APP_OPT_INT, &o->item_us, 0, 10000000, 0, &seen[3], NULL},
        {"partitions", APP_OPT_INT, &o->partitions, 1, 1 << 20, 0, &seen[4], NULL},
        {"buckets", APP_OPT_INT, &o->buckets, 1, 1 << 24, 0, &seen[5], NULL},
        {"workers", APP_OPT_INT, &o->workers, 1, 4096, 0, &seen[6], NULL},
        {"checkpoint-dir", APP_OPT_TEXT, &o->checkpoint_dir, 0, 0, 0, &seen[7], NULL},
        {"checkpoint-seconds", APP_OPT_DOUBLE, &o->checkpoint_seconds, 0, 86400, 0,
         &seen[WQ_SEEN_CKPT_SECONDS], NULL},
        {"point-every", APP_OPT_INT, &o->point_every, 1, 1L << 36, 0, &seen[9], NULL},
        {"keep", APP_OPT_INT, &o->keep, 1, 1000, 0, &seen[WQ_SEEN_KEEP], NULL},
        {"restore", APP_OPT_FLAG, &o->restore, 0, 0, 1, &seen[11], NULL},
        {"output", APP_OPT_TEXT, &o->output, 0, 0, 0, &seen[12], NULL},
        {"metrics", APP_OPT_TEXT, &o->metrics, 0, 0, 0, &seen[13], NULL},
        {"progress", APP_OPT_FLAG, &progress, 0, 0, APP_PROGRESS_ON, &seen[14], NULL},
        {"quiet", APP_OPT_FLAG, &progress, 0, 0, APP_PROGRESS_OFF, &seen[15], NULL},
        {"checkpoint-overwrite", APP_OPT_FLAG, &o->overwrite, 0, 0, 1, &seen[16], NULL},
    };
    int rc = app_parse_options(WQ_APP, usage, argc, argv, opts, WQ_OPTIONS);
    o->progress = (app_progress_mode)progress;
    if (rc != 0) return rc;
    return check_options(o, seen);
}

/* ---------------------------------------------------------------- tables */

static void dense_spec(tess_table_spec *s, const char *name, uint64_t keys, int parts)
{
    tess_table_spec_init(s);
    s->name = name;
    s->key_size = sizeof(uint64_t);
    s->value_size = 2 * sizeof(int64_t);
    s->dense = 1;
    s->key_count = keys;
    s->partitions = parts;
    s->elem = TESS_I64;
}

static int create_tables(tess_ctx *ctx, wq_app *app)
{
    tess_table_spec s;
    app->partitions =
        (int)(app->opt.partitions < app->opt.items ? app->opt.partitions : app->opt.items);
    app->sum_partitions =
        (int)(app->opt.buckets < app->partitions ? app->opt.buckets : app->partitions);
    dense_spec(&s, "items", (uint64_t)app->opt.items, app->partitions);
    int rc = tess_table_create(ctx, &s, &app->items);
    dense_spec(&s, "processed", (uint64_t)app->opt.items, app->partitions);
    s.value_size = sizeof(int64_t);
    s.accum = TESS_ACC_SUM;
    s.group_with = app->items;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &app->processed);
    /* Not grouped: a bucket lives wherever its range falls, so most updates
     * of an instance go to other ranks and cross the snapshot's channels. */
    dense_spec(&s, "sums", (uint64_t)app->opt.buckets, app->sum_partitions);
    s.accum = TESS_ACC_SUM;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &app->sums);
    return rc;
}

/* ---------------------------------------------------------------- main */

static int setup(tess_ctx *ctx, void *arg)
{
    wq_app *app = arg;
    int rc = create_tables(ctx, app);
    if (rc == TESS_OK) rc = wq_register_kernels(ctx);
    if (rc == TESS_OK) rc = wq_checkpoint_setup(ctx, app);
    if (rc != TESS_OK && tess_rank(ctx) == 0) app_error(WQ_APP, "%s", tess_last_error(ctx));
    return rc;
}

/* Rank 0, after a run that finished (verified or not): the metrics. */
static int after(tess_ctx *ctx, void *arg, int rc)
{
    wq_app *app = arg;
    int finished = rc == TESS_OK || rc == WQ_UNVERIFIED;
    if (finished && tess_rank(ctx) == 0 && app->opt.metrics &&
        wq_write_metrics(app, ctx, tess_now() - app->start) != 0 && rc == TESS_OK)
        rc = TESS_ERR_IO; /* the run's result is incomplete without its metrics */
    return rc;
}

static int begin(void *arg, int argc, char **argv, tess_config *cfg)
{
    wq_app *app = arg;
    int rc = parse_options(&app->opt, argc, argv);
    if (rc != 0) return rc;
    app->progress = app_progress_enabled(app->opt.progress);
    app_config(cfg, app->opt.workers);
    app->start = tess_now();
    return 0;
}

/* For app_tables_run: the state's size, begin, prepare, control, after, end. */
static const app_tables_def def = {sizeof(wq_app), begin, setup, control, after, NULL};

int workqueue_main(int argc, char **argv) { return app_tables_run(&def, argc, argv); }
