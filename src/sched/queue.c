/*
 * queue.c — the task queue of a rank and its worker threads.
 *
 * A RUN message becomes one task per kernel instance that lives on this rank
 * (instance i goes where partition i of the locality table is stored).
 * Workers take the biggest task first (size = keys in the locality
 * partition), so the long tasks start early and the short ones fill the end.
 * When the last task of the rank finishes, the rank tells rank 0 which run
 * sequence it has completed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/bytes.h"
#include "sched/queue_impl.h"
#include "table/table_internal.h"

/* How long a launch waits for its messages to the other ranks to leave. */
#define LAUNCH_HANDOFF_SECONDS 200e-6
/* How long the job has to report a kernel's failure before this rank ends it. */
#define KERNEL_FAIL_GRACE_SECONDS 2.0

int tess__queue_create(tess_ctx *ctx)
{
    tess__task_queue *q = calloc(1, sizeof *q);
    if (q == NULL) return TESS_ERR_NOMEM;
    q->busy = calloc((size_t)ctx->workers, sizeof *q->busy);
    q->busy_instance = calloc((size_t)ctx->workers, sizeof *q->busy_instance);
    q->busy_locality = calloc((size_t)ctx->workers, sizeof *q->busy_locality);
    q->busy_size = calloc((size_t)ctx->workers, sizeof *q->busy_size);
    q->busy_started = calloc((size_t)ctx->workers, sizeof *q->busy_started);
    q->pos = calloc((size_t)ctx->workers, sizeof *q->pos);
    q->pos_len = calloc((size_t)ctx->workers, sizeof *q->pos_len);
    q->pos_instance = malloc((size_t)ctx->workers * sizeof *q->pos_instance);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    ctx->queue = q;
    if (!q->busy || !q->busy_instance || !q->busy_locality || !q->busy_size || !q->busy_started ||
        !q->pos || !q->pos_len || !q->pos_instance)
        return TESS_ERR_NOMEM;
    for (int w = 0; w < ctx->workers; w++) q->pos_instance[w] = -1;
    return TESS_OK;
}

static void tess__args_release(shared_args *a)
{
    if (a != NULL && atomic_fetch_sub(&a->refs, 1) == 1) free(a);
}

void tess__queue_destroy(tess_ctx *ctx)
{
    tess__task_queue *q = ctx->queue;
    if (q == NULL) return;
    for (int i = q->next; i < q->ntasks; i++) tess__args_release(q->tasks[i].args);
    for (int w = 0; q->pos && w < ctx->workers; w++) free(q->pos[w]);
    TESS_FREE_ALL(q->tasks, q->busy, q->busy_instance, q->busy_locality, q->busy_size,
                  q->busy_started, q->pos, q->pos_len, q->pos_instance, q->assigned);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
    ctx->queue = NULL;
}

static int by_size_desc(const void *a, const void *b)
{
    const tess_task *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return x->instance - y->instance;
}

/* Caller holds q->mu.  Removes the taken prefix, appends, re-sorts. */
static int queue_add(tess__task_queue *q, const tess_task *tasks, int n)
{
    if (q->ntasks > q->next)
        memmove(q->tasks, q->tasks + q->next, (size_t)(q->ntasks - q->next) * sizeof *q->tasks);
    q->ntasks -= q->next;
    q->next = 0;
    if (q->ntasks + n > q->cap) {
        int cap = q->cap ? q->cap : 64;
        while (cap < q->ntasks + n) cap *= 2;
        tess_task *grown = realloc(q->tasks, (size_t)cap * sizeof *grown);
        if (grown == NULL) return TESS_ERR_NOMEM;
        q->tasks = grown;
        q->cap = cap;
    }
    if (n > 0) memcpy(q->tasks + q->ntasks, tasks, (size_t)n * sizeof *tasks);
    q->ntasks += n;
    if (n > 0) atomic_fetch_add(&q->added, 1);
    if (q->ntasks > 1) qsort(q->tasks, (size_t)q->ntasks, sizeof *q->tasks, by_size_desc);
    return TESS_OK;
}

