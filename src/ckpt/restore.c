/*
 * restore.c — loading the newest complete checkpoint into the tables.
 *
 * Rank 0 picks the epoch (the newest whose checksums verify) and tells every
 * rank to load it; each rank reads every partition file and keeps the
 * entries whose keys it stores now, then replays every rank's log the same
 * way.  Reading everything on every rank is what lets a checkpoint written
 * by R ranks with P partitions be restored onto R' ranks with P' partitions.
 *
 * Task blobs (the runs in flight at an asynchronous checkpoint) travel in
 * the user data: u32 app length, app bytes, then per rank u32 length and a
 * blob of u64 run sequence, u32 name length, kernel name, u32 count, and
 * count records of u32 instance, u32 state (0 finished, 1 position), u32
 * length, bytes.  Only the newest run counts: a rank whose cut came before
 * that run's RUN message had not started any of its instances.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt/ckpt.h"
#include "core/bytes.h"

typedef struct restored_msg {
    int32_t status, pad;
    char error[400];
} restored_msg;

/* ---------------------------------------------------------------- every rank */

static int restore_table(tess_ctx *ctx, const tess__ckpt_epoch *e, uint32_t id, char *err,
                         size_t errlen)
{
    uint32_t nparts = 0;
    const int32_t *owners;
    int is_static;
    int rc = tess__ckpt_epoch_table(e, id, &nparts, &owners, &is_static);
    if (rc == TESS_OK && id >= (uint32_t)ctx->ntables) rc = TESS_ERR_FORMAT;
    if (rc != TESS_OK) {
        snprintf(err, errlen, "checkpoint table %" PRIu32 " does not match this job", id);
        return rc;
    }
    for (uint32_t p = 0; p < nparts && rc == TESS_OK; p++) {
        void *data = NULL;
        size_t len = 0;
        rc = tess__ckpt_read_partition(e, id, p, &data, &len, err, errlen);
        if (rc == TESS_ERR_NOTFOUND) { /* not "no checkpoint": this one is damaged */
            snprintf(err, errlen,
                     "epoch %" PRIu64 " has no file for table %" PRIu32 " partition %" PRIu32,
                     tess__ckpt_epoch_number(e), id, p);
            rc = TESS_ERR_FORMAT;
        }
        if (rc == TESS_OK)
            rc = tess__table_restore_partition(ctx->tables[id], (int)p, (int)nparts, data, len, err,
                                               errlen);
        if (rc == TESS_ERR_FORMAT && err[0] == '\0')
            snprintf(err, errlen, "table %" PRIu32 " partition %" PRIu32 ": malformed data", id, p);
        free(data);
    }
    return rc;
}

/* Every replay log the manifest lists, in rank order: only those (a forged
 * owner rank near 2^31 once made this walk two billion ranks' names). */
