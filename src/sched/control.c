/*
 * control.c — tess_main, tess_run and tess_barrier: the control function on
 * rank 0 and the serving loop of the other ranks.
 *
 * Barrier termination is decided by counting, never by timing: first every
 * rank reports that all its tasks of the latest run are done (after flushing
 * their writes), so no new table write can be created; then rank 0 sums the
 * writes sent to other ranks and the writes applied, over all ranks, until
 * the two sums agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sched/report_wait.h"
#include "sched/sched.h"
#include "table/table_internal.h"

typedef struct ready_msg {
    uint64_t fingerprint;
} ready_msg;

typedef struct count_rep {
    uint64_t sent, applied;
} count_rep;

static void timed_wait(tess_ctx *ctx, double seconds)
{
    struct timespec ts;
    tess__deadline_after(&ts, seconds);
    pthread_cond_timedwait(&ctx->ctl_cv, &ctx->ctl_mu, &ts);
}

static void on_done(tess_ctx *ctx, int src, uint32_t type, const uint8_t *payload, size_t len)
{
    (void)type;
    tess__done_msg d;
    if (src < 0 || src >= ctx->nranks || tess__msg_head(&d, sizeof d, payload, len) != 0) return;
    pthread_mutex_lock(&ctx->ctl_mu);
    tess__rank_view *v = &ctx->views[src];
    if (d.seq >= v->done_seq) {
        v->done_seq = d.seq;
        v->done_sent = d.writes_sent;
    }
    if (d.writes_applied > v->done_applied) v->done_applied = d.writes_applied;
    atomic_fetch_add(&ctx->sched->done_events, 1);
    if (d.error != 0 && v->error == 0) {
        v->error = d.error;
        d.msg[sizeof d.msg - 1] = '\0';
        snprintf(ctx->sched->kernel_error, sizeof ctx->sched->kernel_error, "%s", d.msg);
    }
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

static void on_shutdown(tess_ctx *ctx, int src, uint32_t type, const uint8_t *payload, size_t len)
{
    (void)src, (void)type;
    int32_t rc = 0;
    if (len >= sizeof rc) memcpy(&rc, payload, sizeof rc);
    pthread_mutex_lock(&ctx->ctl_mu);
    ctx->sched->shutdown = 1;
    ctx->sched->shutdown_rc = rc;
    tess__comm_fail_clear(ctx); /* rank 0 knows of any failure here: it ends the job */
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

