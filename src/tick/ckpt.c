/*
 * ckpt.c — checkpoints of the tick face, on rank 0 (docs/checkpoints.md,
 * "Ticks").  Every checkpoint_every-th tick each tick process sends its own
 * tuples of that tick, in the state class's partition-independent save form,
 * to process 0 (process_ckpt.c); once every process's part of a tick is in,
 * process 0 writes them as one epoch of the checkpoint store that the tables
 * face uses (src/ckpt/store.h: compressed files with checksums, the manifest
 * last, a directory owned by one job).  The epoch's user data say which job
 * and tick it holds, so a restore refuses another job's checkpoint naming
 * what differs, and a longer run's checkpoint beyond --ticks.
 *
 * A restore reads the newest valid epoch whole, in the control function,
 * before the processes start; process 0 hands it to the others.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt/store.h"
#include "ckpt/store_impl.h"
#include "tessera/rng.h"
#include "tick/tick_internal.h"

#define TICK_CKPT_MAGIC "TESSTICK"
#define TICK_CKPT_TABLE 0 /* the one "table" of an epoch: a part per process */
#define TICK_CKPT_KEEP 2  /* epochs kept, as the tables face's default */

/* The user data of an epoch, then the job string (not NUL-terminated). */
typedef struct tick_ckpt_head {
    char magic[8];
    uint32_t version, nparts;
    int64_t tick;
} tick_ckpt_head;

typedef struct pending_ckpt {
    int64_t tick;
    int got;
    tess_buf *parts; /* nparts */
} pending_ckpt;

struct tess__tick_ckpt {
    tess__ckpt_store *store;
    const char *app; /* its name, for messages */
    char *job;       /* "APP JOB": what the run's result depends on */
    int64_t ticks;
    uint64_t next_epoch;
    int nparts;
    pending_ckpt *pending;
    int npending;
    int64_t taken;
    /* the restored epoch (restore_tick > 0) */
    tess_buf *loaded;
    int nloaded;
    int64_t restored_tick;
    uint64_t restored_epoch;
    double restore_seconds;
    /* the epochs passed over, newest first: said once an older one loads,
     * or the newest alone in the refusal when none does (one line) */
    char skipped[4][512];
    int nskipped;
};

static uint64_t job_fingerprint(const char *job)
{
    uint64_t h = tess_mix64(UINT64_C(0x7469636b)); /* "tick": never a tables-face job */
    for (const char *c = job; *c; c++) h = tess_mix64(h ^ (uint8_t)*c);
    return h ? h : 1;
}

static char *job_string(const tess_tick_app *app, const tess_tick_options *o)
{
    const char *job = o->checkpoint_job ? o->checkpoint_job : "";
    size_t len = strlen(app->name) + strlen(job) + 2;
    char *s = malloc(len);
    if (s != NULL) snprintf(s, len, "%s%s%s", app->name, job[0] ? " " : "", job);
    return s;
}

/* ---- naming a mismatch ---- */

/* Words are separated by single spaces: the next word after w (or the end). */
static const char *next_word(const char *w, size_t n) { return w + n + (w[n] == ' '); }

/* 1 if the n bytes at w are a whole word of list. */
static int has_word(const char *list, const char *w, size_t n)
{
    for (const char *v = list; *v; v = next_word(v, strcspn(v, " ")))
        if (strcspn(v, " ") == n && strncmp(v, w, n) == 0) return 1;
    return 0;
}

/* list's word with the key of `word` ("rows" of "rows=64"), or "no KEY". */
static void word_of_key(const char *list, const char *word, char *out, size_t olen)
{
    size_t key = strcspn(word, "=");
    snprintf(out, olen, "no %.*s", (int)key, word);
    for (const char *v = list; *v; v = next_word(v, strcspn(v, " "))) {
        size_t m = strcspn(v, " ");
        if (strncmp(v, word, key) == 0 && (v[key] == '=' || (key == m && word[key] != '=')))
            snprintf(out, olen, "%.*s", (int)m, v);
    }
}

/* The first word of `a` that `b` lacks, and b's word of the same key
 * ("rows=64" against "rows=32"); 0 when every word is in b. */
static int first_missing_word(const char *a, const char *b, char *word, size_t wlen, char *other,
                              size_t olen)
{
    for (const char *w = a; *w; w = next_word(w, strcspn(w, " "))) {
        size_t n = strcspn(w, " ");
        if (has_word(b, w, n)) continue;
        snprintf(word, wlen, "%.*s", (int)n, w);
        word_of_key(b, word, other, olen);
        return 1;
    }
    return 0;
}

