/*
 * snapshot.c — the checkpoint API (include/tessera/checkpoint.h) and this
 * rank's side of the Chandy–Lamport snapshot: markers, the cut, holding and
 * logging table messages.  The protocol is summarised in ckpt.h.
 *
 * Why a rwlock: table messages from other ranks are applied by the progress
 * thread while the cut may run on any thread (a worker that parks last, the
 * control thread, the progress thread).  A message must be entirely before
 * the copy (and then logged if its sender had not cut) or entirely after it,
 * so applying takes the lock shared and the copy takes it exclusively.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "ckpt/ckpt.h"

static void on_table_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);
static void make_cut(tess_ctx *ctx, uint64_t epoch, const void *tasks, size_t tasks_len);

int tess__ckpt_check_control(tess_ctx *ctx, const char *what)
{
    TESS_RETURN_IF(ctx, ctx->ckpt == NULL, TESS_ERR_MISUSE,
                   "%s: checkpoints are not enabled (tess_checkpoint_enable)", what);
    return tess__check_control(ctx, what);
}

/* ---------------------------------------------------------------- enable */

static uint64_t env_fail_epoch(void)
{
    const char *v = getenv("TESS_CKPT_FAIL_EPOCH");
    return v && *v ? strtoull(v, NULL, 10) : 0;
}

/* TESS_CKPT_WRITER=normal makes CpBarrier's writer one thread that competes
 * with the workers (for comparison); by default (or "paced") it is paced
 * (writers.c).  Another value is named in a warning. */
static int env_writer_paced(const tess_ctx *ctx)
{
    const char *v = getenv("TESS_CKPT_WRITER");
    if (v == NULL || *v == '\0' || strcmp(v, "paced") == 0) return 1;
    if (strcmp(v, "normal") == 0) return 0;
    tess__warn(ctx, "TESS_CKPT_WRITER=%s: expected 'paced' or 'normal'; the writer is paced", v);
    return 1;
}

static int rt_init(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    /* the cut must not starve behind a stream of messages */
    tess__rwlock_init(&rt->rw, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->cv, NULL);
    rt->marker_seen = calloc((size_t)ctx->nranks, 1);
    rt->fail_epoch = env_fail_epoch();
    rt->writer_paced = env_writer_paced(ctx);
    return rt->marker_seen ? TESS_OK : TESS_ERR_NOMEM;
}

/* mkdir -p: every rank may race to create the same shared directory. */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return snprintf(err, errlen, "%s: name too long", dir), -1;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return snprintf(err, errlen, "%.400s: %s", path, strerror(errno)), -1;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return snprintf(err, errlen, "%.400s is not a directory", path), -1;
        *p = c;
        if (c == '\0') return 0;
    }
}

/* Rank 0, before the control function: the directory is this job's, or the
 * job does not start (tess__ckpt_claim says why, naming the directory). */
static int claim_dir(tess_ctx *ctx)
{
    char err[768] = "";
    int rc = tess__ckpt_open_rank0_store(ctx, err, sizeof err);
    if (rc == TESS_OK) return TESS_OK;
    tess__warn(ctx, "%s", err);
    return tess__fail(ctx, rc, "%s", err);
}

int tess_checkpoint_set_overwrite(tess_ctx *ctx, int overwrite)
{
    if (ctx == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE,
                   "tess_checkpoint_set_overwrite() after tess_main() started");
    TESS_RETURN_IF(ctx, ctx->ckpt == NULL, TESS_ERR_MISUSE,
                   "tess_checkpoint_set_overwrite() before tess_checkpoint_enable()");
    ctx->ckpt->overwrite = overwrite != 0;
    return TESS_OK;
}

static int tables_quiet(tess_ctx *ctx, const char *what);