static void on_ready(tess_ctx *ctx, int src, uint32_t type, const uint8_t *payload, size_t len)
{
    (void)type;
    ready_msg m;
    if (tess__msg_head(&m, sizeof m, payload, len) != 0) return;
    /* compared in wait_ready: rank 0 may still be creating its own tables */
    pthread_mutex_lock(&ctx->ctl_mu);
    ctx->sched->ready_ranks++;
    if (src >= 0 && src < ctx->nranks) ctx->views[src].fingerprint = m.fingerprint;
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

/* Rank 0: a rank at rest applied writes; its count, taken after them. */
static void on_applied(tess_ctx *ctx, int src, uint32_t type, const uint8_t *payload, size_t len)
{
    (void)type;
    uint64_t applied;
    if (src < 0 || src >= ctx->nranks ||
        tess__msg_head(&applied, sizeof applied, payload, len) != 0)
        return;
    pthread_mutex_lock(&ctx->ctl_mu);
    /* counts only grow, and reports of one link may pass a later DONE's */
    if (applied > ctx->views[src].done_applied) ctx->views[src].done_applied = applied;
    ctx->views[src].applied_reports++;
    atomic_fetch_add(&ctx->sched->done_events, 1);
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

/* ctx->applied_hook: writes were applied here, `applied` in all. */
static void after_writes_applied(tess_ctx *ctx, uint64_t applied)
{
    if (ctx->rank == 0) { /* the barrier may be watching */
        atomic_fetch_add(&ctx->sched->done_events, 1);
        return;
    }
    /* read after the count went up, as the DONE's snapshot is read after
     * resting_seq was set: one of the two holds this write */
    if (atomic_load(&ctx->sched->resting_seq) != 0 &&
        tess__send(ctx, 0, TESS_MSG_APPLIED, &applied, sizeof applied, NULL, 0) == TESS_OK)
        atomic_fetch_add(&ctx->sched->applied_reports_posted, 1); /* after it was posted */
}

static void on_count_req(tess_ctx *ctx, int src, uint32_t type, const uint8_t *payload, size_t len)
{
    (void)type;
    tess__req_hdr h;
    if (tess__msg_head(&h, sizeof h, payload, len) != 0) return;
    count_rep c = {atomic_load(&ctx->writes_sent), atomic_load(&ctx->writes_applied)};
    tess__reply(ctx, src, &h, TESS_OK, &c, sizeof c);
}

/* The ranks' reports in node-shared memory (tess__comm_share_request): a
 * cache line each, with what DONE and APPLIED also carry. */
static void attach_counts(tess_ctx *ctx, uint8_t *const *ptrs, void *arg)
{
    (void)arg;
    if (ptrs[ctx->rank] == NULL) return; /* nothing shared: messages only */
    ctx->node_counts = calloc((size_t)ctx->nranks, sizeof *ctx->node_counts);
    for (int r = 0; ctx->node_counts != NULL && r < ctx->nranks; r++)
        ctx->node_counts[r] = (tess__node_counts *)(void *)ptrs[r];
    if (ctx->node_counts != NULL)
        tess__publish_max(&ctx->node_counts[ctx->rank]->applied, atomic_load(&ctx->writes_applied));
}

int tess__sched_share_counts(tess_ctx *ctx)
{
    if (!ctx->mpi || ctx->nranks < 2) return TESS_OK;
    _Static_assert(sizeof(tess__node_counts) <= 64, "a cache line");
    int rc = tess__comm_share_request(ctx, 64, attach_counts, NULL);
    return rc == TESS_OK ? tess__board_request(ctx) : rc; /* attached after the lines */
}

void tess__sched_publish_done(tess_ctx *ctx, const tess__done_msg *d)
{
    tess__node_counts *mine = ctx->node_counts ? ctx->node_counts[ctx->rank] : NULL;
    if (mine == NULL || ctx->rank == 0) return;
    atomic_store_explicit(&mine->done_sent, d->writes_sent, memory_order_relaxed);
    atomic_store_explicit(&mine->done_applied, d->writes_applied, memory_order_relaxed);
    /* Reports first: a report posted between the two loads then counts as
     * a message to wait for, never the other way round.  Rank 0 waits for
     * the DONE's predecessors only, and an APPLIED report, a count the line
     * carries too, is not one: its message may sit behind rank 0's busy
     * core. */
    uint64_t reports = atomic_load(&ctx->sched->applied_reports_posted);
    atomic_store_explicit(&mine->done_after, tess__comm_posted_to(ctx, 0) - reports,
                          memory_order_relaxed);
    atomic_store_explicit(&mine->done_seq, d->seq, memory_order_release);
}

int tess__sched_create(tess_ctx *ctx)
{
    ctx->sched = calloc(1, sizeof *ctx->sched);
    return ctx->sched != NULL ? TESS_OK : TESS_ERR_NOMEM;
}

void tess__sched_destroy(tess_ctx *ctx)
{
    free(ctx->sched);
    ctx->sched = NULL;
}

void tess__sched_stats(const tess_ctx *ctx, tess_stats *st)
{
    const tess__sched_rank *s = ctx->sched;
    if (s == NULL) return;
    st->steals = atomic_load(&s->steals);
    st->barriers = atomic_load(&s->barriers);
    st->barriers_asked = atomic_load(&s->barriers_asked);
    st->wait_seconds = s->wait_seconds;
}

int tess__sched_handlers_init(tess_ctx *ctx)
{
    int rc = tess__comm_handle(ctx, TESS_MSG_RUN, tess__sched_on_run);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_DONE, on_done);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_SHUTDOWN, on_shutdown);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_READY, on_ready);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_COUNT_REQ, on_count_req);
    if (rc == TESS_OK) rc = tess__comm_handle(ctx, TESS_MSG_APPLIED, on_applied);
    ctx->applied_hook = after_writes_applied;
    if (rc == TESS_OK) rc = tess__steal_handlers_init(ctx);
    return rc;
}

