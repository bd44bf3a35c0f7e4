/*
 * steal.c — work stealing between ranks (the throttle is core/throttle.c).
 *
 * Rank 0 coordinates, because it already knows the state of the run: it
 * learns from the DONE messages which ranks are idle, and its control thread
 * waits in the barrier anyway.  From that wait loop (tess__steal_balance) it
 * asks the busy ranks how long their work will still take, picks the rank
 * that will finish last as the victim, and asks it to hand the idle rank the
 * biggest task that the idle rank can finish, moving included, before the
 * victim would have finished anyway.  The victim takes the task out of its
 * queue (only tasks that have not started, and none whose partitions a
 * running task uses) and moves its partitions (migrate.c); the task travels
 * with them and is queued on the thief once they are installed.  The thief
 * then tells rank 0 (MIG_DONE), which counts the thief as busy again until
 * it reports the run done once more.  One steal is in flight at a time.
 *
 * Finish times: each rank measures the seconds per key of its kernel
 * instances (task size = keys of the locality partition; the throttle's
 * extra time counts).  The victim finishes in (its running tasks' time left
 * + queued keys x its seconds per key) / its workers; a task of k keys
 * finishes on the thief in cost + k x the thief's seconds per key, with cost
 * = bytes of the partitions / TESS_STEAL_BANDWIDTH (default 500 MB/s) + 1 ms.
 * Steal the biggest task for which the second is earlier.  The thief's own
 * speed matters: a slowed rank that runs out of work first must not take a
 * task that it would finish after the fast rank it took it from.
 *
 * Test hook: TESS_STEAL_FORCE=SEED:PERIOD_MS makes rank 0 move a random
 * queued task of a random rank to another random rank about every PERIOD_MS
 * milliseconds, gain or not, busy or not (tests/integration/migrate.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sched/sched.h"
#include "table/table_internal.h"

#define STEAL_RETRY_SECONDS 0.002
#define STEAL_LATENCY_SECONDS 0.001
#define STEAL_DEFAULT_BANDWIDTH 500e6
#define TAKE_UNKNOWN 1000000 /* placeholder count of stolen tasks: keeps the barrier waiting */

struct tess__steal {
    pthread_mutex_t mu; /* the speed estimate */
    uint64_t keys;
    double seconds;
    double flush_seconds; /* a worker's flush after its last task (moving average) */
    /* rank 0 only, coordinator thread (counts under ctx->ctl_mu) */
    int inflight;  /* steals whose partitions are not installed yet */
    int uncovered; /* stolen tasks no DONE of their thief covers yet */
    double next_try;
    double asked;        /* when the steal in flight was decided (for the log) */
    double bandwidth;    /* bytes/s assumed for moving partitions */
    double force_period; /* test hook: seconds between forced moves, 0 = off */
    uint64_t force_state;
};
typedef struct tess__steal tess__steal;

typedef struct load_rep {
    tess__queue_load q;
    uint64_t bytes;         /* of the biggest task's partitions */
    double seconds_per_key; /* 0 = not measured yet */
    double flush_seconds;   /* a worker's flush once its tasks are done */
    int32_t workers, pad;
} load_rep;

typedef struct take_req {
    int32_t thief, pad;
    uint64_t max_size; /* keys of the biggest task worth taking */
} take_req;

typedef struct take_rep {
    int32_t instance, group, tasks, pad;
} take_rep;

typedef struct done_rep {
    int32_t thief, pad;
    uint64_t seq;
} done_rep;

static void read_force_hook(tess__steal *s)
{
    const char *v = getenv("TESS_STEAL_FORCE");
    unsigned long long seed;
    double ms;
    if (v != NULL && sscanf(v, "%llu:%lf", &seed, &ms) == 2 && ms > 0) {
        s->force_period = ms * 1e-3;
        s->force_state = seed ^ 0x5eed5eedULL;
    }
}

static void install_tasks(tess_ctx *ctx, int from, const uint8_t *task, size_t len);

int tess__steal_create(tess_ctx *ctx)
{
    tess__steal *s = calloc(1, sizeof *s);
    if (s == NULL) return TESS_ERR_NOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->bandwidth = STEAL_DEFAULT_BANDWIDTH;
    const char *bw = getenv("TESS_STEAL_BANDWIDTH");
    if (bw != NULL && atof(bw) > 0) s->bandwidth = atof(bw);
    read_force_hook(s);
    ctx->steal = s;
    tess__migrate_set_task_sink(ctx, install_tasks);
    return TESS_OK;
}

