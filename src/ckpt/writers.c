/*
 * writers.c — the background half of a checkpoint: each rank's writer
 * threads compress and write its copies, its log and (once per job) its
 * static partitions, then report the files to rank 0; rank 0's committer
 * thread waits for every rank's report and writes the MANIFEST (or removes
 * the epoch when any rank failed).
 *
 * Workers never wait for the disk: by the time a writer starts, the rank's
 * cut is over and its kernels have moved on.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ckpt/ckpt.h"
#include "core/bytes.h"

#define WRITER_THREADS_MAX 64

/* FILES: this header, nfiles tess__ckpt_file entries, tasks_len bytes. */
typedef struct files_msg {
    uint64_t epoch;
    int32_t status;
    uint32_t nfiles;
    uint32_t tasks_len, pad;
    char error[256];
} files_msg;

static int fail_always(void *arg, const char *path)
{
    (void)arg, (void)path;
    return 1;
}

int tess__ckpt_open_store(tess_ctx *ctx, tess__ckpt_store **s_out, char *err, size_t errlen)
{
    return tess__ckpt_store_open(ctx->ckpt->dir, tess__ckpt_fingerprint(ctx), s_out, err, errlen);
}

void tess__ckpt_job_free(tess__ckpt_job *job)
{
    if (job == NULL) return;
    for (int i = 0; i < job->ncopies; i++) free(job->copies[i].buf);
    free(job->copies);
    free(job->log);
    free(job->tasks);
    free(job);
}

/* One file of a rank's part of an epoch. */
enum { ITEM_COPY, ITEM_LOG, ITEM_STATIC };
typedef struct write_item {
    int kind;
    int index; /* copy: job->copies[index]; static: table index */
    int part;  /* static: partition */
} write_item;

/* A job's files, shared by its writer threads: each claims the next item
 * until none is left or one has failed; the lead thread reports them all. */
typedef struct write_run {
    tess__ckpt_job *job;
    tess__ckpt_store *s;
    write_item *items;
    tess__ckpt_file *files; /* files[i] describes items[i] once written */
    int nitems;
    _Atomic int next;
    pthread_mutex_t mu; /* rc, err and cores */
    int cores;          /* paced: writer threads compressing now */
    int rc;
    char err[512];
} write_run;

static int add_item(write_run *run, write_item item)
{
    write_item *grown = realloc(run->items, (size_t)(run->nitems + 1) * sizeof *grown);
    if (grown == NULL) return TESS_ERR_NOMEM;
    run->items = grown;
    run->items[run->nitems++] = item;
    return TESS_OK;
}

/* The copies, the log, and (when the epoch saves them) the local partitions
 * of the static tables, which are encoded from the live tables (read-only
 * by contract; no partition moves during an epoch). */
static int plan_items(write_run *run)
{
    tess__ckpt_job *job = run->job;
    tess_ctx *ctx = job->ctx;
    int rc = TESS_OK;
    for (int i = 0; i < job->ncopies && rc == TESS_OK; i++)
        rc = add_item(run, (write_item){ITEM_COPY, i, 0});
    if (rc == TESS_OK && job->log_len > 0) rc = add_item(run, (write_item){ITEM_LOG, 0, 0});
    for (int i = 0; job->static_generation > 0 && i < ctx->ntables && rc == TESS_OK; i++) {
        tess_table *t = ctx->tables[i];
        for (int p = 0; tess__table_is_static(t) && p < tess_table_partitions(t); p++)
            if (tess_table_is_local(t, p) && rc == TESS_OK)
                rc = add_item(run, (write_item){ITEM_STATIC, i, p});
    }
    run->files = calloc((size_t)run->nitems + 1, sizeof *run->files);
    return rc == TESS_OK && run->files == NULL ? TESS_ERR_NOMEM : rc;
}

static int write_static_item(write_run *run, const write_item *it, tess__ckpt_file *f, char *err,
                             size_t errlen)
{
    tess__ckpt_job *job = run->job;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = tess__table_encode_partition(job->ctx->tables[it->index], it->part, &buf, &len);
    *f = (tess__ckpt_file){.kind = TESS__CKPT_FILE_PARTITION,
                           .in_static = (uint8_t)job->static_generation,
                           .a = (uint32_t)it->index,
                           .b = (uint32_t)it->part};
    if (rc == TESS_OK) rc = tess__ckpt_write_entry(run->s, job->epoch, f, buf, len, err, errlen);
    free(buf);
    return rc;
}