/* "the checkpoint is of jacobi rows=64, this run rows=32" into why. */
static void describe_mismatch(const char *theirs, const char *mine, char *why, size_t whylen)
{
    char w[200], o[200];
    size_t a = strcspn(theirs, " "), b = strcspn(mine, " ");
    if (a != b || strncmp(theirs, mine, a) != 0) /* the application's name comes first */
        snprintf(why, whylen, "its checkpoints are of %.*s, this run is %.*s", (int)a, theirs,
                 (int)b, mine);
    else if (first_missing_word(theirs, mine, w, sizeof w, o, sizeof o))
        snprintf(why, whylen, "its checkpoints are of another job ('%s'; this run: %s)", w, o);
    else if (first_missing_word(mine, theirs, w, sizeof w, o, sizeof o))
        snprintf(why, whylen, "its checkpoints are of another job ('%s'; this run: %s)",
                 strncmp(o, "no ", 3) == 0 ? "(none)" : o, w);
    else snprintf(why, whylen, "its checkpoints are of another job");
}

/* The job string in an epoch's user data, or NULL. */
static char *epoch_job(const tess__ckpt_epoch *e, int64_t *tick_out, uint32_t *nparts_out)
{
    size_t len = 0;
    const unsigned char *u = tess__ckpt_epoch_user_data(e, &len);
    tick_ckpt_head h;
    if (u == NULL || len < sizeof h) return NULL;
    memcpy(&h, u, sizeof h);
    if (memcmp(h.magic, TICK_CKPT_MAGIC, 8) != 0 || h.version != 1) return NULL;
    char *job = malloc(len - sizeof h + 1);
    if (job == NULL) return NULL;
    memcpy(job, u + sizeof h, len - sizeof h);
    job[len - sizeof h] = '\0';
    if (tick_out) *tick_out = h.tick;
    if (nparts_out) *nparts_out = h.nparts;
    return job;
}

/* The job of the newest epoch in dir written by another job, or NULL. */
static char *foreign_job(const char *dir)
{
    tess__ckpt_store *s = NULL;
    uint64_t *v = NULL, fp = 0;
    size_t n = 0;
    char *job = NULL, err[256];
    if (tess__ckpt_store_open(dir, 0, &s, err, sizeof err) != TESS_OK) return NULL;
    if (tess__ckpt_list(s, &v, &n, err, sizeof err) == TESS_OK && n > 0 &&
        tess__ckpt_epoch_fingerprint(s, v[n - 1], "", &fp)) {
        tess__ckpt_store *t = NULL;
        tess__ckpt_epoch *e = NULL;
        if (tess__ckpt_store_open(dir, fp, &t, err, sizeof err) == TESS_OK &&
            tess__ckpt_open_epoch(t, v[n - 1], &e, err, sizeof err) == TESS_OK)
            job = epoch_job(e, NULL, NULL);
        tess__ckpt_epoch_close(e);
        tess__ckpt_store_close(t);
    }
    free(v);
    tess__ckpt_store_close(s);
    return job;
}

/* ---- opening and restoring ---- */

static int accept_epoch(void *arg, const tess__ckpt_epoch *e, char *why, size_t whylen)
{
    const tess__tick_ckpt *c = arg;
    int64_t tick = 0;
    char *job = epoch_job(e, &tick, NULL);
    int refuse = 1;
    if (job == NULL) snprintf(why, whylen, "not a tick-face checkpoint");
    else if (strcmp(job, c->job) != 0) describe_mismatch(job, c->job, why, whylen);
    else if (tick < 1 || tick > c->ticks)
        snprintf(why, whylen, "after tick %lld, beyond --ticks %lld", (long long)tick,
                 (long long)c->ticks);
    else refuse = 0;
    free(job);
    return refuse;
}

static void report_skipped(void *arg, const char *line)
{
    tess__tick_ckpt *c = arg;
    if (c->nskipped < 4) snprintf(c->skipped[c->nskipped], sizeof c->skipped[0], "%s", line);
    c->nskipped++;
}

static void warn_skipped(tess_ctx *ctx, const tess__tick_ckpt *c)
{
    for (int i = 0; i < c->nskipped && i < 4; i++)
        tess__warn(ctx, "checkpoint skipped: %s", c->skipped[i]);
    if (c->nskipped > 4) tess__warn(ctx, "checkpoint skipped: %d more epochs", c->nskipped - 4);
}

static int read_parts(tess__tick_ckpt *c, const tess__ckpt_epoch *e, char *err, size_t errlen)
{
    uint32_t nparts = 0;
    const int32_t *owners;
    int is_static;
    int rc = tess__ckpt_epoch_table(e, TICK_CKPT_TABLE, &nparts, &owners, &is_static);
    if (rc != TESS_OK) return snprintf(err, errlen, "the epoch holds no tick state"), rc;
    c->loaded = calloc(nparts ? nparts : 1, sizeof *c->loaded);
    if (c->loaded == NULL) return TESS_ERR_NOMEM;
    c->nloaded = (int)nparts;
    for (uint32_t i = 0; i < nparts && rc == TESS_OK; i++) {
        void *data = NULL;
        size_t len = 0;
        rc = tess__ckpt_read_partition(e, TICK_CKPT_TABLE, i, &data, &len, err, errlen);
        c->loaded[i] = (tess_buf){.data = data, .len = len, .cap = len};
    }
    return rc;
}

