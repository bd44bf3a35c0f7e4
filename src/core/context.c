/*
 * context.c — tess_init/tess_finalize, topology accessors, slots, statistics.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "comm/comm.h"
#include "internal.h"

static __thread tess__slot *current_slot;

const char *tess_version(void) { return TESS_VERSION_STRING; }
int tess_version_number(void) { return TESS_VERSION_NUMBER; }
int tess_have_mpi(void) { return TESS_HAVE_MPI; }

double tess_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tess__deadline_after(struct timespec *ts, double seconds)
{
    clock_gettime(CLOCK_REALTIME, ts);
    long long ns = (long long)ts->tv_nsec + (long long)(seconds * 1e9);
    ts->tv_sec += (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
}

void tess__slot_init(tess__slot *s, tess_ctx *ctx, int index)
{
    memset(s, 0, sizeof *s);
    s->index = index;
    s->ctx = ctx;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

void tess__slot_destroy(tess__slot *s)
{
    tess__slot_buffers_free(s);
    free(s->reply);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

void tess__set_current_slot(tess__slot *slot) { current_slot = slot; }

tess__slot *tess__current_slot(tess_ctx *ctx)
{
    tess__slot *s = current_slot;
    if (s != NULL && s->ctx == ctx) return s;
    return &ctx->slots[ctx->workers];
}

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
static int build_topology(tess_ctx *ctx);

static int create_slots(tess_ctx *ctx)
{
    ctx->slots = calloc((size_t)ctx->workers + 1, sizeof *ctx->slots);
    if (ctx->slots == NULL) return TESS_ERR_NOMEM;
    for (int i = 0; i <= ctx->workers; i++) tess__slot_init(&ctx->slots[i], ctx, i);
    return TESS_OK;
}

static tess_ctx *ctx_alloc(const tess_config *cfg)
{
    tess_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) return NULL;
    if (cfg != NULL) ctx->cfg = *cfg;
    else tess_config_init(&ctx->cfg);
    pthread_mutex_init(&ctx->error_mu, NULL);
    pthread_mutex_init(&ctx->ctl_mu, NULL);
    pthread_cond_init(&ctx->ctl_cv, NULL);
    ctx->nranks = 1;
    ctx->workers = ctx->cfg.workers > 0 ? ctx->cfg.workers : tess__default_workers();
    return ctx;
}

int tess_init(const tess_config *cfg, tess_ctx **ctx_out)
{
    if (ctx_out == NULL) return TESS_ERR_INVAL;
    if (cfg != NULL && (cfg->workers < 0 || cfg->workers > 4096)) {
        tess__warn(NULL, "--workers must be in [1, 4096], got %d", cfg->workers);
        return TESS_ERR_INVAL;
    }
    tess_ctx *ctx = ctx_alloc(cfg);
    if (ctx == NULL) return TESS_ERR_NOMEM;
    int rc = choose_mode(ctx);
    if (rc == TESS_OK) rc = build_topology(ctx);
    if (rc == TESS_OK) rc = create_slots(ctx);
    if (rc == TESS_OK) rc = tess__queue_create(ctx);
    if (rc == TESS_OK) rc = tess__inboxes_create(ctx);
    if (rc == TESS_OK) rc = tess__steal_create(ctx);
    if (rc == TESS_OK) rc = tess__migrate_create(ctx);
    if (rc != TESS_OK) {
        tess__warn(ctx, "cannot start: %s", ctx->last_error[0] ? ctx->last_error
                                                                : tess_strerror(rc));
        tess_finalize(ctx);
        return rc;
    }
    if (ctx->cfg.handle_signals) tess__signals_install();
    if (ctx->views == NULL) ctx->views = calloc((size_t)ctx->nranks, sizeof *ctx->views);
    if (ctx->views == NULL) {
        tess_finalize(ctx);
        return TESS_ERR_NOMEM;
    }
    *ctx_out = ctx;
    return TESS_OK;
}

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

void tess_finalize(tess_ctx *ctx)
{
    if (ctx == NULL) return;
    if (current_slot != NULL && current_slot->ctx == ctx) current_slot = NULL;
    tess__ckpt_quiesce(ctx); /* the last checkpoint's writers still send */
    tess__workers_stop(ctx);
    tess__comm_stop(ctx);
    tess__ckpt_free(ctx);
    tess__inboxes_destroy(ctx);
    tess__queue_destroy(ctx);
    tess__migrate_destroy(ctx);
    tess__steal_destroy(ctx);
    if (ctx->slots != NULL)
        for (int i = 0; i <= ctx->workers; i++) tess__slot_destroy(&ctx->slots[i]);
    tess__tables_free(ctx);
    tess__tick_free(ctx);
    tess__registry_free(&ctx->reg);
    free(ctx->slots);
    free(ctx->threads);
    free(ctx->worker_base);
    free(ctx->views);
    pthread_mutex_destroy(&ctx->error_mu);
    pthread_mutex_destroy(&ctx->ctl_mu);
    pthread_cond_destroy(&ctx->ctl_cv);
    free(ctx);
}

int tess_rank(const tess_ctx *ctx) { return ctx->rank; }
int tess_nranks(const tess_ctx *ctx) { return ctx->nranks; }
int tess_workers(const tess_ctx *ctx) { return ctx->workers; }
int tess_workers_total(const tess_ctx *ctx) { return ctx->workers_total; }
int tess_is_mpi(const tess_ctx *ctx) { return ctx->mpi; }

void tess_get_stats(const tess_ctx *ctx, tess_stats *st)
{
    memset(st, 0, sizeof *st);
    st->messages_sent = atomic_load(&ctx->st_msgs_sent);
    st->bytes_sent = atomic_load(&ctx->st_bytes_sent);
    st->messages_received = atomic_load(&ctx->st_msgs_recv);
    st->bytes_received = atomic_load(&ctx->st_bytes_recv);
    st->batches_sent = atomic_load(&ctx->st_batches);
    st->updates_local = atomic_load(&ctx->st_updates_local);
    st->updates_remote = atomic_load(&ctx->st_updates_remote);
    st->wait_seconds = ctx->wait_seconds;
    st->progress_cpu_seconds = 1e-9 * (double)atomic_load(&ctx->st_progress_cpu_ns);
    st->steals = atomic_load(&ctx->st_steals);
    st->migrations_in = atomic_load(&ctx->st_mig_in);
    st->migrations_out = atomic_load(&ctx->st_mig_out);
}