static int write_item_file(write_run *run, int i, char *err, size_t errlen)
{
    tess__ckpt_job *job = run->job;
    const write_item *it = &run->items[i];
    tess__ckpt_file *f = &run->files[i];
    if (tess__fault(job->ctx, "checkpoint")) { /* as a full disk would */
        snprintf(err, errlen, "rank %d: injected fault while writing a checkpoint (TESS_FAULT)",
                 job->ctx->rank);
        return TESS_ERR_IO;
    }
    if (it->kind == ITEM_STATIC) return write_static_item(run, it, f, err, errlen);
    if (it->kind == ITEM_LOG) {
        *f = (tess__ckpt_file){.kind = TESS__CKPT_FILE_LOG, .a = (uint32_t)job->ctx->rank};
        return tess__ckpt_write_entry(run->s, job->epoch, f, job->log, job->log_len, err, errlen);
    }
    const tess__ckpt_copy *c = &job->copies[it->index];
    *f = (tess__ckpt_file){.kind = TESS__CKPT_FILE_PARTITION, .a = c->table, .b = c->part};
    return tess__ckpt_write_entry(run->s, job->epoch, f, c->buf, c->len, err, errlen);
}

static int run_failed(write_run *run)
{
    pthread_mutex_lock(&run->mu);
    int rc = run->rc;
    pthread_mutex_unlock(&run->mu);
    return rc;
}

static void write_items(write_run *run)
{
    for (;;) {
        int i = atomic_fetch_add(&run->next, 1);
        if (i >= run->nitems || run_failed(run) != TESS_OK) return;
        char err[512] = "";
        int rc = write_item_file(run, i, err, sizeof err);
        if (rc == TESS_OK) continue;
        pthread_mutex_lock(&run->mu);
        if (run->rc == TESS_OK) {
            run->rc = rc;
            snprintf(run->err, sizeof run->err, "%s", err[0] ? err : "out of memory");
        }
        pthread_mutex_unlock(&run->mu);
        return;
    }
}

static void send_files(tess__ckpt_job *job, int rc, const char *err, const tess__ckpt_file *files,
                       uint32_t n)
{
    files_msg h = {
        .epoch = job->epoch, .status = rc, .nfiles = n, .tasks_len = (uint32_t)job->tasks_len};
    snprintf(h.error, sizeof h.error, "%.*s", (int)sizeof h.error - 1, err); /* may cut */
    size_t flen = (size_t)n * sizeof *files;
    uint8_t *body = malloc(flen + job->tasks_len + 1);
    if (body == NULL) {
        h.status = TESS_ERR_NOMEM;
        h.nfiles = h.tasks_len = 0;
        snprintf(h.error, sizeof h.error, "rank %d: out of memory", job->ctx->rank);
        tess__send(job->ctx, 0, TESS_MSG_CKPT_FILES, &h, sizeof h, NULL, 0);
        return;
    }
    if (flen) memcpy(body, files, flen);
    if (job->tasks_len) memcpy(body + flen, job->tasks, job->tasks_len);
    tess__send(job->ctx, 0, TESS_MSG_CKPT_FILES, &h, sizeof h, body, flen + job->tasks_len);
    free(body);
}

/*
 * Piccolo's checkpoints are cheap because the writer uses what the workers
 * leave idle.  With as many workers as cores nothing is left idle unless the
 * writer yields: competing, it gets its share of the cores and the
 * compression comes out of the iterations.  A paced writer (CpBarrier's)
 * compresses a chunk only while fewer writer threads hold a core than the
 * rank has idle workers, and sleeps otherwise (0.5 to 4 ms between looks).
 * What it has not written by the next checkpoint barrier is written while
 * that barrier waits for the commit, with every worker idle; so it has as
 * many threads as workers, or that wait would leave all cores but one
 * unused.  The delay is bounded by the next barrier.  CpPeriodic's writer is
 * one unpaced thread: its kernels may keep every core busy for hours, and
 * its epochs must commit meanwhile.
 *
 * Pacing rather than SCHED_IDLE: under load a SCHED_IDLE thread hardly runs,
 * and a rank killed while one was writing took 7-13 s instead of 2 s to die
 * under two busy loops (mpirun waits for it), and once over two minutes.
 */