/* Rank 0 waits until every rank said READY (tables created). */
static int wait_ready(tess_ctx *ctx)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    while (ctx->sched->ready_ranks < ctx->nranks && !tess_interrupted(ctx)) timed_wait(ctx, 0.1);
    uint64_t mine = tess__setup_fingerprint(ctx);
    for (int r = 0; r < ctx->nranks && ctx->sched->ready_ranks == ctx->nranks; r++) {
        if (ctx->views[r].fingerprint == mine) continue;
        ctx->sched->setup_mismatch = 1;
        tess__warn(ctx,
                   "rank %d registered different kernels, accumulators, partitioners "
                   "or tables than rank 0",
                   r);
    }
    int rc = ctx->sched->setup_mismatch ? TESS_ERR_MISUSE
             : tess_interrupted(ctx)    ? TESS_ERR_INTERRUPTED
                                        : TESS_OK;
    pthread_mutex_unlock(&ctx->ctl_mu);
    if (rc == TESS_ERR_MISUSE)
        tess__fail(ctx, rc, "ranks registered different kernels or tables before tess_main()");
    if (rc == TESS_ERR_INTERRUPTED) { /* the control function, which reports it, never ran */
        tess__fail(ctx, rc, "interrupted by a signal");
        tess__warn(ctx, "interrupted by a signal before the run started");
    }
    return rc;
}

static int serve_until_shutdown(tess_ctx *ctx)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    while (!ctx->sched->shutdown) timed_wait(ctx, 0.2);
    int rc = ctx->sched->shutdown_rc;
    pthread_mutex_unlock(&ctx->ctl_mu);
    return rc;
}

int tess_main(tess_ctx *ctx, tess_control_fn control, void *app)
{
    if (ctx == NULL || control == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE, "tess_main() called twice");
    if (tess__fault(ctx, "setup")) /* as a rank whose input or memory failed it */
        return tess__fail(ctx, TESS_ERR_IO, "injected fault before tess_main (TESS_FAULT)");
    ctx->started = 1;
    ctx->app = app;
    tess__set_current_slot(&ctx->slots[ctx->workers]);
    int rc = tess__comm_share_serve(ctx); /* collective: before any rank waits for another */
    if (rc == TESS_OK) rc = tess__workers_start(ctx);
    if (rc != TESS_OK) { /* like tess_init: the program may have no other way to say why */
        tess__warn(ctx, "cannot start: %s", tess_last_error(ctx));
        return rc;
    }
    ready_msg m = {tess__setup_fingerprint(ctx)};
    tess__send(ctx, 0, TESS_MSG_READY, &m, sizeof m, NULL, 0);
    if (ctx->rank != 0) {
        rc = serve_until_shutdown(ctx);
    } else {
        rc = wait_ready(ctx);
        const tess__sched_ckpt_hooks *hooks = tess__sched_ckpt_hooks_of(ctx);
        if (rc == TESS_OK && hooks->start != NULL) rc = hooks->start(ctx);
        if (rc == TESS_OK) rc = control(ctx, app);
        if (hooks->quiesce != NULL) hooks->quiesce(ctx);
        int32_t rc32 = rc;
        tess__send_all(ctx, TESS_MSG_SHUTDOWN, &rc32, sizeof rc32);
    }
    /* the thread may outlive ctx: leave no pointer into it behind */
    tess__set_current_slot(NULL);
    return rc;
}