/* Tell rank 0 that everything up to q->seq is done (q->mu held on entry, released). */
static void report_if_idle(tess_ctx *ctx, tess__task_queue *q)
{
    tess__queue_try_cut(ctx, q); /* CpBarrier: the cut comes before this rank says done */
    int idle = q->next == q->ntasks && q->running == 0 && q->reported_seq < q->seq;
    if (idle && q->error == 0 && tess__fault(ctx, "barrier")) {
        q->error = TESS_ERR_IO;
        snprintf(q->error_msg, sizeof q->error_msg,
                 "rank %d: injected fault at the barrier (TESS_FAULT)", ctx->rank);
    }
    tess__done_msg d = {.seq = q->seq, .error = q->error};
    uint32_t stolen = 0;
    if (idle) {
        memcpy(d.msg, q->error_msg, sizeof d.msg);
        q->reported_seq = q->seq;
        q->error = 0;
        q->error_msg[0] = '\0';
        stolen = q->stolen; /* steal.c: finished, and reported before this DONE */
        q->stolen = 0;
        /* every task ran and flushed: what this rank's kernels sent is final;
         * resting first, so a write applied after the snapshot is reported */
        atomic_store(&ctx->sched->resting_seq, q->seq);
        d.writes_sent = atomic_load(&ctx->writes_sent);
        d.writes_applied = atomic_load(&ctx->writes_applied);
    }
    pthread_mutex_unlock(&q->mu);
    if (stolen) tess__send(ctx, 0, TESS_MSG_STEAL_COVERED, &stolen, sizeof stolen, NULL, 0);
    if (idle && !stolen && d.error == 0) tess__sched_publish_done(ctx, &d);
    if (idle) tess__send(ctx, 0, TESS_MSG_DONE, &d, sizeof d, NULL, 0);
}

/* ---------------------------------------------------------------- runs */

/* The restored record of `instance`, or NULL. */
static const uint8_t *find_record(const uint8_t *recs, size_t len, int instance,
                                  uint32_t *state_out, uint32_t *plen_out)
{
    tess__reader r = tess__reader_of(recs, len);
    uint32_t n = 0, inst, state, plen;
    const uint8_t *pos;
    if (!tess__take_le32(&r, &n)) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!tess__take_le32(&r, &inst) || !tess__take_le32(&r, &state) ||
            !tess__take_le32(&r, &plen) || !tess__take_bytes(&r, plen, &pos))
            return NULL;
        if (inst == (uint32_t)instance) {
            *state_out = state;
            *plen_out = plen;
            return pos;
        }
    }
    return NULL;
}

/* Tasks of this rank; an instance restored as finished is left out. */
static int build_tasks(tess_ctx *ctx, const run_msg *r, shared_args *args, tess_task **out)
{
    tess__task_queue *q = ctx->queue;
    tess_table *loc = r->locality >= 0 ? ctx->tables[r->locality] : NULL;
    int every = r->locality == TESS__EVERY_WORKER_PLACEMENT;
    int first = ctx->worker_base[ctx->rank], last = first + ctx->workers;
    const uint8_t *recs = args->data + args->len;
    tess_task *tasks = calloc((size_t)r->instances + 1, sizeof *tasks);
    int *assigned = calloc((size_t)r->instances + 1, sizeof *assigned);
    if (tasks == NULL || assigned == NULL) return -1;
    int n = 0, na = 0;
    for (int i = 0; i < r->instances; i++) {
        int owner = loc ? tess_table_owner(loc, i) : i % ctx->nranks;
        if (every) owner = i >= first && i < last ? ctx->rank : -1;
        if (owner != ctx->rank) continue;
        assigned[na++] = i;
        uint32_t state = 0, plen = 0;
        const uint8_t *pos = find_record(recs, r->restore_len, i, &state, &plen);
        if (pos != NULL && state == TASK_FINISHED) continue;
        tasks[n] = (tess_task){.ctx = ctx,
                               .kernel = r->kernel,
                               .instance = i,
                               .instances = r->instances,
                               .args = args,
                               .locality = r->locality,
                               .size = loc ? tess__table_local_size(loc, i) : 0,
                               .restored = pos,
                               .restored_len = plen};
        n++;
    }
    free(q->assigned);
    q->assigned = assigned; /* q->mu held by the caller */
    q->nassigned = na;
    q->run_kernel = r->kernel;
    tess__comm_fail_clear(ctx); /* the job went on past an earlier failure */
    atomic_store(&ctx->run_failed, 0);
    *out = tasks;
    return n;
}