static int replay_logs(tess_ctx *ctx, const tess__ckpt_epoch *e, char *err, size_t errlen)
{
    uint32_t r;
    for (uint32_t i = 0; tess__ckpt_epoch_log_rank(e, i, &r); i++) {
        TESS_RETURN_IF(ctx, tess_interrupted(ctx), TESS_ERR_INTERRUPTED, "restore interrupted");
        void *data = NULL;
        size_t len = 0;
        int rc = tess__ckpt_read_log(e, r, &data, &len, err, errlen);
        if (rc == TESS_OK) rc = tess__table_replay_log(ctx, data, len);
        free(data);
        if (rc == TESS_ERR_FORMAT && err[0] == '\0')
            snprintf(err, errlen, "replay log of rank %" PRIu32 ": malformed", r);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static int load_epoch(tess_ctx *ctx, uint64_t epoch, char *err, size_t errlen)
{
    tess__ckpt_store *s = NULL;
    tess__ckpt_epoch *e = NULL;
    int rc = tess__ckpt_open_store(ctx, &s, err, errlen);
    /* rank 0 verified every file when it chose the epoch */
    if (rc == TESS_OK) rc = tess__ckpt_open_epoch_verified_elsewhere(s, epoch, &e, err, errlen);
    if (rc == TESS_OK) tess__tables_clear_local(ctx);
    for (uint32_t i = 0; rc == TESS_OK && i < tess__ckpt_epoch_table_count(e); i++)
        rc = restore_table(ctx, e, tess__ckpt_epoch_table_id(e, i), err, errlen);
    if (rc == TESS_OK) rc = replay_logs(ctx, e, err, errlen);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
    return rc;
}

void tess__ckpt_on_restore(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    uint64_t epoch;
    if (tess__msg_head(&epoch, sizeof epoch, p, len) != 0) return;
    double t0 = tess_now();
    restored_msg m = {0};
    m.status = load_epoch(ctx, epoch, m.error, sizeof m.error);
    if (m.status != TESS_OK && m.error[0] == '\0')
        snprintf(m.error, sizeof m.error, "%s", tess_strerror(m.status));
    pthread_mutex_lock(&ctx->ckpt->mu);
    ctx->ckpt->stats.restore_seconds = tess_now() - t0;
    pthread_mutex_unlock(&ctx->ckpt->mu);
    tess__send(ctx, src, TESS_MSG_CKPT_RESTORED, &m, sizeof m, NULL, 0);
}

void tess__ckpt_on_restored(tess_ctx *ctx, int src, const uint8_t *p, size_t len)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    restored_msg m;
    if (tess__msg_head(&m, sizeof m, p, len) != 0) return;
    m.error[sizeof m.error - 1] = '\0';
    pthread_mutex_lock(&rt->mu);
    if (m.status != TESS_OK && rt->restore_status == TESS_OK) {
        rt->restore_status = m.status;
        snprintf(rt->restore_error, sizeof rt->restore_error, "rank %d: %s", src, m.error);
    }
    rt->restore_waiting--;
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
}

/* ---------------------------------------------------------------- rank 0 */

static void report_skipped(void *arg, const char *line)
{
    tess__warn(arg, "checkpoint skipped: %s", line);
}

/* Every rank loads `epoch`; others first, so they work while rank 0 does. */
static int load_everywhere(tess_ctx *ctx, uint64_t epoch)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    pthread_mutex_lock(&rt->mu);
    rt->restore_waiting = ctx->nranks;
    rt->restore_status = TESS_OK;
    pthread_mutex_unlock(&rt->mu);
    for (int r = ctx->nranks - 1; r >= 0; r--)
        tess__send(ctx, r, TESS_MSG_CKPT_RESTORE, &epoch, sizeof epoch, NULL, 0);
    pthread_mutex_lock(&rt->mu);
    while (rt->restore_waiting > 0 && !tess_interrupted(ctx)) {
        struct timespec ts;
        tess__deadline_after(&ts, 0.1);
        pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
    }
    int rc = rt->restore_waiting > 0 ? TESS_ERR_INTERRUPTED : rt->restore_status;
    pthread_mutex_unlock(&rt->mu);
    if (rc == TESS_ERR_INTERRUPTED) return tess__fail(ctx, rc, "restore interrupted");
    if (rc != TESS_OK) return tess__fail(ctx, rc, "restore failed: %s", rt->restore_error);
    return TESS_OK;
}

/* A static table restored with another partition count must be saved anew. */
static void check_statics(tess_ctx *ctx, const tess__ckpt_epoch *e)
{
    for (uint32_t i = 0; i < tess__ckpt_epoch_table_count(e); i++) {
        uint32_t id = tess__ckpt_epoch_table_id(e, i), nparts;
        const int32_t *owners;
        int st;
        if (tess__ckpt_epoch_table(e, id, &nparts, &owners, &st) != TESS_OK || !st) continue;
        if (id < (uint32_t)ctx->ntables &&
            nparts != (uint32_t)tess_table_partitions(ctx->tables[id]))
            ctx->ckpt->static_resave = 1;
    }
}

/* A little-endian u32 at p[*off], if len leaves room for one. */
static int get32(const uint8_t *p, size_t len, size_t *off, uint32_t *v)
{
    if (len - *off < 4) return 0;
    *v = tess__get_le32(p + *off);
    *off += 4;
    return 1;
}

static uint64_t blob_seq(const uint8_t *b, size_t len) { return len >= 8 ? tess__get_le64(b) : 0; }

/* Append one rank's blob of run `seq` to the restored records; 0 on
 * malformed input. */
static int merge_blob(tess__ckpt_rt *rt, const uint8_t *b, size_t len, uint64_t seq,
                      uint32_t *count)
{
    size_t off = 8;
    uint32_t nlen, n;
    if (len < 8 || !get32(b, len, &off, &nlen) || nlen > len - off) return 0;
    if (blob_seq(b, len) != seq) return 1;
    const char *name = (const char *)b + off;
    off += nlen;
    if (!get32(b, len, &off, &n)) return 0;
    if (n > 0 && rt->restored_kernel == NULL) rt->restored_kernel = strndup(name, nlen);
    size_t rec = len - off;
    uint8_t *grown = realloc(rt->restored_tasks, 4 + rt->restored_tasks_len + rec);
    if (grown == NULL) return 0;
    if (rt->restored_tasks_len == 0) rt->restored_tasks_len = 4;
    memcpy(grown + rt->restored_tasks_len, b + off, rec);
    rt->restored_tasks = grown;
    rt->restored_tasks_len += rec;
    *count += n;
    return 1;
}