int tess_checkpoint_enable(tess_ctx *ctx, const char *dir, const char *job, int keep)
{
    if (ctx == NULL) return TESS_ERR_INVAL;
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE,
                   "tess_checkpoint_enable() after tess_main() started");
    TESS_RETURN_IF(ctx, ctx->ckpt != NULL, TESS_ERR_MISUSE, "checkpoints enabled twice");
    TESS_RETURN_IF(ctx, dir == NULL || dir[0] == '\0' || keep < 0, TESS_ERR_INVAL,
                   "checkpoint directory missing or negative keep count");
    char err[512];
    TESS_RETURN_IF(ctx, make_dirs(dir, err, sizeof err) != 0, TESS_ERR_IO,
                   "cannot create checkpoint directory %s: %s", dir, err);
    tess__ckpt_rt *rt = calloc(1, sizeof *rt);
    TESS_RETURN_IF(ctx, rt == NULL, TESS_ERR_NOMEM, "out of memory");
    rt->dir = strdup(dir);
    rt->job = strdup(job ? job : "");
    rt->keep = keep ? keep : 2;
    if (rt->dir == NULL || rt->job == NULL || rt_init(ctx, rt) != TESS_OK) {
        ctx->ckpt = rt;
        tess__ckpt_free(ctx);
        return tess__fail(ctx, TESS_ERR_NOMEM, "out of memory");
    }
    ctx->ckpt = rt;
    tess__table_set_intercept(ctx, on_table_message);
    ctx->tables_change_hook = tables_quiet;
    tess__sched_ckpt_hooks hooks = {tess__ckpt_quiesce, tess__ckpt_take_restored, claim_dir};
    tess__sched_set_ckpt_hooks(ctx, &hooks);
    return TESS_OK;
}

/* The fingerprint covers the tables created before tess_main (tables made at
 * run time are not part of it): computed once, when tess_main claims the
 * directory, it is final. */
uint64_t tess__ckpt_fingerprint(tess_ctx *ctx)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    if (rt->fingerprint == 0) {
        uint64_t h = tess__tables_ckpt_fingerprint(ctx);
        for (const char *c = rt->job; *c; c++) h = tess_mix64(h ^ (uint8_t)*c);
        rt->fingerprint = h ? h : 1;
    }
    return rt->fingerprint;
}

/* ---------------------------------------------------------------- messages */

static int hold_message(tess__ckpt_rt *rt, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (tess__grow_items(&rt->held, &rt->held_cap, rt->nheld, sizeof *rt->held, 64) != TESS_OK)
        return TESS_ERR_NOMEM;
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL) return TESS_ERR_NOMEM;
    memcpy(copy, p, len);
    rt->held[rt->nheld++] = (tess__ckpt_held){src, type, len, copy};
    return TESS_OK;
}

static int log_message(tess__ckpt_rt *rt, uint32_t type, const uint8_t *p, size_t len)
{
    size_t need = rt->log_len + 8 + len;
    if (tess__grow_bytes(&rt->log, &rt->log_cap, need, 65536) != TESS_OK) return TESS_ERR_NOMEM;
    uint32_t head[2] = {type, (uint32_t)len};
    memcpy(rt->log + rt->log_len, head, sizeof head);
    memcpy(rt->log + rt->log_len + 8, p, len);
    rt->log_len = need;
    rt->stats.log_entries++;
    return TESS_OK;
}

/* Running out of memory here would silently break the snapshot: abort. */
static void must(int rc, const char *what)
{
    if (rc == TESS_OK) return;
    fprintf(stderr, "tessera: checkpoint: out of memory while %s\n", what);
    abort();
}

/* The table intercept: a table message while checkpoints are enabled. */
static void on_table_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_rwlock_rdlock(&rt->rw);
    pthread_mutex_lock(&rt->mu);
    int remote = src != ctx->rank;
    if (remote && rt->phase == 1 && rt->marker_seen[src]) {
        must(hold_message(rt, src, type, p, len), "holding a message");
        pthread_mutex_unlock(&rt->mu);
        pthread_rwlock_unlock(&rt->rw);
        return;
    }
    if (remote && rt->phase == 2 && !rt->marker_seen[src] && tess__table_msg_is_write(type))
        must(log_message(rt, type, p, len), "logging a message");
    pthread_mutex_unlock(&rt->mu);
    tess__table_apply_message(ctx, src, type, p, len);
    pthread_rwlock_unlock(&rt->rw);
}

