/*
 * ckpt_write.c — the background half of a checkpoint: each rank's writer
 * thread compresses and writes its copies and log, then reports its files
 * to rank 0; rank 0's committer thread waits for every rank's report and
 * writes the MANIFEST (or removes the epoch when any rank failed).
 *
 * Workers never wait for the disk: by the time a writer starts, the rank's
 * cut is over and its kernels have moved on.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt/runtime.h"
#include "comm/comm.h"

uint64_t tess__ckpt_fingerprint(tess_ctx *ctx);
void tess__ckpt_note_failure(tess_ctx *ctx, int rc, const char *msg);

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

/* Local partitions of the static tables, encoded one at a time from the
 * live tables (read-only by contract; no partition moves during an epoch). */
static int write_statics(tess__ckpt_job *job, tess__ckpt_store *s, tess__ckpt_file **files,
                         uint32_t *n, char *err, size_t errlen)
{
    tess_ctx *ctx = job->ctx;
    int rc = TESS_OK;
    for (int i = 0; i < ctx->ntables && rc == TESS_OK; i++) {
        tess_table *t = ctx->tables[i];
        for (int p = 0; tess__table_is_static(t) && p < tess_table_partitions(t); p++) {
            if (!tess_table_is_local(t, p)) continue;
            uint8_t *buf = NULL;
            size_t len = 0;
            tess__ckpt_file *grown = realloc(*files, (*n + job->ncopies + 2) * sizeof *grown);
            if (grown == NULL) return TESS_ERR_NOMEM;
            *files = grown;
            rc = tess__table_encode_partition(t, p, &buf, &len);
            grown[*n] = (tess__ckpt_file){.kind = TESS__CKPT_FILE_PARTITION,
                                          .in_static = (uint8_t)job->static_generation,
                                          .a = (uint32_t)i, .b = (uint32_t)p};
            if (rc == TESS_OK)
                rc = tess__ckpt_write_entry(s, job->epoch, &grown[*n], buf, len, err, errlen);
            free(buf);
            if (rc != TESS_OK) return rc;
            ++*n;
        }
    }
    return rc;
}

static int write_files(tess__ckpt_job *job, tess__ckpt_store *s, tess__ckpt_file *files,
                       uint32_t *n, char *err, size_t errlen)
{
    int rc = TESS_OK;
    for (int i = 0; i < job->ncopies && rc == TESS_OK; i++) {
        const tess__ckpt_copy *c = &job->copies[i];
        files[*n] = (tess__ckpt_file){.kind = TESS__CKPT_FILE_PARTITION, .a = c->table,
                                      .b = c->part};
        rc = tess__ckpt_write_entry(s, job->epoch, &files[*n], c->buf, c->len, err, errlen);
        if (rc == TESS_OK) ++*n;
    }
    if (rc == TESS_OK && job->log_len > 0) {
        files[*n] = (tess__ckpt_file){.kind = TESS__CKPT_FILE_LOG, .a = (uint32_t)job->ctx->rank};
        rc = tess__ckpt_write_entry(s, job->epoch, &files[*n], job->log, job->log_len, err,
                                    errlen);
        if (rc == TESS_OK) ++*n;
    }
    return rc;
}

static void send_files(tess__ckpt_job *job, int rc, const char *err, const tess__ckpt_file *files,
                       uint32_t n)
{
    files_msg h = {.epoch = job->epoch, .status = rc, .nfiles = n,
                   .tasks_len = (uint32_t)job->tasks_len};
    snprintf(h.error, sizeof h.error, "%s", err);
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

static void *writer_main(void *arg)
{
    tess__ckpt_job *job = arg;
    tess_ctx *ctx = job->ctx;
    tess__ckpt_rt *rt = ctx->ckpt;
    double t0 = tess_now();
    char err[512] = "";
    tess__ckpt_store *s = NULL;
    tess__ckpt_file *files = calloc((size_t)job->ncopies + 1, sizeof *files);
    uint32_t n = 0;
    int rc = files ? tess__ckpt_open_store(ctx, &s, err, sizeof err) : TESS_ERR_NOMEM;
    if (rc == TESS_OK && rt->fail_epoch == job->epoch)
        tess__ckpt_store_set_fail_hook(s, fail_always, NULL); /* TESS_CKPT_FAIL_EPOCH */
    if (rc == TESS_OK) rc = write_files(job, s, files, &n, err, sizeof err);
    if (rc == TESS_OK && job->static_generation > 0)
        rc = write_statics(job, s, &files, &n, err, sizeof err);
    if (rc != TESS_OK && err[0] == '\0') snprintf(err, sizeof err, "out of memory");
    send_files(job, rc, err, files, n);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; i++) bytes += files[i].size;
    tess__ckpt_store_close(s);
    free(files);
    tess__ckpt_job_free(job);
    pthread_mutex_lock(&rt->mu);
    rt->stats.write_seconds += tess_now() - t0;
    rt->stats.bytes_written += bytes;
    rt->writers--;
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

/*
 * Piccolo's checkpoints are cheap because the writer uses what the workers
 * leave idle.  With as many workers as cores nothing is left idle unless the
 * writer asks for it: at normal priority the scheduler shares the cores out
 * evenly and the writer's compression comes out of the iterations.  At
 * SCHED_IDLE it runs while workers wait (barriers, the end of a run).  Only
 * for CpBarrier: the next checkpoint barrier waits for this epoch's commit,
 * and that wait gives the writer the cores, so the delay is bounded; a
 * CpPeriodic writer (kernels that may keep every core busy for hours) keeps
 * normal priority.  Failing to lower it is harmless.
 */
static void *writer_thread(void *arg)
{
    const tess__ckpt_job *job = arg;
    if (job->idle_priority) {
        struct sched_param none = {.sched_priority = 0};
        pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
    }
    return writer_main(arg);
}

/* rt->mu held. */
void tess__ckpt_start_writer(tess__ckpt_rt *rt, tess__ckpt_job *job)
{
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rt->writers++;
    if (pthread_create(&th, &attr, writer_thread, job) != 0) {
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
    memcpy(n + rt->rank_tasks_len, &len, 4);
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
    if (rc == TESS_OK) rc = append_tasks(rt, body + (size_t)h->nfiles * sizeof(tess__ckpt_file),
                                         h->tasks_len);
    if (rc != TESS_OK && !rt->commit_failed) {
        rt->commit_failed = rc;
        snprintf(rt->commit_error, sizeof rt->commit_error, "%s",
                 h->status ? h->error : err[0] ? err : "out of memory");
    }
}

void tess__ckpt_on_files(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    files_msg h;
    if (len < sizeof h || ctx->rank != 0) return;
    memcpy(&h, p, sizeof h);
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
    uint32_t ulen = (uint32_t)rt->user_len;
    memcpy(buf, &ulen, 4);
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
        rc = tess__ckpt_set_table(w, (uint32_t)i, (uint32_t)n, owners,
                                  tess__table_is_static(t), err, errlen);
        free(owners);
    }
    return rc;
}

/* Every partition must be in some rank's files (static ones only when this
 * epoch saves them; otherwise the saved ones are referenced): an epoch that
 * lacks one would restore a hole, so it is not committed. */
static int check_complete(tess_ctx *ctx, tess__ckpt_rt *rt, const tess__ckpt_writer *w,
                          char *err, size_t errlen)
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
static int commit(tess_ctx *ctx, tess__ckpt_rt *rt, tess__ckpt_writer *w, char *err,
                  size_t errlen)
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