void tess__sched_on_run(tess_ctx *ctx, int src, uint32_t type, const uint8_t *payload, size_t len)
{
    (void)src, (void)type;
    run_msg r;
    if (tess__msg_head(&r, sizeof r, payload, len) != 0) return;
    if (len - sizeof r < r.restore_len) return;
    tess__task_queue *q = ctx->queue;
    pthread_mutex_lock(&q->mu);
    if (r.seq <= q->seq) { /* taken from rank 0's board already (board.c) */
        pthread_mutex_unlock(&q->mu);
        return;
    }
    shared_args *args = malloc(sizeof *args + len - sizeof r);
    if (args == NULL) abort();
    args->len = len - sizeof r - r.restore_len;
    memcpy(args->data, (const uint8_t *)payload + sizeof r, len - sizeof r);
    atomic_store(&ctx->sched->resting_seq, 0); /* this run's DONE will count its writes */
    tess_task *tasks = NULL;
    int n = build_tasks(ctx, &r, args, &tasks);
    if (n < 0) abort();
    atomic_store(&args->refs, n + 1);
    if (queue_add(q, tasks, n) != TESS_OK) abort();
    q->seq = r.seq;
    atomic_store_explicit(&q->run_taken, r.seq, memory_order_relaxed);
    tess__queue_wake(ctx, q);
    report_if_idle(ctx, q);
    free(tasks);
    tess__args_release(args);
}

int tess__sched_launch(tess_ctx *ctx, uint64_t seq, int kernel, int instances, int locality,
                       const void *args, size_t len, const void *restored, size_t rlen)
{
    run_msg r = {.seq = seq,
                 .kernel = kernel,
                 .instances = instances,
                 .locality = locality,
                 .restore_len = (uint32_t)rlen};
    uint8_t *body = malloc(len + rlen + 1);
    if (body == NULL) return TESS_ERR_NOMEM;
    if (len) memcpy(body, args, len);
    if (rlen) memcpy(body + len, restored, rlen);
    int rc = TESS_OK;
    /* The other ranks first, and their messages taken by the progress
     * engine before this rank's workers start: once they compute, a bound
     * rank's progress thread got its core back only when they finished
     * (PageRank on Gnutella, 2 ranks: the other rank started 400-470 us
     * late, every iteration 0.9-1.1 ms instead of 0.5).  Not needed when
     * every other rank takes the run from the board (board.c). */
    int beside = tess__board_post(ctx, &r, body, len + rlen);
    for (int i = 1; i <= ctx->nranks && rc == TESS_OK; i++) {
        int rank = (ctx->rank + i) % ctx->nranks;
        if (rank == ctx->rank && ctx->nranks > 1 && !beside)
            tess__comm_wait_sent(ctx, LAUNCH_HANDOFF_SECONDS);
        rc = tess__send(ctx, rank, TESS_MSG_RUN, &r, sizeof r, body, len + rlen);
    }
    free(body);
    return rc;
}

static int run_task(tess_ctx *ctx, int w, tess_task *t)
{
    tess_kernel_fn fn = (tess_kernel_fn)ctx->reg.kernels[t->kernel].fn;
    t->worker = ctx->worker_base[ctx->rank] + w;
    if (tess__fault(ctx, "kernel"))
        return tess__fail(ctx, TESS_ERR_IO, "injected fault (TESS_FAULT)");
    return fn(t, t->args->data, t->args->len);
}