/* rt->mu held.  This rank's part of the epoch is complete: hand it over. */
static void maybe_complete(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    if (rt->phase != 2 || rt->markers_missing > 0) return;
    tess__ckpt_job *job = calloc(1, sizeof *job);
    must(job ? TESS_OK : TESS_ERR_NOMEM, "finishing an epoch");
    /* CpPeriodic's writer is not paced: its kernels may keep every core busy
     * for as long as they run, and it must commit meanwhile. */
    int paced = rt->writer_paced && rt->mode == CKPT_SYNC;
    *job = (tess__ckpt_job){.ctx = ctx,
                            .epoch = rt->epoch,
                            .static_generation = rt->save_static,
                            .paced = paced,
                            .copies = rt->copies,
                            .ncopies = rt->ncopies,
                            .log = rt->log,
                            .log_len = rt->log_len,
                            .tasks = rt->tasks,
                            .tasks_len = rt->tasks_len};
    rt->copies = NULL;
    rt->ncopies = 0;
    rt->log = rt->tasks = NULL;
    rt->log_len = rt->log_cap = rt->tasks_len = 0;
    rt->phase = 0;
    if (rt->closing) tess__ckpt_job_free(job); /* the job is going down */
    else tess__ckpt_start_writer(rt, job);
}

/* rt->mu held: the first sign of epoch m->epoch on this rank. */
static int begin_local_epoch(tess_ctx *ctx, tess__ckpt_rt *rt, const tess__ckpt_mark *m)
{
    if (m->epoch <= rt->epoch) return 0;
    rt->epoch = m->epoch;
    rt->mode = m->mode;
    rt->save_static = m->save_static;
    rt->run_seq = m->run_seq;
    rt->phase = 1;
    memset(rt->marker_seen, 0, (size_t)ctx->nranks);
    rt->markers_missing = ctx->nranks - 1;
    return 1;
}

static void on_mark(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    tess__ckpt_mark m;
    if (src < 0 || src >= ctx->nranks || tess__msg_head(&m, sizeof m, p, len) != 0) return;
    pthread_mutex_lock(&rt->mu);
    int begun = begin_local_epoch(ctx, rt, &m);
    if (!m.initiation && m.epoch == rt->epoch && src != ctx->rank && !rt->marker_seen[src]) {
        rt->marker_seen[src] = 1;
        rt->markers_missing--;
        maybe_complete(ctx, rt);
    }
    pthread_mutex_unlock(&rt->mu);
    if (begun) tess__sched_request_cut(ctx, m.epoch, m.mode == CKPT_SYNC, m.run_seq, make_cut);
}

/* The writers of epochs up to this one write at full speed from now on. */
static void on_hurry(tess__ckpt_rt *rt, const uint8_t *p, size_t len)
{
    uint64_t epoch;
    if (tess__msg_head(&epoch, sizeof epoch, p, len) != 0) return;
    if (epoch > atomic_load(&rt->hurry_epoch)) atomic_store(&rt->hurry_epoch, epoch);
}

/*
 * Rank 0, without rt->mu: somebody is about to wait for the epoch being
 * committed (the next epoch, tess_checkpoint_wait, the end of the job), so
 * its writers must stop pacing themselves.  Paced writers rely on the
 * workers going idle at the next checkpoint barrier; a CpPeriodic epoch or
 * a long kernel after a CpBarrier would otherwise wait for them while the
 * workers stay busy.
 */
static void tess__ckpt_hurry(tess_ctx *ctx)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_mutex_lock(&rt->mu);
    uint64_t epoch = rt->committing > rt->hurried ? rt->committing : 0;
    if (epoch != 0) rt->hurried = epoch;
    pthread_mutex_unlock(&rt->mu);
    if (epoch != 0) tess__send_all(ctx, TESS_MSG_CKPT_HURRY, &epoch, sizeof epoch);
}

static void on_ckpt_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (ctx->ckpt == NULL) return;
    switch (type) {
    case TESS_MSG_CKPT_MARK: on_mark(ctx, src, p, len); break;
    case TESS_MSG_CKPT_FILES: tess__ckpt_on_files(ctx, src, p, len); break;
    case TESS_MSG_CKPT_RESTORE: tess__ckpt_on_restore(ctx, src, p, len); break;
    case TESS_MSG_CKPT_RESTORED: tess__ckpt_on_restored(ctx, src, p, len); break;
    case TESS_MSG_CKPT_HURRY: on_hurry(ctx->ckpt, p, len); break;
    default: break;
    }
}

int tess__ckpt_handlers_init(tess_ctx *ctx)
{
    int rc = TESS_OK;
    for (uint32_t t = TESS_MSG_CKPT_MARK; rc == TESS_OK && t <= TESS_MSG_CKPT_HURRY; t++)
        rc = tess__comm_handle(ctx, t, on_ckpt_message);
    return rc;
}

/* ---------------------------------------------------------------- the cut */