/* Split the stored user data into the application's part and task blobs. */
static int split_user(tess__ckpt_rt *rt, const uint8_t *u, size_t len, void **user_out,
                      size_t *len_out)
{
    size_t off = 0;
    uint32_t ulen, blen, count = 0;
    uint64_t newest = 0;
    if (!get32(u, len, &off, &ulen) || ulen > len - off) return TESS_ERR_FORMAT;
    for (size_t at = off + ulen; at < len; at += blen) {
        if (!get32(u, len, &at, &blen) || blen > len - at) return TESS_ERR_FORMAT;
        if (blob_seq(u + at, blen) > newest) newest = blob_seq(u + at, blen);
    }
    for (size_t at = off + ulen; at < len; at += blen) {
        get32(u, len, &at, &blen);
        if (!merge_blob(rt, u + at, blen, newest, &count)) return TESS_ERR_FORMAT;
    }
    if (rt->restored_tasks) tess__put_le32(rt->restored_tasks, count);
    *user_out = NULL;
    *len_out = ulen;
    if (ulen == 0) return TESS_OK;
    if ((*user_out = malloc(ulen)) == NULL) return TESS_ERR_NOMEM;
    memcpy(*user_out, u + 4, ulen);
    return TESS_OK;
}

/* The application's part of an epoch's user data (split_user's first
 * field), shown to its accept function before anything is loaded. */
typedef struct app_accept {
    tess_checkpoint_accept_fn fn;
    void *arg;
} app_accept;

/* What rank 0 asks of an epoch before any rank loads it: the job's every
 * table, each partition with its file (a manifest rewritten with valid
 * checksums could leave a table or a partition out, and restore a hole),
 * no table the job does not have, then the application's own accept. */
typedef struct epoch_checks {
    tess_ctx *ctx;
    app_accept app;
} epoch_checks;

static int missing_table(const tess_ctx *ctx, const tess__ckpt_epoch *e, char *why, size_t whylen)
{
    for (uint32_t i = 0; i < tess__ckpt_epoch_table_count(e); i++)
        if (tess__ckpt_epoch_table_id(e, i) >= (uint32_t)ctx->ntables)
            return snprintf(why, whylen,
                            "refused: does not match this job: records table %" PRIu32
                            ", which the job does not have",
                            tess__ckpt_epoch_table_id(e, i)),
                   1;
    for (int id = 0; id < ctx->ntables; id++) {
        uint32_t nparts = 0;
        const int32_t *owners;
        int st;
        if (tess__ckpt_epoch_table(e, (uint32_t)id, &nparts, &owners, &st) != TESS_OK ||
            nparts == 0)
            return snprintf(why, whylen, "refused: does not match this job: lacks table %s",
                            ctx->tables[id]->name),
                   1;
        for (uint32_t p = 0; p < nparts; p++)
            if (!tess__ckpt_epoch_has_partition(e, (uint32_t)id, p))
                return snprintf(why, whylen, "refused: has no file for table %s partition %" PRIu32,
                                ctx->tables[id]->name, p),
                       1;
    }
    return 0;
}

static int accept_epoch(void *arg, const tess__ckpt_epoch *e, char *why, size_t whylen)
{
    const epoch_checks *c = arg;
    if (missing_table(c->ctx, e, why, whylen)) return 1;
    size_t len = 0, off = 0;
    const uint8_t *u = tess__ckpt_epoch_user_data(e, &len);
    uint32_t ulen;
    if (!get32(u, len, &off, &ulen) || ulen > len - off)
        return snprintf(why, whylen, "refused: malformed user data"), 1;
    if (c->app.fn == NULL) return 0;
    char reason[400] = "";
    if (c->app.fn(c->app.arg, ulen ? u + off : NULL, ulen, tess__ckpt_epoch_number(e), reason,
                  sizeof reason) == 0)
        return 0;
    return snprintf(why, whylen, "refused by the application: %s",
                    reason[0] ? reason : "no reason"),
           1;
}

/* The newest epoch below `below` that passes accept_epoch. */
static int open_newest(tess_ctx *ctx, uint64_t below, const epoch_checks *checks,
                       tess__ckpt_epoch **e_out)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    char err[512] = "";
    int rc = tess__ckpt_open_rank0_store(ctx, err, sizeof err);
    if (rc == TESS_OK)
        rc = tess__ckpt_open_latest(rt->store, below, report_skipped, ctx, accept_epoch,
                                    (void *)checks, e_out, err, sizeof err);
    if (rc == TESS_ERR_NOTFOUND)
        return tess__fail(ctx, rc, "no usable checkpoint in %s%s%s", rt->dir, err[0] ? ": " : "",
                          err);
    if (rc != TESS_OK) return tess__fail(ctx, rc, "%s", err);
    return TESS_OK;
}

int tess_checkpoint_restore(tess_ctx *ctx, void **user_out, size_t *len_out, uint64_t *epoch_out)
{
    return tess_checkpoint_restore_checked(ctx, NULL, NULL, NULL, NULL, user_out, len_out,
                                           epoch_out);
}

