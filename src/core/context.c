/*
 * context.c — the context object's own parts: allocation, slots, topology
 * accessors and statistics.  tess_init/tess_finalize, which start and stop
 * every layer, live in src/runtime.c.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

void tess__rwlock_init(pthread_rwlock_t *rw, int kind)
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, kind);
    pthread_rwlock_init(rw, &attr);
    pthread_rwlockattr_destroy(&attr);
}

static void tess__slot_init(tess__slot *s, tess_ctx *ctx, int index)
{
    memset(s, 0, sizeof *s);
    s->index = index;
    s->ctx = ctx;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

/* Frees the slot's own parts; its table buffers are the table layer's. */
static void tess__slot_destroy(tess__slot *s)
{
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

int tess__check_control(tess_ctx *ctx, const char *what)
{
    TESS_RETURN_IF(ctx, !ctx->started || ctx->rank != 0, TESS_ERR_MISUSE,
                   "%s outside the control function", what);
    TESS_RETURN_IF(ctx, tess__current_slot(ctx) != &ctx->slots[ctx->workers], TESS_ERR_MISUSE,
                   "%s called from a kernel", what);
    return TESS_OK;
}

int tess__check_at_rest(tess_ctx *ctx, const char *what)
{
    if (!ctx->started) return TESS_OK;
    TESS_RETURN_IF(ctx, tess__current_slot(ctx) != &ctx->slots[ctx->workers], TESS_ERR_MISUSE,
                   "%s called from a kernel (only the control function, between barriers)", what);
    pthread_mutex_lock(&ctx->ctl_mu);
    int running = ctx->rank == 0 && ctx->run_seq != ctx->rest_seq;
    pthread_mutex_unlock(&ctx->ctl_mu);
    TESS_RETURN_IF(ctx, running, TESS_ERR_MISUSE,
                   "%s while kernels may run: call tess_barrier() after tess_run() first", what);
    return TESS_OK;
}

tess_ctx *tess__ctx_alloc(const tess_config *cfg)
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

int tess__slots_create(tess_ctx *ctx)
{
    ctx->slots = calloc((size_t)ctx->workers + 1, sizeof *ctx->slots);
    if (ctx->slots == NULL) return TESS_ERR_NOMEM;
    for (int i = 0; i <= ctx->workers; i++) tess__slot_init(&ctx->slots[i], ctx, i);
    return TESS_OK;
}

void tess__ctx_free(tess_ctx *ctx)
{
    if (current_slot != NULL && current_slot->ctx == ctx) current_slot = NULL;
    if (ctx->slots != NULL)
        for (int i = 0; i <= ctx->workers; i++) tess__slot_destroy(&ctx->slots[i]);
    tess__registry_free(&ctx->reg);
    TESS_FREE_ALL(ctx->slots, ctx->threads, ctx->worker_base, ctx->views, ctx->node_counts);
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