static int copy_table(tess__ckpt_rt *rt, tess_table *t, int index)
{
    int nparts = tess_table_partitions(t);
    for (int p = 0; p < nparts; p++) {
        if (!tess_table_is_local(t, p)) continue;
        tess__ckpt_copy c = {.table = (uint32_t)index, .part = (uint32_t)p};
        int rc = tess__table_encode_partition(t, p, &c.buf, &c.len);
        if (rc != TESS_OK) return rc;
        tess__ckpt_copy *n = realloc(rt->copies, (size_t)(rt->ncopies + 1) * sizeof *n);
        if (n == NULL) {
            free(c.buf);
            return TESS_ERR_NOMEM;
        }
        rt->copies = n;
        rt->copies[rt->ncopies++] = c;
    }
    return TESS_OK;
}

/* Static tables are not copied: the writer encodes them from the live
 * partitions, off the workers' critical path. */
static void copy_tables(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    for (int i = 0; i < ctx->ntables; i++) {
        if (tess__table_is_static(ctx->tables[i])) continue;
        must(copy_table(rt, ctx->tables[i], i), "copying partitions");
    }
}

/* rw held exclusively: apply what was held, in arrival order. */
static void release_held(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    pthread_mutex_lock(&rt->mu);
    tess__ckpt_held *held = rt->held;
    int n = rt->nheld;
    rt->held = NULL;
    rt->nheld = rt->held_cap = 0;
    pthread_mutex_unlock(&rt->mu);
    for (int i = 0; i < n; i++) {
        tess__table_apply_message(ctx, held[i].src, held[i].type, held[i].bytes, held[i].len);
        free(held[i].bytes);
    }
    free(held);
}

static void send_markers(tess_ctx *ctx, const tess__ckpt_rt *rt, uint64_t epoch)
{
    tess__ckpt_mark m = {
        .epoch = epoch, .run_seq = rt->run_seq, .mode = rt->mode, .save_static = rt->save_static};
    for (int r = 0; r < ctx->nranks; r++)
        if (r != ctx->rank) tess__send(ctx, r, TESS_MSG_CKPT_MARK, &m, sizeof m, NULL, 0);
}

/* This rank's cut for `epoch` (the queue calls it once its workers are at
 * rest); `tasks` describes the run in flight (sched/cut.c). */
static void make_cut(tess_ctx *ctx, uint64_t epoch, const void *tasks, size_t tasks_len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    double t0 = tess_now();
    pthread_rwlock_wrlock(&rt->rw);
    pthread_mutex_lock(&rt->mu);
    int current = rt->epoch == epoch && rt->phase == 1;
    pthread_mutex_unlock(&rt->mu);
    if (!current) {
        pthread_rwlock_unlock(&rt->rw);
        return;
    }
    copy_tables(ctx, rt);
    uint8_t *copy = tasks_len ? malloc(tasks_len) : NULL;
    must(tasks_len && copy == NULL ? TESS_ERR_NOMEM : TESS_OK, "copying task positions");
    if (tasks_len) memcpy(copy, tasks, tasks_len);
    pthread_mutex_lock(&rt->mu);
    rt->tasks = copy;
    rt->tasks_len = tasks_len;
    rt->phase = 2;
    pthread_mutex_unlock(&rt->mu);
    release_held(ctx, rt);
    pthread_rwlock_unlock(&rt->rw);
    send_markers(ctx, rt, epoch);
    pthread_mutex_lock(&rt->mu);
    rt->stats.cut_seconds += tess_now() - t0;
    maybe_complete(ctx, rt);
    pthread_mutex_unlock(&rt->mu);
}

/* ---------------------------------------------------------------- rank 0 */

/* rt->mu held: wait until no epoch is being committed. */
static void wait_committed_locked(tess__ckpt_rt *rt)
{
    while (rt->committing != 0) pthread_cond_wait(&rt->cv, &rt->mu);
}

/* The generation of static files this epoch writes, 0 when it writes none
 * and references the saved ones. */
static int need_static(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    unsigned known = tess__ckpt_static_generation(rt->store);
    if (rt->static_resave) return known < 255 ? (int)known + 1 : 255;
    for (int i = 0; i < ctx->ntables; i++)
        if (tess__table_is_static(ctx->tables[i]) &&
            !tess__ckpt_static_saved(rt->store, (uint32_t)i))
            return known ? (int)known : 1;
    return 0;
}