static int restore_newest(tess_ctx *ctx, tess__tick_ckpt *c, const char *dir)
{
    char err[512] = "";
    tess__ckpt_epoch *e = NULL;
    double t0 = tess__tick_now_us();
    int rc = tess__ckpt_open_latest(c->store, UINT64_MAX, report_skipped, c, accept_epoch, c, &e,
                                    err, sizeof err);
    if (rc == TESS_ERR_NOTFOUND && c->nskipped == 0) {
        fprintf(stderr, "%s: no checkpoint in %s; starting afresh\n", c->app, dir);
        return TESS_OK;
    }
    if (rc == TESS_ERR_NOTFOUND) /* every epoch damaged or refused: never silently afresh */
        return tess__fail(ctx, TESS_ERR_INVAL, "cannot restore from %s: %s%s", dir, c->skipped[0],
                          c->nskipped > 1 ? " (and every older epoch)" : "");
    if (rc != TESS_OK) return tess__fail(ctx, rc, "cannot restore from %s: %s", dir, err);
    warn_skipped(ctx, c);
    char *job = epoch_job(e, &c->restored_tick, NULL);
    free(job);
    c->restored_epoch = tess__ckpt_epoch_number(e);
    rc = read_parts(c, e, err, sizeof err);
    tess__ckpt_epoch_close(e);
    if (rc != TESS_OK) return tess__fail(ctx, rc, "cannot restore from %s: %s", dir, err);
    c->restore_seconds = (tess__tick_now_us() - t0) / 1e6;
    return TESS_OK;
}

static int claim(tess_ctx *ctx, tess__tick_ckpt *c, const tess_tick_options *o)
{
    char err[512] = "";
    int rc = tess__ckpt_store_open(o->checkpoint_dir, job_fingerprint(c->job), &c->store, err,
                                   sizeof err);
    if (rc == TESS_OK) rc = tess__ckpt_claim(c->store, o->checkpoint_overwrite, err, sizeof err);
    if (rc == TESS_ERR_INVAL) {
        char *theirs = foreign_job(o->checkpoint_dir), why[400] = "it belongs to another job";
        if (theirs) describe_mismatch(theirs, c->job, why, sizeof why);
        free(theirs);
        return tess__fail(ctx, rc,
                          "checkpoint directory %s refused: %s (--checkpoint-overwrite deletes "
                          "them)",
                          o->checkpoint_dir, why);
    }
    if (rc != TESS_OK) return tess__fail(ctx, rc, "checkpoint directory: %s", err);
    uint64_t *v = NULL;
    size_t n = 0;
    rc = tess__ckpt_list(c->store, &v, &n, err, sizeof err);
    c->next_epoch = n ? v[n - 1] + 1 : 1;
    free(v);
    return rc == TESS_OK ? TESS_OK : tess__fail(ctx, rc, "checkpoint directory: %s", err);
}

int tess__tick_ckpt_open(tess_ctx *ctx, const tess_tick_app *app, const tess_tick_options *o,
                         tess__tick_ckpt **out)
{
    *out = NULL;
    if (o->checkpoint_dir == NULL) return TESS_OK;
    tess__tick_ckpt *c = calloc(1, sizeof *c);
    if (c != NULL) c->job = job_string(app, o);
    if (c == NULL || c->job == NULL) {
        free(c);
        return tess__fail(ctx, TESS_ERR_NOMEM, "out of memory");
    }
    c->app = app->name;
    c->ticks = o->ticks;
    c->nparts = ctx->workers_total;
    int rc = claim(ctx, c, o);
    if (rc == TESS_OK && o->restore) rc = restore_newest(ctx, c, o->checkpoint_dir);
    if (rc != TESS_OK) {
        tess__tick_ckpt_close(c);
        return rc;
    }
    *out = c;
    return TESS_OK;
}

int64_t tess__tick_ckpt_restored_tick(const tess__tick_ckpt *c) { return c ? c->restored_tick : 0; }

const tess_buf *tess__tick_ckpt_loaded(const tess__tick_ckpt *c, int *n_out)
{
    *n_out = c ? c->nloaded : 0;
    return c ? c->loaded : NULL;
}