/* Which task failed, in the user's terms: the faces' own kernels (tess.tick,
 * tess.tile) are named by what the user started, not by the kernel behind it. */
static void describe_task(char *buf, size_t len, const char *kernel, int instance, int rank)
{
    if (strcmp(kernel, "tess.tick") == 0)
        snprintf(buf, len, "tick process %d on rank %d", instance, rank);
    else if (strcmp(kernel, "tess.tile") == 0)
        snprintf(buf, len, "tiles run, rank %d worker %d", rank, instance);
    else snprintf(buf, len, "kernel %.40s instance %d on rank %d", kernel, instance, rank);
}

static void record_error(tess_ctx *ctx, tess__task_queue *q, const char *kernel, int instance,
                         int rc)
{
    if (rc >= 0 || q->error != 0) return;
    q->error = rc;
    char detail[512], who[72]; /* with the 400 bytes of detail, fits error_msg */
    tess__last_error_copy(ctx, detail, sizeof detail);
    describe_task(who, sizeof who, kernel, instance, ctx->rank);
    snprintf(q->error_msg, sizeof q->error_msg, "%s: %.400s", who,
             detail[0] ? detail : tess_strerror(rc));
    /* The barrier reports it, unless other ranks' kernels wait for this
     * one's messages (a tile or tick exchange): then the job must end. */
    atomic_store(&ctx->run_failed, 1);
    tess__comm_fail_after(ctx, KERNEL_FAIL_GRACE_SECONDS, q->error_msg);
}

/* q->mu held, released and retaken: flush this worker's buffers (`dry`: its
 * queue ran dry; the flush then counts in the rank's finish-time estimate). */
static void flush_locked(tess_ctx *ctx, tess__task_queue *q, tess__slot *slot, int dry)
{
    pthread_mutex_unlock(&q->mu);
    double started = tess_now();
    int frc = tess__slot_flush_all(slot);
    if (dry) tess__steal_after_flush(ctx, started);
    else tess__throttle(ctx, started);
    pthread_mutex_lock(&q->mu);
    record_error(ctx, q, "(flush)", -1, frc);
}

/*
 * Before sleeping, watch for new tasks a little while (q->mu held on entry
 * and exit).  A wake-up through the condition variable takes 10-30 us on
 * these virtual machines, and an iteration of a short kernel pays two (the
 * run's tasks reach the workers, their end reaches the control function):
 * on a 1000-vertex PageRank that was more than the iteration's work.
 */
static void spin_then_wait(tess_ctx *ctx, tess__task_queue *q)
{
    unsigned seen = atomic_load(&q->added);
    int beside = tess__board_sleeps(ctx); /* a rank beside rank 0 with its board */
    pthread_mutex_unlock(&q->mu);
    if (!beside || ctx->sched->idle_spin_seconds <= 0) {
        tess__spin_until_changed(&q->added, seen, ctx->sched->idle_spin_seconds);
    } else { /* also watch rank 0's board (board.c) */
        double until = tess_now() + ctx->sched->idle_spin_seconds;
        while (atomic_load(&q->added) == seen && !tess__board_take(ctx) && tess_now() < until)
            sched_yield();
    }
    uint32_t bell = tess__board_bell(ctx); /* before the last look */
    pthread_mutex_lock(&q->mu);
    if (q->stop || q->next < q->ntasks || tess__queue_cut_pending_async(q)) return;
    if (!beside) {
        pthread_cond_wait(&q->cv, &q->mu);
        return;
    }
    pthread_mutex_unlock(&q->mu);
    tess__board_sleep(ctx, bell);
    pthread_mutex_lock(&q->mu);
}

void tess__queue_wake(tess_ctx *ctx, tess__task_queue *q)
{
    pthread_cond_broadcast(&q->cv);
    tess__board_ring(ctx, ctx->rank);
}