/* The first epoch number above every epoch directory already there. */
static int first_free_epoch(tess__ckpt_rt *rt, uint64_t *epoch_out, char *err, size_t errlen)
{
    uint64_t *epochs = NULL;
    size_t n = 0;
    int rc = tess__ckpt_list(rt->store, &epochs, &n, err, errlen);
    if (rc != TESS_OK) return rc;
    *epoch_out = n ? epochs[n - 1] + 1 : 1;
    free(epochs);
    return TESS_OK;
}

int tess__ckpt_open_rank0_store(tess_ctx *ctx, char *err, size_t errlen)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    if (rt->store != NULL) return TESS_OK;
    int rc = tess__ckpt_store_open(rt->dir, tess__ckpt_fingerprint(ctx), &rt->store, err, errlen);
    if (rc == TESS_OK) rc = tess__ckpt_claim(rt->store, rt->overwrite, err, errlen);
    if (rc != TESS_OK) { /* a directory not claimed is never written */
        tess__ckpt_store_close(rt->store);
        rt->store = NULL;
        return rc;
    }
    if (rt->next_epoch == 0) rc = first_free_epoch(rt, &rt->next_epoch, err, errlen);
    return rc;
}

/* Record a failure for tess_checkpoint_wait and say it once on stderr. */
void tess__ckpt_note_failure(tess_ctx *ctx, int rc, const char *msg)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    if (rt->last_committed != 0)
        tess__warn(ctx, "checkpoint failed, the previous one (epoch %" PRIu64 ") stays usable: %s",
                   rt->last_committed, msg);
    else /* nothing to fall back on: do not promise it */
        tess__warn(ctx, "checkpoint failed, and this run has no earlier checkpoint: %s", msg);
    if (rt->first_failure == 0) {
        rt->first_failure = rc;
        snprintf(rt->failure, sizeof rt->failure, "%s", msg);
    }
    rt->stats.failed++;
}

/* Rank 0: no partition moves while an epoch is in progress (a partition in
 * flight would be in no rank's cut); wait for the moves already started.
 * A count, not a flag: the committer of epoch E allows moves again after it
 * has cleared rt->committing, when epoch E+1 may already have started (and
 * must still exclude them); a flag cleared there once let steals run during
 * an epoch, and a committed checkpoint lacked a partition that was moving. */
static void exclude_moves(tess_ctx *ctx)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    while (tess__steal_moves_in_flight(ctx) > 0 && !tess_interrupted(ctx)) {
        struct timespec ts;
        tess__deadline_after(&ts, 0.05);
        pthread_cond_timedwait(&ctx->ctl_cv, &ctx->ctl_mu, &ts);
    }
    ctx->ckpt_active++;
    pthread_mutex_unlock(&ctx->ctl_mu);
}

void tess__ckpt_allow_moves(tess_ctx *ctx)
{
    pthread_mutex_lock(&ctx->ctl_mu);
    ctx->ckpt_active--;
    pthread_cond_broadcast(&ctx->ctl_cv);
    pthread_mutex_unlock(&ctx->ctl_mu);
}

/* Rank 0: create the epoch directory, then tell every rank (itself too). */
static int start_epoch(tess_ctx *ctx, int mode, const void *user, size_t len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    char err[512] = "";
    tess__ckpt_hurry(ctx);
    pthread_mutex_lock(&rt->mu);
    wait_committed_locked(rt);
    pthread_mutex_unlock(&rt->mu);
    exclude_moves(ctx);
    pthread_mutex_lock(&rt->mu);
    wait_committed_locked(rt);
    int rc = tess__ckpt_open_rank0_store(ctx, err, sizeof err);
    uint64_t epoch = rt->next_epoch;
    if (rc == TESS_OK) rc = tess__ckpt_begin(rt->store, epoch, &rt->writer, err, sizeof err);
    uint8_t *copy = len ? malloc(len) : NULL;
    if (rc == TESS_OK && len && copy == NULL) rc = TESS_ERR_NOMEM;
    if (rc != TESS_OK) {
        if (rt->writer) tess__ckpt_abort(rt->writer);
        rt->writer = NULL;
        free(copy);
        tess__ckpt_note_failure(ctx, rc, err[0] ? err : "out of memory");
        pthread_mutex_unlock(&rt->mu);
        tess__ckpt_allow_moves(ctx);
        return rc;
    }
    if (len) memcpy(copy, user, len);
    free(rt->user);
    rt->user = copy;
    rt->user_len = len;
    rt->next_epoch = epoch + 1;
    pthread_mutex_lock(&ctx->ctl_mu);
    uint64_t run_seq = ctx->run_seq;
    pthread_mutex_unlock(&ctx->ctl_mu);
    tess__ckpt_mark m = {.epoch = epoch,
                         .run_seq = run_seq,
                         .mode = mode,
                         .save_static = need_static(ctx, rt),
                         .initiation = 1};
    rt->stats.started++;
    pthread_mutex_unlock(&rt->mu);
    rc = tess__ckpt_start_committer(ctx, epoch);
    if (rc == TESS_OK) rc = tess__send_all(ctx, TESS_MSG_CKPT_MARK, &m, sizeof m);
    return rc;
}