int tess_checkpoint_restore_accept(tess_ctx *ctx, tess_checkpoint_accept_fn accept, void *arg,
                                   void **user_out, size_t *len_out, uint64_t *epoch_out)
{
    return tess_checkpoint_restore_checked(ctx, accept, arg, NULL, NULL, user_out, len_out,
                                           epoch_out);
}

/* Empty every table on every rank: what a refused epoch loaded must not
 * stay (if no older epoch qualifies, the job starts afresh on them). */
static void clear_tables(tess_ctx *ctx)
{
    for (int i = 0; i < ctx->ntables; i++) tess_table_clear(ctx->tables[i]);
}

/* Forget the task records of an epoch that was then refused. */
static void forget_tasks(tess__ckpt_rt *rt)
{
    free(rt->restored_tasks);
    free(rt->restored_kernel);
    rt->restored_tasks = NULL;
    rt->restored_tasks_len = 0;
    rt->restored_kernel = NULL;
}

/* Load epoch e everywhere and let the application check what it got.
 * TESS_OK; a refusal (TESS_ERR_FORMAT: the epoch's content is wrong, the
 * line in why) after which an older epoch may do; or a hard error. */
static int try_epoch(tess_ctx *ctx, tess__ckpt_epoch *e, tess_checkpoint_validate_fn validate,
                     void *varg, void **user, size_t *app_len, char *why, size_t whylen)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    uint64_t epoch = tess__ckpt_epoch_number(e);
    check_statics(ctx, e);
    size_t ulen = 0;
    const uint8_t *u = tess__ckpt_epoch_user_data(e, &ulen);
    forget_tasks(rt);
    int rc = split_user(rt, u, ulen, user, app_len);
    if (rc != TESS_OK) return snprintf(why, whylen, "malformed user data"), TESS_ERR_FORMAT;
    rc = load_everywhere(ctx, epoch);
    if (rc == TESS_ERR_FORMAT) {
        snprintf(why, whylen, "%s", rt->restore_error);
        clear_tables(ctx);
    } else if (rc == TESS_OK && validate != NULL &&
               validate(ctx, varg, *user, *app_len, epoch, why, whylen) != 0) {
        if (why[0] == '\0') snprintf(why, whylen, "no reason");
        rc = TESS_ERR_FORMAT;
        clear_tables(ctx);
    }
    if (rc != TESS_OK) {
        free(*user);
        *user = NULL;
        forget_tasks(rt);
    }
    return rc;
}

int tess_checkpoint_restore_checked(tess_ctx *ctx, tess_checkpoint_accept_fn accept, void *arg,
                                    tess_checkpoint_validate_fn validate, void *varg,
                                    void **user_out, size_t *len_out, uint64_t *epoch_out)
{
    if (ctx == NULL || user_out == NULL || len_out == NULL) return TESS_ERR_INVAL;
    int rc = tess__ckpt_check_control(ctx, "tess_checkpoint_restore()");
    epoch_checks checks = {ctx, {accept, arg}};
    uint64_t below = UINT64_MAX, epoch = 0;
    void *user = NULL;
    size_t app_len = 0;
    while (rc == TESS_OK) {
        tess__ckpt_epoch *e = NULL;
        rc = open_newest(ctx, below, &checks, &e);
        if (rc != TESS_OK) return rc;
        epoch = tess__ckpt_epoch_number(e);
        char why[512] = "";
        rc = try_epoch(ctx, e, validate, varg, &user, &app_len, why, sizeof why);
        tess__ckpt_epoch_close(e);
        if (rc != TESS_ERR_FORMAT) break;
        /* passed over like a damaged epoch: the next older one is tried */
        tess__warn(ctx, "checkpoint skipped: %s: epoch %" PRIu64 " refused once loaded: %s",
                   ctx->ckpt->dir, epoch, why);
        below = epoch;
        rc = TESS_OK;
    }
    if (rc != TESS_OK) return rc;
    *user_out = user;
    *len_out = app_len;
    if (epoch_out) *epoch_out = epoch;
    ctx->ckpt->last_committed = epoch;
    return TESS_OK;
}

/* The first tess_run of the kernel that was in flight takes its records. */
int tess__ckpt_take_restored(tess_ctx *ctx, const char *kernel, uint8_t **recs_out, size_t *len_out)
{
    tess__ckpt_rt *rt = ctx->ckpt;
    *recs_out = NULL;
    *len_out = 0;
    if (rt == NULL || rt->restored_kernel == NULL || strcmp(rt->restored_kernel, kernel) != 0)
        return 0;
    *recs_out = rt->restored_tasks;
    *len_out = rt->restored_tasks_len;
    rt->restored_tasks = NULL;
    rt->restored_tasks_len = 0;
    free(rt->restored_kernel);
    rt->restored_kernel = NULL;
    return 1;
}