void tess__steal_destroy(tess_ctx *ctx)
{
    if (ctx->steal == NULL) return;
    pthread_mutex_destroy(&ctx->steal->mu);
    free(ctx->steal);
    ctx->steal = NULL;
}

void tess__steal_after_task(tess_ctx *ctx, uint64_t size, double started)
{
    tess__steal *s = ctx->steal;
    tess__throttle(ctx, started);
    double seconds = tess_now() - started;
    pthread_mutex_lock(&s->mu);
    s->keys += size;
    s->seconds += seconds;
    pthread_mutex_unlock(&s->mu);
}

void tess__steal_after_flush(tess_ctx *ctx, double started)
{
    tess__steal *s = ctx->steal;
    tess__throttle(ctx, started);
    double seconds = tess_now() - started;
    pthread_mutex_lock(&s->mu);
    s->flush_seconds = s->flush_seconds > 0 ? 0.7 * s->flush_seconds + 0.3 * seconds : seconds;
    pthread_mutex_unlock(&s->mu);
}

int tess__steal_moves_in_flight(const tess_ctx *ctx)
{
    return ctx->steal != NULL ? ctx->steal->inflight : 0;
}

int tess__steal_pending(const tess_ctx *ctx)
{
    return ctx->steal != NULL && (ctx->steal->inflight != 0 || ctx->steal->uncovered != 0);
}

/* ---- handlers on every rank ---- */

static void on_query(tess_ctx *ctx, int src, const tess__req_hdr *rq)
{
    tess__steal *s = ctx->steal;
    load_rep r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&s->mu);
    r.seconds_per_key = s->keys ? s->seconds / (double)s->keys : 0;
    r.flush_seconds = s->flush_seconds;
    pthread_mutex_unlock(&s->mu);
    tess__queue_load_of(ctx, r.seconds_per_key, &r.q);
    if (r.q.biggest_instance >= 0)
        r.bytes = tess__migrate_group_bytes(ctx, r.q.biggest_group, r.q.biggest_instance);
    r.workers = ctx->workers;
    tess__reply(ctx, src, rq, TESS_OK, &r, sizeof r);
}

static void on_take(tess_ctx *ctx, int src, const tess__req_hdr *rq, const take_req *tr)
{
    uint8_t *blob = NULL;
    size_t len = 0;
    take_rep rep = {-1, -1, 0, 0};
    int rc = TESS_ERR_NOTFOUND;
    if (tess__queue_take(ctx, tr->max_size, &blob, &len, &rep.group, &rep.instance, &rep.tasks)) {
        rc = tess__migrate_begin(ctx, rep.group, rep.instance, tr->thief, blob, len);
        if (rc != TESS_OK) { /* cannot happen: rank 0 moves one group at a time */
            tess__warn(ctx, "a stolen task could not move: %s", tess_strerror(rc));
            abort();
        }
    }
    free(blob);
    tess__reply(ctx, src, rq, rc, &rep, sizeof rep);
}

/* New owner: queue the stolen tasks that came with a partition, tell rank 0. */
static void install_tasks(tess_ctx *ctx, int from, const uint8_t *task, size_t len)
{
    (void)from;
    done_rep d = {ctx->rank, 0, tess__queue_add_stolen(ctx, task, len)};
    tess__send(ctx, 0, TESS_MSG_MIG_DONE, &d, sizeof d, NULL, 0);
}

/* Rank 0: the partitions are installed (another steal may start).  The
 * stolen tasks count as pending until the thief's queue reports them
 * finished (STEAL_COVERED, sent just before its DONE), so a DONE of the
 * thief that was on its way when the task arrived cannot end the barrier. */
static void on_mig_done(tess_ctx *ctx, const done_rep *d)
{
    if (d->thief < 0 || d->thief >= ctx->nranks) return;
    pthread_mutex_lock(&ctx->ctl_mu);
    ctx->steal->inflight--;
    double took = tess_now() - ctx->steal->asked;
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
    tess__log(ctx, "steal: installed on rank %d %.1f ms after it was decided", d->thief,
              took * 1e3);
}

static void on_covered(tess_ctx *ctx, uint32_t n)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    ctx->steal->uncovered -= (int)n;
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