int tess_checkpoint_barrier(tess_ctx *ctx, const void *user, size_t len)
{
    if (ctx == NULL || (user == NULL && len > 0)) return TESS_ERR_INVAL;
    int rc = tess__ckpt_check_control(ctx, "tess_checkpoint_barrier()");
    if (rc != TESS_OK) return rc;
    rc = tess__slot_flush_all(tess__current_slot(ctx));
    /* a failure to start the epoch is reported; the barrier still happens */
    if (rc == TESS_OK) start_epoch(ctx, CKPT_SYNC, user, len);
    return rc == TESS_OK ? tess_barrier(ctx) : rc;
}

/* ---------------------------------------------------------------- CpPeriodic */

/*
 * An epoch every rt->period seconds, counted from the start of the previous
 * one; when the previous one is still going at that time, the next waits a
 * period more.  rt->cv is broadcast for many other reasons (files arriving,
 * a commit), so a wake-up alone is no reason to start: before this checked
 * the clock, epochs ran back to back after the first, whatever the period,
 * and kept work stealing from moving partitions most of the time.
 */
static void *timer_main(void *arg)
{
    tess_ctx *ctx = arg;
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_mutex_lock(&rt->mu);
    double next = tess_now() + rt->period;
    while (!rt->timer_stop) {
        struct timespec ts;
        double wait = next - tess_now();
        tess__deadline_after(&ts, wait > 0 ? wait : 0);
        pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
        if (rt->timer_stop || rt->period <= 0 || tess_now() < next) continue;
        next += rt->period;
        if (next < tess_now()) next = tess_now() + rt->period;
        if (rt->committing != 0 || rt->phase != 0) { /* previous still going */
            pthread_mutex_unlock(&rt->mu);
            tess__ckpt_hurry(ctx);
            pthread_mutex_lock(&rt->mu);
            continue;
        }
        size_t len = rt->periodic_user_len;
        uint8_t *user = len ? malloc(len) : NULL;
        if (len && user == NULL) continue;
        if (len) memcpy(user, rt->periodic_user, len);
        pthread_mutex_unlock(&rt->mu);
        start_epoch(ctx, CKPT_ASYNC, user, len);
        free(user);
        pthread_mutex_lock(&rt->mu);
    }
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

static void stop_timer(tess__ckpt_rt *rt)
{
    pthread_mutex_lock(&rt->mu);
    int running = rt->timer_running;
    rt->timer_stop = 1;
    rt->timer_running = 0;
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
    if (running) pthread_join(rt->timer, NULL);
    rt->timer_stop = 0;
}

int tess_checkpoint_periodic(tess_ctx *ctx, double seconds, const void *user, size_t len)
{
    if (ctx == NULL || (user == NULL && len > 0)) return TESS_ERR_INVAL;
    int rc = tess__ckpt_check_control(ctx, "tess_checkpoint_periodic()");
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(ctx, !(seconds >= 0), TESS_ERR_INVAL, "checkpoint period must be >= 0");
    tess__ckpt_rt *rt = ctx->ckpt;
    stop_timer(rt);
    uint8_t *copy = len ? malloc(len) : NULL;
    TESS_RETURN_IF(ctx, len && copy == NULL, TESS_ERR_NOMEM, "out of memory");
    if (len) memcpy(copy, user, len);
    pthread_mutex_lock(&rt->mu);
    free(rt->periodic_user);
    rt->periodic_user = copy;
    rt->periodic_user_len = len;
    rt->period = seconds;
    pthread_mutex_unlock(&rt->mu);
    if (seconds == 0) return TESS_OK;
    TESS_RETURN_IF(ctx, pthread_create(&rt->timer, NULL, timer_main, ctx) != 0, TESS_ERR_NOMEM,
                   "cannot start the checkpoint timer thread");
    rt->timer_running = 1;
    return TESS_OK;
}

/* Before a table is created or dropped at run time (rank 0's control
 * thread): the writers read the table list until an epoch is committed, and
 * a periodic epoch could start at any moment. */
static int tables_quiet(tess_ctx *ctx, const char *what)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_mutex_lock(&rt->mu);
    int periodic = rt->timer_running && rt->period > 0;
    pthread_mutex_unlock(&rt->mu);
    TESS_RETURN_IF(ctx, periodic, TESS_ERR_MISUSE,
                   "%s while periodic checkpoints are on (tess_checkpoint_periodic(ctx, 0, ...) "
                   "stops them)",
                   what);
    tess__ckpt_hurry(ctx);
    pthread_mutex_lock(&rt->mu);
    wait_committed_locked(rt);
    pthread_mutex_unlock(&rt->mu);
    return TESS_OK;
}