/* The call the user made: the faces launch their own kernels through tess_run. */
static const char *entry_point(const char *kernel)
{
    if (kernel != NULL && strcmp(kernel, "tess.tick") == 0) return "tess_tick_run()";
    if (kernel != NULL && strcmp(kernel, "tess.tile") == 0) return "tess_tile_run()";
    return "tess_run()";
}

int tess_run(tess_ctx *ctx, const char *kernel, int instances, tess_table *locality,
             const void *args, size_t args_len)
{
    int rc = tess__check_control(ctx, entry_point(kernel));
    if (rc != TESS_OK) return rc;
    int k = kernel ? tess__registry_find(ctx->reg.kernels, ctx->reg.nkernels, kernel) : -1;
    TESS_RETURN_IF(ctx, k < 0, TESS_ERR_NOTFOUND, "no kernel named '%s'",
                   kernel ? kernel : "(null)");
    TESS_RETURN_IF(ctx, instances == TESS_EVERY_WORKER && locality != NULL, TESS_ERR_INVAL,
                   "kernel '%s': TESS_EVERY_WORKER takes no locality table", kernel);
    TESS_RETURN_IF(ctx, instances < 0 && instances != TESS_EVERY_WORKER, TESS_ERR_INVAL,
                   "negative instance count");
    TESS_RETURN_IF(ctx, locality && instances != tess_table_partitions(locality), TESS_ERR_INVAL,
                   "kernel '%s': %d instances but the locality table has %d partitions", kernel,
                   instances, tess_table_partitions(locality));
    if (locality != NULL && (rc = tess__table_check_live(locality)) != TESS_OK) return rc;
    TESS_RETURN_IF(ctx, tess_interrupted(ctx), TESS_ERR_INTERRUPTED, "interrupted");
    rc = tess__slot_flush_all(tess__current_slot(ctx));
    if (rc != TESS_OK) return rc;
    pthread_mutex_lock(&ctx->ctl_mu);
    uint64_t seq = ++ctx->run_seq;
    pthread_mutex_unlock(&ctx->ctl_mu);
    ctx->run_open = 1; /* no table created or dropped until a barrier */
    int where = locality ? tess__table_index(locality) : -1;
    if (instances == TESS_EVERY_WORKER) {
        instances = ctx->workers_total;
        where = TESS__EVERY_WORKER_PLACEMENT;
    }
    uint8_t *restored = NULL; /* positions of this kernel's instances at a restored checkpoint */
    size_t rlen = 0;
    const tess__sched_ckpt_hooks *hooks = tess__sched_ckpt_hooks_of(ctx);
    if (hooks->take_restored != NULL) hooks->take_restored(ctx, kernel, &restored, &rlen);
    rc = tess__sched_launch(ctx, seq, k, instances, where, args, args_len, restored, rlen);
    free(restored);
    return rc;
}

/*
 * Rank r's DONE as it wrote it into node-shared memory, taken as if the
 * message had come (ctl_mu held), once every message r posted here before
 * it has been handled: those may be writes the barrier must count, a
 * checkpoint's cut, a partition.  A DONE with an error, or after stolen
 * tasks, is left to the message (tess__sched_publish_done is not called).
 * r's APPLIED reports are not waited for (r's line has their counts): each
 * handled one was counted by its handler before the message layer counted
 * it, so dispatched_from less applied_reports never counts one too many.
 */
