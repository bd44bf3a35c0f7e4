/*
 * cut.c — the scheduler's part of a checkpoint: making the cut when this
 * rank is at rest, and the checkpoint points where kernels park.
 *
 * The checkpoint layer (src/ckpt) asks for a cut with tess__sched_request_cut
 * and hands in the function that copies the tables; the queue calls it once
 * its workers are at rest: for CpBarrier when all its tasks are done and
 * flushed, for CpPeriodic when every worker is parked at a checkpoint point
 * or idle.  The cut also records where the run in flight stands, so that a
 * restart resumes each kernel instance from its saved position.
 */
#include <stdlib.h>
#include <string.h>
#include "core/bytes.h"
#include "sched/queue_impl.h"
#include "table/table_internal.h"

static int find_worker_at(const tess__task_queue *q, int workers, int instance)
{
    for (int w = 0; w < workers; w++)
        if (q->pos_instance[w] == instance) return w;
    return -1;
}

static int is_queued(const tess__task_queue *q, int instance)
{
    for (int i = q->next; i < q->ntasks; i++)
        if (q->tasks[i].instance == instance) return 1;
    return 0;
}

/* q->mu held, every worker at rest: what a restart needs to know about the
 * run in flight (ckpt/ckpt.h and restore.c document the layout).  Queued
 * instances are left out: they start from the beginning. */
static uint8_t *describe_tasks(tess_ctx *ctx, tess__task_queue *q, size_t *len_out)
{
    const char *name = ctx->reg.kernels[q->run_kernel].name;
    size_t len = 16 + strlen(name);
    for (int i = 0; i < q->nassigned; i++) {
        int w = find_worker_at(q, ctx->workers, q->assigned[i]);
        len += 12 + (w >= 0 ? q->pos_len[w] : 0);
    }
    uint8_t *buf = malloc(len), *at = buf;
    if (buf == NULL) abort();
    at = tess__emit_le64(at, q->seq); /* the run these instances belong to */
    at = tess__emit_le32(at, (uint32_t)strlen(name));
    memcpy(at, name, strlen(name));
    at += strlen(name);
    uint8_t *count_at = at;
    at += 4;
    uint32_t count = 0;
    for (int i = 0; i < q->nassigned; i++) {
        int inst = q->assigned[i], w = find_worker_at(q, ctx->workers, inst);
        if (w < 0 && is_queued(q, inst)) continue;
        at = tess__emit_le32(at, (uint32_t)inst);
        at = tess__emit_le32(at, w >= 0 ? TASK_AT_POSITION : TASK_FINISHED);
        at = tess__emit_le32(at, w >= 0 ? (uint32_t)q->pos_len[w] : 0);
        if (w >= 0 && q->pos_len[w]) memcpy(at, q->pos[w], q->pos_len[w]);
        at += w >= 0 ? q->pos_len[w] : 0;
        count++;
    }
    tess__put_le32(count_at, count);
    *len_out = (size_t)(at - buf);
    return buf;
}

/*
 * q->mu held.  Make the cut of the epoch asked for once this rank is ready:
 * for CpBarrier when all its tasks are done and flushed, for CpPeriodic when
 * every worker is at rest (parked at a checkpoint point or idle, its writes
 * flushed).  The copy runs without q->mu; parked workers wait for cut_done.
 */
void tess__queue_try_cut(tess_ctx *ctx, tess__task_queue *q)
{
    if (q->cut_want <= q->cut_done || q->cutting) return;
    /* a peer's marker can overtake rank 0's RUN: cut only after that run arrived */
    int ready = q->seq >= q->cut_after_seq && (q->cut_sync ? q->next == q->ntasks && q->running == 0
                                                           : q->at_rest == ctx->workers);
    if (!ready) return;
    uint64_t epoch = q->cut_want;
    size_t len = 0;
    uint8_t *tasks = q->cut_sync || q->nassigned == 0 ? NULL : describe_tasks(ctx, q, &len);
    q->cutting = 1;
    pthread_mutex_unlock(&q->mu);
    q->cut(ctx, epoch, tasks, len);
    free(tasks);
    pthread_mutex_lock(&q->mu);
    q->cutting = 0;
    q->cut_done = epoch;
    if (q->cut_want <= q->cut_done) atomic_store(&q->cut_async, 0);
    tess__queue_wake(ctx, q);
    tess__queue_try_cut(ctx, q); /* a newer epoch may have been asked for meanwhile */
}

void tess__sched_request_cut(tess_ctx *ctx, uint64_t epoch, int sync, uint64_t run_seq,
                             tess__cut_fn *cut)
{
    tess__task_queue *q = ctx->queue;
    pthread_mutex_lock(&q->mu);
    if (epoch > q->cut_want) {
        q->cut_want = epoch;
        q->cut_sync = sync;
        q->cut_after_seq = run_seq;
        q->cut = cut;
        if (!sync) atomic_store(&q->cut_async, 1);
        tess__queue_wake(ctx, q);
        tess__queue_try_cut(ctx, q);
    }
    pthread_mutex_unlock(&q->mu);
}

void tess__queue_park(tess_ctx *ctx, tess__task_queue *q)
{
    q->at_rest++;
    tess__queue_try_cut(ctx, q);
    while (tess__queue_cut_pending_async(q) && !q->stop) pthread_cond_wait(&q->cv, &q->mu);
    q->at_rest--;
}

int tess_task_checkpoint_point(tess_task *t, const void *position, size_t len)
{
    if (t == NULL || (position == NULL && len > 0) || len > 65536) return TESS_ERR_INVAL;
    tess_ctx *ctx = t->ctx;
    tess__task_queue *q = ctx->queue;
    if (!atomic_load_explicit(&q->cut_async, memory_order_relaxed)) return TESS_OK;
    int rc = tess__slot_flush_all(tess__current_slot(ctx));
    if (rc != TESS_OK) return rc;
    int w = t->worker - ctx->worker_base[ctx->rank];
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL) return TESS_ERR_NOMEM;
    if (len) memcpy(copy, position, len);
    pthread_mutex_lock(&q->mu);
    free(q->pos[w]);
    q->pos[w] = copy;
    q->pos_len[w] = len;
    q->pos_instance[w] = t->instance;
    if (tess__queue_cut_pending_async(q)) tess__queue_park(ctx, q);
    q->pos_instance[w] = -1;
    pthread_mutex_unlock(&q->mu);
    return TESS_OK;
}

const void *tess_task_restored_position(const tess_task *t, size_t *len_out)
{
    *len_out = t->restored ? t->restored_len : 0;
    return t->restored;
}