#define PACE_MIN_SECONDS 0.0005
#define PACE_MAX_SECONDS 0.004

static _Thread_local int holds_core; /* this writer thread counts in run->cores */

static int take_core(write_run *run)
{
    int idle = tess__queue_idle_workers(run->job->ctx);
    pthread_mutex_lock(&run->mu);
    int go = run->cores < idle || tess_interrupted(run->job->ctx) ||
             atomic_load(&run->job->ctx->ckpt->hurry_epoch) >= run->job->epoch;
    if (go) run->cores++, holds_core = 1;
    pthread_mutex_unlock(&run->mu);
    return go;
}

static void pace_writer(void *arg, int busy)
{
    write_run *run = arg;
    if (holds_core) {
        pthread_mutex_lock(&run->mu);
        run->cores--, holds_core = 0;
        pthread_mutex_unlock(&run->mu);
    }
    for (double wait = PACE_MIN_SECONDS; busy && !take_core(run);) {
        struct timespec ts = {0, (long)(wait * 1e9)};
        nanosleep(&ts, NULL);
        wait = wait * 2 < PACE_MAX_SECONDS ? wait * 2 : PACE_MAX_SECONDS;
    }
}

static void *helper_main(void *arg)
{
    write_items(arg);
    return NULL;
}

/* Helpers for the lead writer thread; how many started. */
static int start_helpers(write_run *run, pthread_t *helpers, int want)
{
    int n = 0;
    while (n < want && pthread_create(&helpers[n], NULL, helper_main, run) == 0) n++;
    return n;
}

static int writer_threads(const tess__ckpt_job *job, int nitems)
{
    int n = job->paced ? job->ctx->workers : 1;
    if (n > nitems) n = nitems;
    if (n > WRITER_THREADS_MAX) n = WRITER_THREADS_MAX;
    return n < 1 ? 1 : n;
}

static void finish_job(tess__ckpt_job *job, double t0, uint64_t bytes)
{
    tess__ckpt_rt *rt = job->ctx->ckpt;
    tess__ckpt_job_free(job);
    pthread_mutex_lock(&rt->mu);
    rt->stats.write_seconds += tess_now() - t0;
    rt->stats.bytes_written += bytes;
    rt->writers--;
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
}

static void *writer_main(void *arg)
{
    write_run run = {.job = arg};
    tess_ctx *ctx = run.job->ctx;
    double t0 = tess_now();
    pthread_mutex_init(&run.mu, NULL);
    run.rc = tess__ckpt_open_store(ctx, &run.s, run.err, sizeof run.err);
    if (run.rc == TESS_OK && ctx->ckpt->fail_epoch == run.job->epoch)
        tess__ckpt_store_set_fail_hook(run.s, fail_always, NULL); /* TESS_CKPT_FAIL_EPOCH */
    if (run.rc == TESS_OK && run.job->paced)
        tess__ckpt_store_set_pace_hook(run.s, pace_writer, &run);
    if (run.rc == TESS_OK) run.rc = plan_items(&run);
    pthread_t helpers[WRITER_THREADS_MAX];
    int nhelpers = 0;
    if (run.rc == TESS_OK) {
        nhelpers = start_helpers(&run, helpers, writer_threads(run.job, run.nitems) - 1);
        write_items(&run);
    }
    for (int i = 0; i < nhelpers; i++) pthread_join(helpers[i], NULL);
    if (run.rc != TESS_OK && run.err[0] == '\0') snprintf(run.err, sizeof run.err, "out of memory");
    uint32_t n = run.rc == TESS_OK ? (uint32_t)run.nitems : 0;
    send_files(run.job, run.rc, run.err, run.files, n);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) bytes += run.files[i].size;
    tess__ckpt_store_close(run.s);
    free(run.items);
    free(run.files);
    pthread_mutex_destroy(&run.mu);
    finish_job(run.job, t0, bytes);
    return NULL;
}

/* rt->mu held. */
void tess__ckpt_start_writer(tess__ckpt_rt *rt, tess__ckpt_job *job)
{
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rt->writers++;
    if (pthread_create(&th, &attr, writer_main, job) != 0) {
        rt->writers--;
        /* no thread: write here rather than lose the epoch */
        pthread_mutex_unlock(&rt->mu);
        rt->writers++;
        writer_main(job);
        pthread_mutex_lock(&rt->mu);
    }
    pthread_attr_destroy(&attr);
}