static void take_shared_done(tess_ctx *ctx, int r)
{
    tess__node_counts *nc = ctx->node_counts ? ctx->node_counts[r] : NULL;
    if (nc == NULL) return;
    tess__rank_view *v = &ctx->views[r];
    uint64_t seq = atomic_load_explicit(&nc->done_seq, memory_order_acquire);
    if (seq <= v->done_seq || seq < ctx->run_seq) return;
    uint64_t after = atomic_load_explicit(&nc->done_after, memory_order_relaxed);
    uint64_t handled = tess__comm_dispatched_from(ctx, r); /* may lag applied_reports */
    if (handled < v->applied_reports || handled - v->applied_reports < after) return;
    uint64_t sent = atomic_load_explicit(&nc->done_sent, memory_order_relaxed),
             applied = atomic_load_explicit(&nc->done_applied, memory_order_relaxed);
    v->done_seq = seq;
    v->done_sent = sent;
    if (applied > v->done_applied) v->done_applied = applied;
}

static int all_done(tess_ctx *ctx)
{
    if (tess__steal_pending(ctx)) return 0; /* a stolen task is on its way */
    for (int r = 0; r < ctx->nranks; r++) {
        if (ctx->views[r].done_seq < ctx->run_seq) take_shared_done(ctx, r);
        if (ctx->views[r].done_seq < ctx->run_seq) return 0;
    }
    return 1;
}

static void warn_waiting(tess_ctx *ctx, double waited)
{
    char busy[512] = "", ranks[256] = "";
    size_t off = 0;
    for (int r = 0; r < ctx->nranks && off < sizeof ranks; r++)
        if (ctx->views[r].done_seq < ctx->run_seq) {
            int n = snprintf(ranks + off, sizeof ranks - off, "%s%d", off ? " " : "", r);
            if (n > 0) off += (size_t)n;
        }
    tess__sched_describe_busy(ctx, busy, sizeof busy);
    tess__warn(ctx, "barrier has waited %.1f s for rank(s) %s%s%s", waited, ranks,
               busy[0] ? "; on rank 0: " : "", busy);
}

/* Watch a little while (ctx->sched->idle_spin_seconds) before sleeping on ctl_cv:
 * see spin_then_wait in queue.c.  1 once a report message came (done_events
 * moved past `seen`) or, where ranks share node memory, whose reports there
 * wake nobody, once ready(ctx) is nonzero; 0 after the while. */
static int watch_reports(tess_ctx *ctx, unsigned seen, int (*ready)(tess_ctx *))
{
    if (ctx->node_counts == NULL)
        return tess__spin_until_changed(&ctx->sched->done_events, seen,
                                        ctx->sched->idle_spin_seconds);
    double until = tess_now() + ctx->sched->idle_spin_seconds;
    while (tess_now() < until) {
        if (atomic_load(&ctx->sched->done_events) != seen || ready(ctx) != 0) return 1;
        sched_yield();
    }
    return 0;
}

static int all_done_now(tess_ctx *ctx)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    int done = all_done(ctx);
    pthread_mutex_unlock(&ctx->ctl_mu);
    return done;
}

/* Watch for a DONE report (ctl_mu held on entry and exit): 1 if one came. */
static int spin_for_done(tess_ctx *ctx)
{
    unsigned seen = atomic_load(&ctx->sched->done_events);
    pthread_mutex_unlock(&ctx->ctl_mu);
    int changed = watch_reports(ctx, seen, all_done_now);
    pthread_mutex_lock(&ctx->ctl_mu);
    return changed;
}

/* Phase 1: every rank finished the tasks of every run launched so far. */
static int wait_tasks_done(tess_ctx *ctx)
{
    double start = tess_now(), next_warn = ctx->cfg.barrier_warn_seconds;
    pthread_mutex_lock(&ctx->ctl_mu);
    while (!all_done(ctx) && !tess_interrupted(ctx)) {
        pthread_mutex_unlock(&ctx->ctl_mu);
        tess__steal_balance(ctx); /* sched/steal.c: an idle rank may take work */
        pthread_mutex_lock(&ctx->ctl_mu);
        if (all_done(ctx)) break;
        /* forced moves (a test hook) come every few ms, not every 50 */
        if (!spin_for_done(ctx)) timed_wait(ctx, tess__steal_sleep_seconds(ctx, 0.05));
        double waited = tess_now() - start;
        if (next_warn > 0 && waited >= next_warn) {
            warn_waiting(ctx, waited);
            next_warn *= 2;
        }
    }
    int rc = tess_interrupted(ctx) ? TESS_ERR_INTERRUPTED : TESS_OK;
    pthread_mutex_unlock(&ctx->ctl_mu);
    return rc;
}

