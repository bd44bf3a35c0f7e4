/*
 * runtime.c — tess_init and tess_finalize: the one place that knows every
 * layer.  It starts them bottom-up (core, comm, table, sched, ckpt) and lets
 * each register the handlers of its own messages; tess_finalize stops them
 * top-down.  Below this file no layer calls one above it: upper layers plug
 * callbacks into lower ones instead (message handlers, the table intercept,
 * the scheduler's checkpoint hooks, the migration's task sink), and
 * scripts/check_layers.py checks the object files for it.  tess_get_stats is
 * here too: its figures come from several layers.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ckpt/ckpt.h"
#include "comm/comm.h"
#include "core/internal.h"
#include "sched/sched.h"
#include "table/table_internal.h"
#include "tick/tick_internal.h"
#include "tile/tile_internal.h"

static int choose_mode(tess_ctx *ctx)
{
    int want_mpi = ctx->cfg.mode == TESS_MODE_MPI ||
                   (ctx->cfg.mode == TESS_MODE_AUTO && tess__launched_by_mpi());
    if (!want_mpi) return TESS_OK;
    if (!TESS_HAVE_MPI) {
        if (ctx->cfg.mode == TESS_MODE_AUTO) {
            tess__warn(ctx, "started by an MPI launcher, but this build has no MPI: "
                            "running embedded");
            return TESS_OK;
        }
        return tess__fail(ctx, TESS_ERR_UNSUPPORTED, "this build of tessera has no MPI");
    }
    ctx->mpi = 1;
    return tess__comm_start(ctx);
}

/* Every rank learns every rank's worker count; embedded mode has one rank. */
static int build_topology(tess_ctx *ctx)
{
    ctx->worker_base = calloc((size_t)ctx->nranks + 1, sizeof *ctx->worker_base);
    if (ctx->worker_base == NULL) return TESS_ERR_NOMEM;
    int *counts = calloc((size_t)ctx->nranks, sizeof *counts);
    if (counts == NULL) return TESS_ERR_NOMEM;
    counts[ctx->rank] = ctx->workers;
    int rc = ctx->mpi ? tess__comm_allgather_workers(ctx, counts) : TESS_OK;
    for (int r = 0; rc == TESS_OK && r < ctx->nranks; r++)
        ctx->worker_base[r + 1] = ctx->worker_base[r] + counts[r];
    ctx->workers_total = ctx->worker_base[ctx->nranks];
    free(counts);
    return rc;
}

/* Each layer registers the handlers of its messages before any can arrive:
 * the progress engine dispatches only once tess_main() started the workers
 * (a message that came earlier waits in MPI). */
static int register_handlers(tess_ctx *ctx)
{
    int rc = tess__comm_handlers_init(ctx);
    if (rc == TESS_OK) rc = tess__table_handlers_init(ctx);
    if (rc == TESS_OK) rc = tess__sched_handlers_init(ctx);
    if (rc == TESS_OK) rc = tess__ckpt_handlers_init(ctx);
    return rc;
}

static int start_layers(tess_ctx *ctx)
{
    int rc = tess__table_layer_create(ctx); /* the layers' own state, before anything runs */
    if (rc == TESS_OK) rc = tess__sched_create(ctx);
    if (rc == TESS_OK) rc = register_handlers(ctx);
    if (rc == TESS_OK) rc = choose_mode(ctx);
    if (rc == TESS_OK) rc = build_topology(ctx);
    if (rc == TESS_OK) rc = tess__fault_init(ctx);
    if (rc == TESS_OK && ctx->cfg.slow_rank >= ctx->nranks) /* a throttle that slows nobody */
        rc = tess__fail(ctx, TESS_ERR_INVAL, "the slowed rank %d is not one of the %d rank%s",
                        ctx->cfg.slow_rank, ctx->nranks, ctx->nranks == 1 ? "" : "s");
    if (rc == TESS_OK) rc = tess__slots_create(ctx);
    if (rc == TESS_OK) rc = tess__queue_create(ctx);
    if (rc == TESS_OK) rc = tess__inboxes_create(ctx);
    if (rc == TESS_OK) rc = tess__migrate_create(ctx);
    if (rc == TESS_OK) rc = tess__steal_create(ctx);
    if (rc == TESS_OK) rc = tess__sched_share_counts(ctx);
    if (rc != TESS_OK) return rc;
    if (ctx->views == NULL) ctx->views = calloc((size_t)ctx->nranks, sizeof *ctx->views);
    return ctx->views != NULL ? TESS_OK : TESS_ERR_NOMEM;
}

int tess_init(const tess_config *cfg, tess_ctx **ctx_out)
{
    if (ctx_out == NULL) return TESS_ERR_INVAL;
    if (cfg != NULL && (cfg->workers < 0 || cfg->workers > 4096)) {
        tess__warn(NULL, "worker count must be in [1, 4096], got %d", cfg->workers);
        return TESS_ERR_INVAL;
    }
    tess_ctx *ctx = tess__ctx_alloc(cfg);
    if (ctx == NULL) return TESS_ERR_NOMEM;
    ctx->signals_blocked = ctx->cfg.handle_signals && tess__signals_block() == TESS_OK;
    int rc = start_layers(ctx);
    if (rc != TESS_OK) {
        tess__warn(ctx, "cannot start: %s",
                   ctx->last_error[0] ? ctx->last_error : tess_strerror(rc));
        tess_finalize(ctx);
        return rc;
    }
    if (ctx->signals_blocked) tess__signals_install(ctx->rank, ctx->nranks);
    *ctx_out = ctx;
    return TESS_OK;
}

static void free_slot_buffers(tess_ctx *ctx)
{
    if (ctx->slots == NULL) return;
    for (int i = 0; i <= ctx->workers; i++) tess__slot_buffers_free(&ctx->slots[i]);
}

void tess_finalize(tess_ctx *ctx)
{
    if (ctx == NULL) return;
    if (tess__fault(ctx, "shutdown")) _exit(1); /* a rank that dies while the job ends */
    tess__ckpt_quiesce(ctx);                    /* the last checkpoint's writers still send */
    tess__workers_stop(ctx);
    tess__comm_stop(ctx);
    tess__ckpt_free(ctx);
    tess__inboxes_destroy(ctx);
    tess__queue_destroy(ctx);
    tess__steal_destroy(ctx);
    tess__migrate_destroy(ctx);
    free_slot_buffers(ctx);
    tess__tables_free(ctx);
    tess__tick_free(ctx);
    tess__tile_free(ctx);
    tess__comm_share_requests_free(ctx);
    tess__sched_destroy(ctx);
    tess__table_layer_destroy(ctx);
    if (ctx->signals_blocked) tess__signals_release(); /* every thread has ended */
    tess__ctx_free(ctx);
}

void tess_get_stats(const tess_ctx *ctx, tess_stats *st)
{
    memset(st, 0, sizeof *st);
    tess__comm_stats(ctx, st);
    tess__table_stats(ctx, st);
    tess__sched_stats(ctx, st);
}
