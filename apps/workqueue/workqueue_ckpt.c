/*
 * workqueue_ckpt.c — how the work queue uses checkpoints.  Every checkpoint
 * carries a small mark naming the phase it was taken in, so a restore knows
 * what is left to do:
 *
 *   WQ_LOADED      CpBarrier after the items were loaded: process them all
 *   WQ_PROCESSING  CpPeriodic while wq_process runs: the runtime resumes each
 *                  unfinished instance from its saved position
 *   WQ_DONE        CpBarrier after processing: only the check is left
 *
 * The job string holds every option that changes the tables or the results,
 * so a checkpoint of another configuration is refused rather than mixed in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workqueue.h"

#define WQ_MARK_MAGIC "WQPHASE1"

typedef struct wq_mark {
    char magic[8];
    uint32_t phase;
    uint32_t reserved;
} wq_mark;

static const char *phase_name(wq_phase phase)
{
    switch (phase) {
    case WQ_LOADED: return "items loaded, none processed";
    case WQ_PROCESSING: return "taken while processing";
    case WQ_DONE: return "every item processed";
    default: return "fresh";
    }
}

static int checkpointing(const wq_app *app) { return app->opt.checkpoint_dir != NULL; }

static wq_mark make_mark(wq_phase phase)
{
    wq_mark m;
    memset(&m, 0, sizeof m);
    memcpy(m.magic, WQ_MARK_MAGIC, sizeof m.magic);
    m.phase = (uint32_t)phase;
    return m;
}

int wq_checkpoint_setup(tess_ctx *ctx, wq_app *app)
{
    if (!checkpointing(app)) return TESS_OK;
    char job[256];
    snprintf(job, sizeof job, "workqueue items=%ld seed=%ld work=%ld buckets=%ld partitions=%d",
             app->opt.items, app->opt.seed, app->opt.work, app->opt.buckets, app->partitions);
    int rc = tess_checkpoint_enable(ctx, app->opt.checkpoint_dir, job, (int)app->opt.keep);
    if (rc == TESS_OK && app->opt.overwrite) rc = tess_checkpoint_set_overwrite(ctx, 1);
    if (rc == TESS_OK) rc = tess_table_set_static(app->items); /* written once by wq_load */
    return rc;
}

/* The phase recorded in a checkpoint's user data; -1 if it is not a mark. */
static int decode_mark(const void *user, size_t len, wq_phase *phase_out)
{
    wq_mark m;
    if (user == NULL || len != sizeof m) return -1;
    memcpy(&m, user, sizeof m);
    if (memcmp(m.magic, WQ_MARK_MAGIC, sizeof m.magic) != 0 || m.phase < WQ_LOADED ||
        m.phase > WQ_DONE)
        return -1;
    *phase_out = (wq_phase)m.phase;
    return 0;
}

int wq_checkpoint_restore(tess_ctx *ctx, wq_app *app, wq_phase *phase_out)
{
    *phase_out = WQ_FRESH;
    if (!app->opt.restore) return TESS_OK;
    void *user = NULL;
    size_t len = 0;
    uint64_t epoch = 0;
    int rc = tess_checkpoint_restore(ctx, &user, &len, &epoch);
    if (rc == TESS_ERR_NOTFOUND) {
        fprintf(stderr, "%s: no checkpoint in %s; starting afresh\n", WQ_APP,
                app->opt.checkpoint_dir);
        if (app->progress) fprintf(stderr, "%s: (%s)\n", WQ_APP, tess_last_error(ctx));
        return TESS_OK;
    }
    if (rc != TESS_OK) {
        app_error(WQ_APP, "cannot restore from %s: %s", app->opt.checkpoint_dir,
                  tess_last_error(ctx));
        return rc;
    }
    if (decode_mark(user, len, phase_out) != 0) {
        app_error(WQ_APP, "%s: epoch %llu holds no work-queue phase (%zu bytes of user data)",
                  app->opt.checkpoint_dir, (unsigned long long)epoch, len);
        rc = TESS_ERR_FORMAT;
    }
    free(user);
    if (rc == TESS_OK) {
        app->restored = 1;
        app->restored_epoch = epoch;
        fprintf(stderr, "%s: restored epoch %llu (%s)\n", WQ_APP, (unsigned long long)epoch,
                phase_name(*phase_out));
    }
    return rc;
}

int wq_checkpoint_barrier(tess_ctx *ctx, const wq_app *app, wq_phase phase)
{
    if (!checkpointing(app)) return tess_barrier(ctx);
    wq_mark m = make_mark(phase);
    return tess_checkpoint_barrier(ctx, &m, sizeof m);
}

int wq_checkpoint_periodic(tess_ctx *ctx, const wq_app *app, int on)
{
    if (!checkpointing(app) || app->opt.checkpoint_seconds <= 0) return TESS_OK;
    wq_mark m = make_mark(WQ_PROCESSING);
    return tess_checkpoint_periodic(ctx, on ? app->opt.checkpoint_seconds : 0, &m, sizeof m);
}

int wq_checkpoint_finish(tess_ctx *ctx, wq_app *app)
{
    if (!checkpointing(app)) return TESS_OK;
    uint64_t epoch = 0;
    int rc = tess_checkpoint_wait(ctx, &epoch);
    if (rc != TESS_OK) {
        /* The contract: a failed epoch is removed and the previous one stays
         * usable, so the job's result is still good. */
        fprintf(stderr, "%s: a checkpoint failed (%s: %s); newest committed epoch %llu\n", WQ_APP,
                tess_strerror(rc), tess_last_error(ctx), (unsigned long long)epoch);
        app->checkpoint_failures++;
    } else if (app->progress) {
        fprintf(stderr, "%s: checkpoints committed; newest epoch %llu\n", WQ_APP,
                (unsigned long long)epoch);
    }
    return TESS_OK;
}