/* ---------------------------------------------------------------- rank 0 */

static int append_tasks(tess__ckpt_rt *rt, const uint8_t *p, uint32_t len)
{
    if (len == 0) return TESS_OK;
    uint8_t *n = realloc(rt->rank_tasks, rt->rank_tasks_len + 4 + len);
    if (n == NULL) return TESS_ERR_NOMEM;
    tess__put_le32(n + rt->rank_tasks_len, len);
    memcpy(n + rt->rank_tasks_len + 4, p, len);
    rt->rank_tasks = n;
    rt->rank_tasks_len += 4 + len;
    return TESS_OK;
}

static void record_files(tess__ckpt_rt *rt, const files_msg *h, const uint8_t *body)
{
    char err[512] = "";
    int rc = h->status;
    for (uint32_t i = 0; rc == TESS_OK && i < h->nfiles; i++) {
        tess__ckpt_file f;
        memcpy(&f, body + (size_t)i * sizeof f, sizeof f);
        rc = tess__ckpt_add_written(rt->writer, &f, err, sizeof err);
    }
    if (rc == TESS_OK)
        rc = append_tasks(rt, body + (size_t)h->nfiles * sizeof(tess__ckpt_file), h->tasks_len);
    if (rc != TESS_OK && !rt->commit_failed) {
        rt->commit_failed = rc;
        snprintf(rt->commit_error, sizeof rt->commit_error, "%s",
                 h->status ? h->error
                 : err[0]  ? err
                           : "out of memory");
    }
}

void tess__ckpt_on_files(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    files_msg h;
    if (ctx->rank != 0 || tess__msg_head(&h, sizeof h, p, len) != 0) return;
    h.error[sizeof h.error - 1] = '\0';
    size_t need = sizeof h + (size_t)h.nfiles * sizeof(tess__ckpt_file) + h.tasks_len;
    pthread_mutex_lock(&rt->mu);
    if (h.epoch == rt->committing && rt->writer != NULL) {
        if (len < need) {
            h.status = TESS_ERR_FORMAT;
            snprintf(h.error, sizeof h.error, "rank %d: malformed file report", src);
            h.nfiles = h.tasks_len = 0;
        }
        record_files(rt, &h, p + sizeof h);
        rt->files_in++;
        pthread_cond_broadcast(&rt->cv);
    }
    pthread_mutex_unlock(&rt->mu);
}

/* User data on disk: u32 app length, app bytes, then the ranks' task blobs. */
static int frame_user(tess__ckpt_rt *rt, uint8_t **buf_out, size_t *len_out)
{
    size_t len = 4 + rt->user_len + rt->rank_tasks_len;
    uint8_t *buf = malloc(len);
    if (buf == NULL) return TESS_ERR_NOMEM;
    tess__put_le32(buf, (uint32_t)rt->user_len);
    if (rt->user_len) memcpy(buf + 4, rt->user, rt->user_len);
    if (rt->rank_tasks_len) memcpy(buf + 4 + rt->user_len, rt->rank_tasks, rt->rank_tasks_len);
    *buf_out = buf;
    *len_out = len;
    return TESS_OK;
}

static int declare_tables(tess_ctx *ctx, tess__ckpt_writer *w, char *err, size_t errlen)
{
    int rc = TESS_OK;
    for (int i = 0; i < ctx->ntables && rc == TESS_OK; i++) {
        tess_table *t = ctx->tables[i];
        int n = tess_table_partitions(t);
        int32_t *owners = malloc((size_t)n * sizeof *owners);
        if (owners == NULL) return TESS_ERR_NOMEM;
        for (int p = 0; p < n; p++) owners[p] = tess_table_owner(t, p);
        rc = tess__ckpt_set_table(w, (uint32_t)i, (uint32_t)n, owners, tess__table_is_static(t),
                                  err, errlen);
        free(owners);
    }
    return rc;
}

/* Every partition must be in some rank's files (static ones only when this
 * epoch saves them; otherwise the saved ones are referenced): an epoch that
 * lacks one would restore a hole, so it is not committed. */