/* ---------------------------------------------------------------- waiting */

int tess_checkpoint_wait(tess_ctx *ctx, uint64_t *epoch_out)
{
    if (ctx == NULL) return TESS_ERR_INVAL;
    int rc = tess__ckpt_check_control(ctx, "tess_checkpoint_wait()");
    if (rc != TESS_OK) return rc;
    tess__ckpt_rt *rt = ctx->ckpt;
    char msg[512];
    tess__ckpt_hurry(ctx);
    pthread_mutex_lock(&rt->mu);
    wait_committed_locked(rt);
    rc = rt->first_failure;
    snprintf(msg, sizeof msg, "%s", rt->failure);
    rt->first_failure = 0;
    if (epoch_out) *epoch_out = rt->last_committed;
    pthread_mutex_unlock(&rt->mu);
    return rc == TESS_OK ? TESS_OK : tess__fail(ctx, rc, "checkpoint failed: %s", msg);
}

void tess_checkpoint_get_stats(const tess_ctx *ctx, tess_checkpoint_stats *out)
{
    memset(out, 0, sizeof *out);
    if (ctx == NULL || ctx->ckpt == NULL) return;
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_mutex_lock(&rt->mu);
    *out = rt->stats;
    pthread_mutex_unlock(&rt->mu);
}

/* ---------------------------------------------------------------- teardown */

/* Writers only write local files and send one message: always bounded, so
 * always waited for (they must not outlive the message layer).  The
 * committer waits for other ranks and gives up when the job is interrupted. */
static void wait_writers(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    if (ctx->rank == 0) tess__ckpt_hurry(ctx);
    pthread_mutex_lock(&rt->mu);
    for (;;) {
        int down = tess_interrupted(ctx);
        if (rt->writers == 0 && (rt->committing == 0 || down) && (rt->phase == 0 || down)) break;
        struct timespec ts;
        tess__deadline_after(&ts, 0.1);
        pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
    }
    rt->closing = 1; /* an epoch completing from now on is dropped */
    pthread_mutex_unlock(&rt->mu);
}

/* Before the job shuts down (rank 0: before SHUTDOWN, so no epoch starts
 * after another rank has gone): no new epoch, the running one finishes. */
void tess__ckpt_quiesce(tess_ctx *ctx)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    if (rt == NULL) return;
    stop_timer(rt);
    wait_writers(ctx, rt);
}

void tess__ckpt_free(tess_ctx *ctx)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    if (rt == NULL) return;
    tess__ckpt_quiesce(ctx);
    if (rt->writer) tess__ckpt_abort(rt->writer);
    tess__ckpt_store_close(rt->store);
    for (int i = 0; i < rt->nheld; i++) free(rt->held[i].bytes);
    for (int i = 0; i < rt->ncopies; i++) free(rt->copies[i].buf);
    TESS_FREE_ALL(rt->held, rt->copies, rt->log, rt->tasks, rt->marker_seen, rt->rank_tasks,
                  rt->user, rt->periodic_user, rt->restored_kernel, rt->restored_tasks, rt->dir,
                  rt->job);
    pthread_rwlock_destroy(&rt->rw);
    pthread_mutex_destroy(&rt->mu);
    pthread_cond_destroy(&rt->cv);
    free(rt);
    ctx->ckpt = NULL;
    tess__table_set_intercept(ctx, NULL);
    ctx->tables_change_hook = NULL;
}