static void on_steal_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (type == TESS_MSG_STEAL_COVERED) {
        uint32_t n;
        if (len >= sizeof n && ctx->rank == 0) {
            memcpy(&n, p, sizeof n);
            on_covered(ctx, n);
        }
        return;
    }
    if (type == TESS_MSG_MIG_DONE) {
        done_rep d;
        if (len >= sizeof d && ctx->rank == 0) {
            memcpy(&d, p, sizeof d);
            on_mig_done(ctx, &d);
        }
        return;
    }
    tess__req_hdr rq;
    if (tess__msg_head(&rq, sizeof rq, p, len) != 0) return;
    take_req tr;
    if (type == TESS_MSG_STEAL_QUERY) on_query(ctx, src, &rq);
    else if (len >= sizeof rq + sizeof tr) {
        memcpy(&tr, p + sizeof rq, sizeof tr);
        on_take(ctx, src, &rq, &tr);
    }
}

int tess__steal_handlers_init(tess_ctx *ctx)
{
    static const uint32_t types[] = {TESS_MSG_STEAL_QUERY, TESS_MSG_STEAL_TAKE, TESS_MSG_MIG_DONE,
                                     TESS_MSG_STEAL_COVERED};
    int rc = TESS_OK;
    for (size_t i = 0; rc == TESS_OK && i < sizeof types / sizeof *types; i++)
        rc = tess__comm_handle(ctx, types[i], on_steal_message);
    return rc;
}

/* ---- the coordinator (rank 0) ---- */

static int query_load(tess_ctx *ctx, int r, load_rep *out)
{
    void *rep = NULL;
    size_t len = 0;
    int rc = tess__request(ctx, r, TESS_MSG_STEAL_QUERY, NULL, 0, &rep, &len);
    if (rc == TESS_OK && len >= sizeof *out) memcpy(out, rep, sizeof *out);
    else if (rc == TESS_OK) rc = TESS_ERR_FORMAT;
    free(rep);
    return rc;
}

static double speed_of(const load_rep *r, double fallback_spk)
{
    return r->seconds_per_key > 0 ? r->seconds_per_key : fallback_spk;
}

/* Seconds until a busy rank has finished its running and queued tasks and
 * flushed their writes (a worker's flush cannot be stolen). */
static double finish_seconds(const load_rep *v, double fallback_spk)
{
    double spk = speed_of(v, fallback_spk);
    if (spk <= 0) return 1e30; /* nothing measured yet: assume stealing is worth it */
    return (v->q.running_seconds + (double)v->q.queued_size * spk) /
               (v->workers > 0 ? v->workers : 1) +
           v->flush_seconds;
}

static uint64_t rng_next(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ULL;
    return tess_mix64(*state);
}

/* Ask `victim` to hand its biggest stealable task of at most max_size keys to `thief`. */
static void take(tess_ctx *ctx, int victim, int thief, uint64_t max_size)
{
    tess__steal *s = ctx->steal;
    pthread_mutex_lock(&ctx->ctl_mu);
    if (ctx->ckpt_active) { /* a checkpoint's cut must see every partition in place */
        pthread_mutex_unlock(&ctx->ctl_mu);
        return;
    }
    s->inflight++; /* before MIG_DONE can possibly arrive */
    s->asked = tess_now();
    s->uncovered += TAKE_UNKNOWN; /* until the reply says how many tasks moved */
    pthread_mutex_unlock(&ctx->ctl_mu);
    take_req tr = {thief, 0, max_size};
    void *rep = NULL;
    size_t len = 0;
    int rc = tess__request(ctx, victim, TESS_MSG_STEAL_TAKE, &tr, sizeof tr, &rep, &len);
    take_rep tk = {-1, -1, 0, 0};
    if (rc == TESS_OK && len >= sizeof tk) memcpy(&tk, rep, sizeof tk);
    free(rep);
    pthread_mutex_lock(&ctx->ctl_mu);
    s->uncovered -= TAKE_UNKNOWN - (rc == TESS_OK ? tk.tasks : 0);
    /* the thief may have reported DONE before these tasks came: this run's
     * barrier asks for the counts (control.c).  Set before this thread, the
     * control function's, looks at the reports again. */
    if (rc == TESS_OK && tk.tasks > 0) ctx->counts_stale_seq = ctx->run_seq;
    pthread_mutex_unlock(&ctx->ctl_mu);
    if (rc == TESS_OK) {
        atomic_fetch_add(&ctx->sched->steals, 1);
        tess__log(ctx, "steal: task %d (group %d) from rank %d to rank %d", tk.instance, tk.group,
                  victim, thief);
        return;
    }
    pthread_mutex_lock(&ctx->ctl_mu);
    s->inflight--;
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

/* Ranks done with the latest run (idle) and the others; 0 if a steal is in flight. */
static int rank_states(tess_ctx *ctx, int *idle)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    int ok = ctx->steal->inflight == 0;
    for (int r = 0; r < ctx->nranks; r++) idle[r] = ctx->views[r].done_seq >= ctx->run_seq;
    pthread_mutex_unlock(&ctx->ctl_mu);
    return ok;
}