static int sum_counts(tess_ctx *ctx, uint64_t *sent, uint64_t *applied)
{
    *sent = atomic_load(&ctx->writes_sent);
    *applied = atomic_load(&ctx->writes_applied);
    for (int r = 1; r < ctx->nranks; r++) {
        void *rep = NULL;
        size_t len = 0;
        int rc = tess__request(ctx, r, TESS_MSG_COUNT_REQ, NULL, 0, &rep, &len);
        if (rc != TESS_OK) return rc;
        count_rep c = {0, 0};
        if (len >= sizeof c) memcpy(&c, rep, sizeof c);
        free(rep);
        *sent += c.sent;
        *applied += c.applied;
    }
    return TESS_OK;
}

/* Rank r's count of writes applied as last reported, or as it stands in
 * node-shared memory if that is ahead (the APPLIED message still on its
 * way).  Either is a count the rank has reached, so it only lags. */
static uint64_t reported_applied(tess_ctx *ctx, int r)
{
    uint64_t applied = ctx->views[r].done_applied;
    tess__node_counts *nc = ctx->node_counts ? ctx->node_counts[r] : NULL;
    if (nc != NULL) {
        uint64_t now = atomic_load_explicit(&nc->applied, memory_order_acquire);
        if (now > applied) applied = now;
    }
    return applied;
}

/*
 * Phase 2 from the counts the ranks report, without asking.  A rank reports
 * its counters in DONE, after every task of the run ended and flushed, so
 * its count of writes sent is final then, unless something sends writes
 * after its DONE: a stolen task (its thief reported before it came; a moved
 * partition may also pass on writes that took the old route, all before
 * MIG_DONE, which this run's barrier waits for), or a replica refresh
 * (ranks send ranges at rest).  Rank 0 orders both and marks the run
 * (counts_stale_seq).  A rank at rest that applies writes reports its new
 * count (APPLIED).  So, when the run is not marked, the sum of the reported
 * sent counts is every write sent so far, the reported applied counts only
 * lag, and no write is applied that was not sent: equal sums mean every
 * write has landed, and unequal sums become equal as the reports of the
 * writes still in flight arrive.  1 settled, 0 not yet, -1 must ask.
 */
static int reports_settle(tess_ctx *ctx)
{
    uint64_t sent = atomic_load(&ctx->writes_sent), applied = atomic_load(&ctx->writes_applied);
    pthread_mutex_lock(&ctx->ctl_mu);
    int usable = ctx->counts_stale_seq != ctx->run_seq;
    for (int r = 1; usable && r < ctx->nranks; r++) {
        sent += ctx->views[r].done_sent;
        applied += reported_applied(ctx, r);
    }
    pthread_mutex_unlock(&ctx->ctl_mu);
    return !usable ? -1 : sent == applied;
}

/* This takes the count's round trip out of every iteration under MPI. */
static int writes_applied_by_reports(tess_ctx *ctx)
{
    double give_up = tess_now() + TESS__REPORT_WAIT_SECONDS;
    for (;;) {
        unsigned seen = atomic_load(&ctx->sched->done_events);
        int settled = reports_settle(ctx);
        if (settled != 0) return settled > 0;
        if (tess_now() >= give_up || tess_interrupted(ctx)) return 0;
        if (watch_reports(ctx, seen, reports_settle)) continue;
        pthread_mutex_lock(&ctx->ctl_mu);
        /* a write applied on rank 0 wakes nobody: look again soon */
        if (atomic_load(&ctx->sched->done_events) == seen) timed_wait(ctx, 0.0005);
        pthread_mutex_unlock(&ctx->ctl_mu);
    }
}