void tess__tick_ckpt_report(const tess__tick_ckpt *c, tess_tick_result *res)
{
    if (c == NULL) return;
    res->restored_tick = c->restored_tick;
    res->restored_epoch = c->restored_epoch;
    res->restore_seconds = c->restore_seconds;
    res->checkpoints = c->taken;
}

static void free_parts(tess_buf *parts, int n)
{
    for (int i = 0; parts && i < n; i++) tess_buf_free(&parts[i]);
    free(parts);
}

void tess__tick_ckpt_close(tess__tick_ckpt *c)
{
    if (c == NULL) return;
    for (int i = 0; i < c->npending; i++) free_parts(c->pending[i].parts, c->nparts);
    free(c->pending);
    free_parts(c->loaded, c->nloaded);
    tess__ckpt_store_close(c->store);
    free(c->job);
    free(c);
}

/* ---- writing ---- */

static int write_epoch(tess__tick_ckpt *c, const pending_ckpt *p, char *err, size_t errlen)
{
    tess__ckpt_writer *w = NULL;
    int rc = tess__ckpt_begin(c->store, c->next_epoch, &w, err, errlen);
    if (rc != TESS_OK) return rc;
    int32_t *owners = calloc((size_t)c->nparts, sizeof *owners); /* all written by rank 0 */
    size_t jlen = strlen(c->job);
    tick_ckpt_head h = {.version = 1, .nparts = (uint32_t)c->nparts, .tick = p->tick};
    memcpy(h.magic, TICK_CKPT_MAGIC, 8);
    unsigned char *user = malloc(sizeof h + jlen);
    if (owners == NULL || user == NULL) rc = TESS_ERR_NOMEM;
    if (rc == TESS_OK) {
        memcpy(user, &h, sizeof h);
        memcpy(user + sizeof h, c->job, jlen);
        rc = tess__ckpt_set_table(w, TICK_CKPT_TABLE, (uint32_t)c->nparts, owners, 0, err, errlen);
    }
    for (int i = 0; i < c->nparts && rc == TESS_OK; i++)
        rc = tess__ckpt_add_partition(w, TICK_CKPT_TABLE, (uint32_t)i, p->parts[i].data,
                                      p->parts[i].len, err, errlen);
    if (rc == TESS_OK) rc = tess__ckpt_set_user_data(w, user, sizeof h + jlen, err, errlen);
    free(owners);
    free(user);
    if (rc != TESS_OK) {
        tess__ckpt_abort(w);
        return rc;
    }
    rc = tess__ckpt_commit(w, err, errlen);
    if (rc == TESS_OK) rc = tess__ckpt_retain(c->store, TICK_CKPT_KEEP, err, errlen);
    return rc;
}

static pending_ckpt *pending_for(tess__tick_ckpt *c, int64_t tick)
{
    for (int i = 0; i < c->npending; i++)
        if (c->pending[i].tick == tick) return &c->pending[i];
    pending_ckpt *more = realloc(c->pending, (size_t)(c->npending + 1) * sizeof *more);
    if (more == NULL) return NULL;
    c->pending = more;
    pending_ckpt *p = &c->pending[c->npending];
    *p = (pending_ckpt){.tick = tick, .parts = calloc((size_t)c->nparts, sizeof *p->parts)};
    if (p->parts == NULL) return NULL;
    c->npending++;
    return p;
}

/* Commit when every part is in.  A failed checkpoint does not fail the run
 * (the previous epoch stays usable), as on the tables face: one line says
 * so. */
static void commit_if_complete(tess_ctx *ctx, tess__tick_ckpt *c, pending_ckpt *p)
{
    if (p->got < c->nparts) return;
    char err[512] = "";
    int rc = write_epoch(c, p, err, sizeof err);
    if (rc == TESS_OK) c->taken++;
    else
        tess__warn(ctx, "checkpoint of tick %lld failed (the previous one stays usable): %s",
                   (long long)p->tick, err);
    c->next_epoch++; /* a failed epoch's number is not reused: its leftovers are swept */
    free_parts(p->parts, c->nparts);
    *p = c->pending[--c->npending];
}

int tess__tick_ckpt_add_part(tess_ctx *ctx, tess__tick_ckpt *c, int64_t tick, int part,
                             const void *data, size_t len)
{
    pending_ckpt *p = pending_for(c, tick);
    if (p == NULL || part < 0 || part >= c->nparts || p->parts[part].data != NULL)
        return p == NULL ? TESS_ERR_NOMEM : TESS_ERR_FORMAT;
    /* room for one byte more: an empty part is in once its data are not NULL */
    if (tess_buf_reserve(&p->parts[part], len + 1) == NULL) return TESS_ERR_NOMEM;
    if (len > 0) memcpy(p->parts[part].data, data, len);
    p->parts[part].len = len;
    p->got++;
    commit_if_complete(ctx, c, p);
    return TESS_OK;
}