/* The biggest task size (keys) the thief finishes, moving included, before
 * the victim would have finished its work; 0 if none. */
static uint64_t worth_taking(tess_ctx *ctx, const load_rep *victim, const load_rep *thief,
                             double fallback)
{
    double end = finish_seconds(victim, fallback);
    /* The thief flushes again after the stolen task, but only what that task
     * wrote: its whole-queue flush time would overstate that (measured: it
     * made steals so rare that placement converged more slowly). */
    double cost = (double)victim->bytes / ctx->steal->bandwidth + STEAL_LATENCY_SECONDS;
    double spk = speed_of(thief, speed_of(victim, fallback));
    if (end >= 1e30 || spk <= 0) return UINT64_MAX;
    if (end <= cost) return 0;
    double keys = (end - cost) / spk;
    return keys >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)keys;
}

static void balance_by_finish_time(tess_ctx *ctx, const int *idle, load_rep *loads)
{
    int thief = -1, victim = -1;
    double fallback = 0, latest = 0;
    for (int r = 0; r < ctx->nranks && thief < 0; r++)
        if (idle[r]) thief = r;
    if (thief < 0) return;
    for (int r = 0; r < ctx->nranks; r++)
        if ((!idle[r] || r == thief) && query_load(ctx, r, &loads[r]) != TESS_OK) return;
    for (int r = 0; r < ctx->nranks; r++)
        if (!idle[r] && loads[r].seconds_per_key > fallback) fallback = loads[r].seconds_per_key;
    for (int r = 0; r < ctx->nranks; r++) {
        if (idle[r] || loads[r].q.queued == 0) continue;
        double end = finish_seconds(&loads[r], fallback);
        if (victim < 0 || end > latest) victim = r, latest = end;
    }
    if (victim < 0) return;
    uint64_t max_size = worth_taking(ctx, &loads[victim], &loads[thief], fallback);
    if (max_size > 0) take(ctx, victim, thief, max_size);
}

static void balance_forced(tess_ctx *ctx, load_rep *loads)
{
    tess__steal *s = ctx->steal;
    int candidates = 0;
    for (int r = 0; r < ctx->nranks; r++) {
        if (query_load(ctx, r, &loads[r]) != TESS_OK) return;
        candidates += loads[r].q.queued > 0;
    }
    if (candidates == 0) return;
    int pick = (int)(rng_next(&s->force_state) % (uint64_t)candidates), victim = 0;
    for (; victim < ctx->nranks; victim++)
        if (loads[victim].q.queued > 0 && pick-- == 0) break;
    int thief =
        (victim + 1 + (int)(rng_next(&s->force_state) % (uint64_t)(ctx->nranks - 1))) % ctx->nranks;
    take(ctx, victim, thief, UINT64_MAX);
}

double tess__steal_sleep_seconds(const tess_ctx *ctx, double most)
{
    const tess__steal *s = ctx->steal;
    if (ctx->nranks < 2 || s == NULL || s->force_period <= 0) return most;
    double until = s->next_try - tess_now();
    return until < 0.0005 ? 0.0005 : until < most ? until : most;
}

void tess__steal_balance(tess_ctx *ctx)
{
    tess__steal *s = ctx->steal;
    if (ctx->nranks < 2 || s == NULL || (!ctx->cfg.steal && s->force_period <= 0)) return;
    double now = tess_now();
    if (now < s->next_try) return;
    int *idle = calloc((size_t)ctx->nranks, sizeof *idle);
    load_rep *loads = calloc((size_t)ctx->nranks, sizeof *loads);
    if (idle != NULL && loads != NULL && rank_states(ctx, idle)) {
        if (s->force_period > 0) {
            double jitter = 0.5 + (double)(rng_next(&s->force_state) % 1000) / 1000.0;
            s->next_try = now + s->force_period * jitter;
            balance_forced(ctx, loads);
        } else {
            s->next_try = now + STEAL_RETRY_SECONDS;
            balance_by_finish_time(ctx, idle, loads);
        }
    }
    free(idle);
    free(loads);
}