/* Tell the progress engine how many workers rest (q->mu held). */
static void note_resting(tess_ctx *ctx, const tess__task_queue *q)
{
    if (q->at_rest == ctx->workers && atomic_load(&ctx->workers_resting) < ctx->workers)
        atomic_store(&ctx->all_resting_since_us, (uint64_t)(tess_now() * 1e6));
    atomic_store(&ctx->workers_resting, q->at_rest);
}

/* No work: flush once the queue is empty, then sleep at rest. */
static void idle_step(tess_ctx *ctx, tess__task_queue *q, tess__slot *slot, int *holding)
{
    if (*holding) {
        flush_locked(ctx, q, slot, 1);
        *holding = 0;
        q->running--;
        report_if_idle(ctx, q);
        pthread_mutex_lock(&q->mu);
        return;
    }
    q->at_rest++;
    note_resting(ctx, q);
    tess__queue_try_cut(ctx, q);
    if (!q->stop && q->next == q->ntasks && !tess__queue_cut_pending_async(q))
        spin_then_wait(ctx, q);
    q->at_rest--;
    note_resting(ctx, q);
}

/*
 * TESS_EVERY_WORKER promises every worker one instance.  A worker whose
 * instance returned at once (the tiles face's instances other than the
 * controller's) would otherwise take a sibling of the same run, and the
 * rank's first worker could be left with none: it waits until the run's
 * other instances are taken.  Caller holds q->mu and still holds its
 * reference to `run`, so a pending task with that args pointer is of the
 * same run.
 */
static void wait_siblings_taken(tess__task_queue *q, const shared_args *run)
{
    while (!q->stop && q->next < q->ntasks && q->tasks[q->next].args == run) {
        pthread_mutex_unlock(&q->mu);
        nanosleep(&(struct timespec){0, 20000}, NULL);
        pthread_mutex_lock(&q->mu);
    }
}

/*
 * A worker keeps its write buffers across consecutive tasks and flushes them
 * only when the queue is empty: the per-thread combining arrays are then
 * merged once per worker and epoch instead of once per task.  The worker
 * counts as running until it has flushed, so the rank reports "done" only
 * when every write of its tasks has left the buffers.  A pending CpPeriodic
 * cut parks it between tasks (after a flush), so no task starts meanwhile.
 */