static int check_complete(tess_ctx *ctx, tess__ckpt_rt *rt, const tess__ckpt_writer *w, char *err,
                          size_t errlen)
{
    for (int i = 0; i < ctx->ntables; i++) {
        tess_table *t = ctx->tables[i];
        if (tess__table_is_static(t) && rt->save_static == 0) continue;
        for (int p = 0; p < tess_table_partitions(t); p++)
            if (!tess__ckpt_writer_has_file(w, TESS__CKPT_FILE_PARTITION, (uint32_t)i,
                                            (uint32_t)p)) {
                snprintf(err, errlen, "no rank saved table %d partition %d (owner %d)", i, p,
                         tess_table_owner(t, p));
                return TESS_ERR_IO;
            }
    }
    return TESS_OK;
}

/* All files are in: write the MANIFEST, keep the newest epochs. */
static int commit(tess_ctx *ctx, tess__ckpt_rt *rt, tess__ckpt_writer *w, char *err, size_t errlen)
{
    uint8_t *user = NULL;
    size_t ulen = 0;
    int rc = check_complete(ctx, rt, w, err, errlen);
    if (rc == TESS_OK) rc = declare_tables(ctx, w, err, errlen);
    if (rc == TESS_OK) rc = frame_user(rt, &user, &ulen);
    if (rc == TESS_OK) rc = tess__ckpt_set_user_data(w, user, ulen, err, errlen);
    free(user);
    if (rc != TESS_OK) {
        if (err[0] == '\0') snprintf(err, errlen, "out of memory");
        tess__ckpt_abort(w);
        return rc;
    }
    rc = tess__ckpt_commit(w, err, errlen);
    if (rc == TESS_OK) tess__ckpt_retain(rt->store, (unsigned)rt->keep, NULL, 0);
    return rc;
}

static int all_files_in(tess_ctx *ctx, tess__ckpt_rt *rt)
{
    while (rt->files_in < ctx->nranks && !tess_interrupted(ctx)) {
        struct timespec ts;
        tess__deadline_after(&ts, 0.1);
        pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
    }
    return rt->files_in == ctx->nranks;
}

static void *committer_main(void *arg)
{
    tess_ctx *ctx = arg;
    tess__ckpt_rt *rt = ctx->ckpt;
    char err[512] = "";
    pthread_mutex_lock(&rt->mu);
    int complete = all_files_in(ctx, rt);
    uint64_t epoch = rt->committing;
    tess__ckpt_writer *w = rt->writer;
    rt->writer = NULL;
    int rc = complete ? rt->commit_failed : TESS_ERR_INTERRUPTED;
    snprintf(err, sizeof err, "%s", complete ? rt->commit_error : "interrupted");
    pthread_mutex_unlock(&rt->mu);
    if (rc == TESS_OK) rc = commit(ctx, rt, w, err, sizeof err);
    else tess__ckpt_abort(w);
    /* Before committing = 0: once that is visible, tess_finalize may free
     * ctx, so it is this thread's last touch of it (moves are counted, so
     * allowing them a moment before the next epoch can start is safe). */
    tess__ckpt_allow_moves(ctx);
    pthread_mutex_lock(&rt->mu);
    if (rc == TESS_OK) {
        rt->last_committed = epoch;
        rt->stats.committed++;
        rt->static_resave = 0;
        tess__log(ctx, "checkpoint epoch %" PRIu64 " committed", epoch);
    } else if (rc != TESS_ERR_INTERRUPTED) {
        char msg[600];
        snprintf(msg, sizeof msg, "epoch %" PRIu64 ": %s", epoch, err);
        tess__ckpt_note_failure(ctx, rc, msg);
    }
    free(rt->rank_tasks);
    rt->rank_tasks = NULL;
    rt->rank_tasks_len = 0;
    rt->committing = 0;
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

int tess__ckpt_start_committer(tess_ctx *ctx, uint64_t epoch)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_mutex_lock(&rt->mu);
    rt->committing = epoch;
    rt->files_in = 0;
    rt->commit_failed = 0;
    rt->commit_error[0] = '\0';
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int ok = pthread_create(&th, &attr, committer_main, ctx) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) {
        tess__ckpt_abort(rt->writer);
        rt->writer = NULL;
        rt->committing = 0;
        tess__ckpt_note_failure(ctx, TESS_ERR_NOMEM, "cannot start the committer thread");
    }
    pthread_mutex_unlock(&rt->mu);
    if (!ok) tess__ckpt_allow_moves(ctx);
    return ok ? TESS_OK : TESS_ERR_NOMEM;
}