/* Phase 2: every write sent to another rank has been applied there. */
static int wait_writes_applied(tess_ctx *ctx)
{
    atomic_fetch_add(&ctx->sched->barriers, 1);
    if (writes_applied_by_reports(ctx)) return TESS_OK;
    atomic_fetch_add(&ctx->sched->barriers_asked, 1);
    for (unsigned round = 0;; round++) {
        uint64_t sent, applied;
        int rc = sum_counts(ctx, &sent, &applied);
        if (rc != TESS_OK) return rc;
        if (sent == applied) return TESS_OK;
        TESS_RETURN_IF(ctx, tess_interrupted(ctx), TESS_ERR_INTERRUPTED, "interrupted");
        struct timespec ts = {0, round < 10 ? 20000L : 200000L};
        nanosleep(&ts, NULL);
    }
}

static int collect_kernel_errors(tess_ctx *ctx)
{
    int failed = 0;
    pthread_mutex_lock(&ctx->ctl_mu);
    for (int r = 0; r < ctx->nranks; r++) {
        failed |= ctx->views[r].error != 0;
        ctx->views[r].error = 0;
    }
    pthread_mutex_unlock(&ctx->ctl_mu);
    TESS_RETURN_IF(ctx, failed, TESS_ERR_KERNEL, "%s", ctx->sched->kernel_error);
    return TESS_OK;
}

static uint64_t run_seq_now(tess_ctx *ctx)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    uint64_t seq = ctx->run_seq;
    pthread_mutex_unlock(&ctx->ctl_mu);
    return seq;
}

/* Every task of the runs up to `launched` is done (tess__check_at_rest). */
static void note_at_rest(tess_ctx *ctx, uint64_t launched)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    ctx->rest_seq = launched;
    pthread_mutex_unlock(&ctx->ctl_mu);
}

int tess_barrier(tess_ctx *ctx)
{
    int rc = tess__check_control(ctx, "tess_barrier()");
    if (rc != TESS_OK) return rc;
    double start = tess_now();
    rc = tess__slot_flush_all(tess__current_slot(ctx));
    uint64_t launched = run_seq_now(ctx);
    if (rc == TESS_OK) rc = wait_tasks_done(ctx);
    if (rc == TESS_OK) note_at_rest(ctx, launched);
    if (rc == TESS_OK && ctx->nranks > 1) rc = wait_writes_applied(ctx);
    ctx->sched->wait_seconds += tess_now() - start;
    if (rc == TESS_ERR_INTERRUPTED) return tess__fail(ctx, rc, "interrupted by a signal");
    if (rc != TESS_OK) return rc;
    rc = collect_kernel_errors(ctx);
    ctx->run_open = 0;          /* every kernel finished, failed or not */
    tess__comm_fail_clear(ctx); /* this rank's failure, if any, is reported */
    /* every write has landed: ranges staged for replicas become visible */
    int switched = tess__replica_switch_everywhere(ctx);
    return rc != TESS_OK ? rc : switched;
}

/*
 * A face's whole job (a tick run, a tiles run) is one kernel on every worker
 * and one barrier.  The barrier's "has waited" warnings, meant for a table
 * step that hangs, would fire in every such run past barrier_warn_seconds
 * (the face's progress lines say how it goes), so they are off for it.
 */
int tess__sched_run_job(tess_ctx *ctx, const char *kernel, const void *args, size_t len)
{
    /* refused before the config is touched: called from a kernel, the
     * control thread's barrier would be reading it */
    int rc = tess__check_control(ctx, entry_point(kernel));
    if (rc != TESS_OK) return rc;
    double warn = ctx->cfg.barrier_warn_seconds;
    ctx->cfg.barrier_warn_seconds = 0;
    rc = tess_run(ctx, kernel, TESS_EVERY_WORKER, NULL, args, len);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    ctx->cfg.barrier_warn_seconds = warn;
    return rc;
}