static void *worker_main(void *arg)
{
    tess__slot *slot = arg;
    tess_ctx *ctx = slot->ctx;
    tess__task_queue *q = ctx->queue;
    int w = slot->index, holding = 0; /* counted in q->running with unflushed buffers */
    char name[16];
    snprintf(name, sizeof name, "tess-worker-%u", (unsigned)w % 1000u);
    pthread_setname_np(pthread_self(), name); /* for top -H, perf */
    tess__set_current_slot(slot);
    pthread_mutex_lock(&q->mu);
    while (!q->stop) {
        if (tess__queue_cut_pending_async(q)) {
            if (holding) flush_locked(ctx, q, slot, 0);
            tess__queue_park(ctx, q);
            continue;
        }
        if (q->next == q->ntasks) {
            idle_step(ctx, q, slot, &holding);
            continue;
        }
        tess_task t = q->tasks[q->next++];
        if (!holding) q->running++;
        holding = 1;
        q->busy[w] = ctx->reg.kernels[t.kernel].name;
        q->busy_instance[w] = t.instance;
        q->busy_locality[w] = t.locality;
        q->busy_size[w] = t.size;
        double started = tess_now();
        q->busy_started[w] = started;
        pthread_mutex_unlock(&q->mu);
        int rc = run_task(ctx, w, &t);
        tess__steal_after_task(ctx, t.size, started);
        pthread_mutex_lock(&q->mu);
        q->busy[w] = NULL;
        record_error(ctx, q, ctx->reg.kernels[t.kernel].name, t.instance, rc);
        if (t.locality == TESS__EVERY_WORKER_PLACEMENT) wait_siblings_taken(q, t.args);
        tess__args_release(t.args);
    }
    if (holding) q->running--;
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

int tess__queue_idle_workers(tess_ctx *ctx)
{
    tess__task_queue *q = ctx->queue;
    if (q == NULL) return ctx->workers;
    pthread_mutex_lock(&q->mu);
    int n = q->stop ? ctx->workers : q->at_rest;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void tess__sched_set_ckpt_hooks(tess_ctx *ctx, const tess__sched_ckpt_hooks *hooks)
{
    ctx->queue->ckpt_hooks = *hooks;
}

const tess__sched_ckpt_hooks *tess__sched_ckpt_hooks_of(tess_ctx *ctx)
{
    return &ctx->queue->ckpt_hooks;
}

/* Spinning pays only while every thread that computes has a core: with
 * more ranks' workers than cores on the machine (4 ranks on 2 cores), a
 * spinning thread takes the time slice of another rank's worker (k-means at
 * 4 ranks ran up to 3x slower).  Counted per rank (tess__rank_cores): a
 * rank that mpirun bound to its own core, whose mask shows 1 core, must
 * still spin; it did not, and every cross-rank wake-up then waited for an
 * idle vCPU to come back (an empty run and barrier on 2 bound ranks took
 * 450 us instead of 45).  The window, 200 us, is a cross-rank round trip
 * (about 25 us) plus the usual skew between ranks' ends of a step: with
 * 50 us, PageRank on email-Eu-core under mpirun -np 2 fell into stretches
 * where every worker had gone to sleep by the time the next run came, each
 * wake-up then slow, at 300-370 us per iteration against 75 (mean 200 us;
 * 65-75 us with 200). */
static double idle_spin_for(const tess_ctx *ctx)
{
    return ctx->workers <= tess__rank_cores() ? 200e-6 : 0.0;
}

int tess__workers_start(tess_ctx *ctx)
{
    ctx->sched->idle_spin_seconds = idle_spin_for(ctx);
    ctx->threads = calloc((size_t)ctx->workers, sizeof *ctx->threads);
    TESS_RETURN_IF(ctx, ctx->threads == NULL, TESS_ERR_NOMEM, "out of memory");
    for (int w = 0; w < ctx->workers; w++) {
        if (pthread_create(&ctx->threads[w], NULL, worker_main, &ctx->slots[w]) == 0) continue;
        ctx->workers = w; /* join only what started */
        tess__workers_stop(ctx);
        return tess__fail(ctx, TESS_ERR_NOMEM, "cannot start worker thread %d", w);
    }
    return TESS_OK;
}

void tess__workers_stop(tess_ctx *ctx)
{
    tess__task_queue *q = ctx->queue;
    if (q == NULL || ctx->threads == NULL) return;
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    tess__queue_wake(ctx, q);
    pthread_mutex_unlock(&q->mu);
    for (int w = 0; w < ctx->workers; w++) pthread_join(ctx->threads[w], NULL);
    free(ctx->threads);
    ctx->threads = NULL;
}

void tess__sched_describe_busy(tess_ctx *ctx, char *buf, size_t len)
{
    tess__task_queue *q = ctx->queue;
    size_t off = 0;
    buf[0] = '\0';
    pthread_mutex_lock(&q->mu);
    for (int w = 0; w < ctx->workers && off < len; w++) {
        if (q->busy[w] == NULL) continue;
        int n = snprintf(buf + off, len - off, "%sworker %d (%s#%d)", off ? ", " : "",
                         ctx->worker_base[ctx->rank] + w, q->busy[w], q->busy_instance[w]);
        if (n > 0) off += (size_t)n;
    }
    int queued = q->ntasks - q->next;
    pthread_mutex_unlock(&q->mu);
    if (queued > 0 && off < len)
        snprintf(buf + off, len - off, "%s%d tasks queued", off ? ", " : "", queued);
}

int tess_task_instance(const tess_task *t) { return t->instance; }
int tess_task_instances(const tess_task *t) { return t->instances; }
int tess_task_worker(const tess_task *t) { return t->worker; }
tess_ctx *tess_task_ctx(const tess_task *t) { return t->ctx; }
void *tess_task_app(const tess_task *t) { return t->ctx->app; }

/* ---- work stealing (steal.c): what may be taken, taking, and receiving ---- */

/* Caller holds q->mu.  A task may move if it has a locality partition and no
 * running task uses the same one (its partitions move with it). */
static int stealable(tess_ctx *ctx, const tess__task_queue *q, const tess_task *t)
{
    if (t->locality < 0) return 0;
    int group = ctx->tables[t->locality]->group;
    for (int w = 0; w < ctx->workers; w++)
        if (q->busy[w] != NULL && q->busy_locality[w] >= 0 && q->busy_instance[w] == t->instance &&
            ctx->tables[q->busy_locality[w]]->group == group)
            return 0;
    return 1;
}

void tess__queue_load_of(tess_ctx *ctx, double seconds_per_key, tess__queue_load *out)
{
    tess__task_queue *q = ctx->queue;
    memset(out, 0, sizeof *out);
    out->biggest_instance = -1;
    double now = tess_now();
    pthread_mutex_lock(&q->mu);
    out->seq = q->seq;
    for (int w = 0; w < ctx->workers; w++) {
        if (q->busy[w] == NULL) continue;
        out->running++;
        double left = (double)q->busy_size[w] * seconds_per_key - (now - q->busy_started[w]);
        if (left > 0) out->running_seconds += left;
    }
    for (int i = q->next; i < q->ntasks; i++) { /* sorted biggest first */
        const tess_task *t = &q->tasks[i];
        if (!stealable(ctx, q, t)) continue;
        if (out->biggest_instance < 0) {
            out->biggest_instance = t->instance;
            out->biggest_group = ctx->tables[t->locality]->group;
            out->biggest_size = t->size;
        }
        out->queued++;
        out->queued_size += t->size;
    }
    pthread_mutex_unlock(&q->mu);
}

/* A stolen task: this header, its args, then its restored position (a task
 * of a run restored from a checkpoint continues where it was on the thief). */
typedef struct stolen_hdr {
    int32_t kernel, instance, instances, locality;
    uint64_t args_len;
    uint32_t restored_len, has_restored;
} stolen_hdr;

static int encode_task(const tess_task *t, uint8_t **blob, size_t *len)
{
    stolen_hdr h = {t->kernel,    t->instance,     t->instances,       t->locality,
                    t->args->len, t->restored_len, t->restored != NULL};
    size_t body = h.args_len + h.restored_len;
    uint8_t *grown = realloc(*blob, *len + sizeof h + body);
    if (grown == NULL) return TESS_ERR_NOMEM;
    memcpy(grown + *len, &h, sizeof h);
    memcpy(grown + *len + sizeof h, t->args->data, h.args_len);
    if (h.restored_len) memcpy(grown + *len + sizeof h + h.args_len, t->restored, h.restored_len);
    *blob = grown;
    *len += sizeof h + body;
    return TESS_OK;
}

/* Caller holds q->mu.  The latest run's instances on this rank, as a
 * checkpoint's cut describes them (describe_tasks), follow stolen tasks. */
static void forget_assigned(tess__task_queue *q, int instance)
{
    for (int i = 0; i < q->nassigned; i++)
        if (q->assigned[i] == instance) {
            q->assigned[i] = q->assigned[--q->nassigned];
            return;
        }
}

static void add_assigned(tess__task_queue *q, int instance)
{
    int *grown = realloc(q->assigned, (size_t)(q->nassigned + 1) * sizeof *grown);
    if (grown == NULL) abort(); /* a checkpoint would lose the task */
    q->assigned = grown;
    q->assigned[q->nassigned++] = instance;
}

/* Caller holds q->mu: move the tasks on (group, instance) out into *blob. */
static int take_same(tess_ctx *ctx, tess__task_queue *q, int group, int instance, uint8_t **blob,
                     size_t *len)
{
    int kept = q->next, rc = TESS_OK;
    for (int i = q->next; i < q->ntasks; i++) {
        tess_task *t = &q->tasks[i];
        if (t->locality >= 0 && t->instance == instance &&
            ctx->tables[t->locality]->group == group && rc == TESS_OK &&
            (rc = encode_task(t, blob, len)) == TESS_OK) {
            if (t->kernel == q->run_kernel) forget_assigned(q, t->instance);
            tess__args_release(t->args);
            continue;
        }
        q->tasks[kept++] = *t;
    }
    q->ntasks = kept;
    return rc;
}

int tess__queue_take(tess_ctx *ctx, uint64_t max_size, uint8_t **blob_out, size_t *len_out,
                     int *group_out, int *instance_out, int *tasks_out)
{
    tess__task_queue *q = ctx->queue;
    pthread_mutex_lock(&q->mu);
    int i = q->next;
    while (i < q->ntasks && (q->tasks[i].size > max_size || !stealable(ctx, q, &q->tasks[i]))) i++;
    if (i == q->ntasks) {
        pthread_mutex_unlock(&q->mu);
        return 0;
    }
    int group = ctx->tables[q->tasks[i].locality]->group, instance = q->tasks[i].instance;
    uint8_t *blob = NULL;
    size_t len = 0;
    int before = q->ntasks;
    int rc = take_same(ctx, q, group, instance, &blob, &len);
    *tasks_out = before - q->ntasks;
    if (rc != TESS_OK) abort(); /* tasks left the queue half encoded */
    *blob_out = blob;
    *len_out = len;
    *group_out = group;
    *instance_out = instance;
    report_if_idle(ctx, q); /* the taken task may have been the last one */
    return 1;
}

static int decode_task(tess_ctx *ctx, const uint8_t *p, size_t len, size_t *off, tess_task *out)
{
    stolen_hdr h;
    if (len - *off < sizeof h) return TESS_ERR_FORMAT;
    memcpy(&h, p + *off, sizeof h);
    size_t body = h.args_len + h.restored_len;
    if (h.args_len > len - *off - sizeof h || h.restored_len > len - *off - sizeof h - h.args_len ||
        h.locality < 0 || h.locality >= ctx->ntables)
        return TESS_ERR_FORMAT;
    shared_args *args = malloc(sizeof *args + body);
    if (args == NULL) return TESS_ERR_NOMEM;
    atomic_store(&args->refs, 1);
    args->len = h.args_len;
    memcpy(args->data, p + *off + sizeof h, body);
    *off += sizeof h + body;
    tess_table *loc = ctx->tables[h.locality];
    *out = (tess_task){.ctx = ctx,
                       .kernel = h.kernel,
                       .instance = h.instance,
                       .instances = h.instances,
                       .locality = h.locality,
                       .args = args,
                       .size = tess__table_local_size(loc, h.instance),
                       .restored = h.has_restored ? args->data + h.args_len : NULL,
                       .restored_len = h.restored_len};
    return TESS_OK;
}

uint64_t tess__queue_add_stolen(tess_ctx *ctx, const uint8_t *blob, size_t len)
{
    tess__task_queue *q = ctx->queue;
    size_t off = 0;
    pthread_mutex_lock(&q->mu);
    while (off < len) {
        tess_task t;
        if (decode_task(ctx, blob, len, &off, &t) != TESS_OK || queue_add(q, &t, 1) != TESS_OK)
            abort(); /* a task of this run would be lost */
        if (t.kernel == q->run_kernel) add_assigned(q, t.instance);
        q->stolen++;
    }
    /* this rank may have reported the run done already: it will again */
    if (q->seq > 0 && q->reported_seq >= q->seq) q->reported_seq = q->seq - 1;
    atomic_store(&ctx->sched->resting_seq, 0);
    uint64_t seq = q->seq;
    tess__queue_wake(ctx, q);
    pthread_mutex_unlock(&q->mu);
    return seq;
}
