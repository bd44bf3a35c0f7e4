/*
 * tile_ckpt.c — checkpoints of the tiles-face applications: the job's
 * identity, --restore, and the journal rank 0 writes while the tiles run
 * (tile_ckpt.h; the files are read back by tile_journal.c).
 *
 * The journal's syncs run on a thread of their own (tile_flusher.h).
 *
 * Ordering: every rank reads DIR in its prepare, before tess_main; rank 0
 * writes to it only from the control function, after tess_main claimed DIR
 * (its OWNER, src/ckpt/store_owner.c, through tess_checkpoint_enable with
 * the identity as the job string) and after every rank's prepare (tess_main
 * starts with a collective step), so no rank reads a journal being written
 * and nothing is written into a directory of another job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cli.h"
#include "tile_ckpt.h"

#define IDENTITY_MAX 8192
#define DEFAULT_EVERY_S 1.0

/* ---- identity ---- */

static int listed(const char *const *names, const char *name)
{
    for (; names && *names; names++)
        if (strcmp(*names, name) == 0) return 1;
    return 0;
}

/* "size N hash H" of a file's content, or -1. */
static int file_summary(const char *path, char *out, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) return -1;
    static uint8_t buf[1 << 20];
    uint64_t h = 0, size = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
        h = app_hash_bytes(h, buf, n);
        size += n;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) return -1;
    snprintf(out, cap, "size %llu hash %016llx", (unsigned long long)size, (unsigned long long)h);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const app_tile_given *)a)->name, ((const app_tile_given *)b)->name);
}

/* The option lines of the identity, sorted by name: "--NAME VALUE". */
static void identity_options(const app_tile_spec *spec, char *text, size_t cap)
{
    const app_tile_cli *c = spec->cli;
    app_tile_given g[APP_TILE_MAX_GIVEN];
    memcpy(g, c->given, (size_t)c->ngiven * sizeof *g);
    qsort(g, (size_t)c->ngiven, sizeof *g, by_name);
    for (int i = 0; i < c->ngiven; i++) {
        if (listed(spec->identity_skip, g[i].name)) continue;
        char value[128];
        const char *v = g[i].value ? g[i].value : "(set)";
        if (g[i].value && listed(spec->identity_files, g[i].name) &&
            file_summary(g[i].value, value, sizeof value) == 0)
            v = value; /* a file counts by its content, not its name */
        size_t used = strlen(text);
        snprintf(text + used, cap - used, "--%s %s\n", g[i].name, v);
    }
}

static char *make_identity(const app_tile_spec *spec)
{
    char *text = malloc(IDENTITY_MAX);
    if (text == NULL) return NULL;
    const tess_tile_job *j = spec->job;
    /* the area last: a mismatch is named by the first line that differs,
     * and an option that sizes the area says more than the size */
    snprintf(text, IDENTITY_MAX, "tessera tiles checkpoint 1\napp %s\n", spec->name);
    identity_options(spec, text, IDENTITY_MAX);
    size_t n = strlen(text);
    n += (size_t)snprintf(text + n, IDENTITY_MAX - n, "area");
    for (int d = 0; d < j->ndims && n < IDENTITY_MAX; d++)
        n += (size_t)snprintf(text + n, IDENTITY_MAX - n, "%s%lld", d ? "x" : " ",
                              (long long)j->extent[d]);
    if (n < IDENTITY_MAX) snprintf(text + n, IDENTITY_MAX - n, " out %zu\n", j->out_bytes);
    return text;
}

/* DIR's identity is this run's (0), none (1), another's (-1, why says which line). */
static int check_identity(const app_tile_ckpt *k, char *why, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" APP_TILE_IDENTITY, k->dir);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) return 1;
    char *theirs = calloc(1, IDENTITY_MAX);
    if (theirs != NULL) (void)!fread(theirs, 1, IDENTITY_MAX - 1, fp);
    fclose(fp);
    int rc = -1;
    if (theirs != NULL) rc = app_tile_identity_compare(theirs, k->identity, why, cap);
    else snprintf(why, cap, "%s is damaged", APP_TILE_IDENTITY);
    free(theirs);
    return rc;
}

/* ---- restore ---- */

static void ckpt_error(const app_tile_ckpt *k, const char *why)
{
    if (tess_rank(k->ctx) == 0) app_error(k->app, "checkpoint in %s: %s", k->dir, why);
}

static uint64_t count_bits(const uint8_t *done, uint64_t cells)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < cells; i++) n += done[i / 8] >> (i % 8) & 1;
    return n;
}

/* Read the journal: rank 0 puts the outputs in place; every rank marks the
 * finished cells.  0, or -1 after one line. */
static int restore(app_tile_ckpt *k)
{
    uint64_t cells = app_tile_area_cells(k->job);
    k->done = calloc(cells / 8 + 1, 1);
    if (k->done == NULL) return ckpt_error(k, "out of memory for the finished cells"), -1;
    app_tile_journal_read j = {.job = k->job,
                               .identity_hash = k->identity_hash,
                               .out = tess_rank(k->ctx) == 0 ? k->job->output : NULL,
                               .done = k->done};
    char why[512];
    int rc = app_tile_journal_load(k->dir, &j, why, sizeof why);
    if (rc < 0) return ckpt_error(k, why), -1;
    if (rc > 0) return 0; /* no journal: start afresh */
    k->restoring = 1;
    k->journal_records = j.records;
    k->restored_cells = count_bits(k->done, cells);
    k->job->done = k->done;
    if (tess_rank(k->ctx) == 0 && k->cli->progress != APP_PROGRESS_OFF)
        fprintf(stderr, "%s: restored %llu of %llu cells (%llu tiles) from %s\n", k->app,
                (unsigned long long)k->restored_cells, (unsigned long long)cells,
                (unsigned long long)j.records, k->dir);
    return 0;
}

/* ---- the journal, written ---- */

static int write_all(int fd, const void *p, size_t len, off_t off)
{
    const uint8_t *b = p;
    while (len > 0) {
        ssize_t n = pwrite(fd, b, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        b += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

static int io_error(app_tile_ckpt *k, const char *what)
{
    return tess_set_error(k->ctx, TESS_ERR_IO, "checkpoint in %s: cannot write %s: %s", k->dir,
                          what, strerror(errno));
}

/* The flusher failed earlier: the run fails with its reason. */
static int flusher_error(app_tile_ckpt *k)
{
    return tess_set_error(k->ctx, TESS_ERR_IO, "checkpoint in %s: cannot write %s: %s", k->dir,
                          k->flusher.failed, strerror(k->flusher.err));
}

/* Every S seconds: the queued records to the flusher, if it is idle (else
 * at a later tile: the controller does not wait for the disk). */
static int offer(app_tile_ckpt *k)
{
    double every = k->cli->ckpt_every_s > 0 ? k->cli->ckpt_every_s : DEFAULT_EVERY_S;
    double now = tess_now();
    if (now - k->last_flush < every) return TESS_OK;
    int rc = app_tile_flusher_offer(&k->flusher, &k->pending, &k->npending, &k->cap_pending);
    if (rc < 0) return flusher_error(k);
    if (rc > 0) k->last_flush = now;
    return TESS_OK;
}

static int queue_record(app_tile_ckpt *k, const tess_tile_box *box, const void *out, size_t bytes)
{
    if (k->npending == k->cap_pending) {
        int cap = k->cap_pending ? 2 * k->cap_pending : 64;
        app_tile_record *p = realloc(k->pending, (size_t)cap * sizeof *p);
        if (p == NULL) return tess_set_error(k->ctx, TESS_ERR_NOMEM, "out of memory");
        k->pending = p;
        k->cap_pending = cap;
    }
    app_tile_record *r = &k->pending[k->npending++];
    memset(r, 0, sizeof *r);
    r->ndims = (uint32_t)box->ndims;
    memcpy(r->lo, box->lo, sizeof r->lo);
    memcpy(r->hi, box->hi, sizeof r->hi);
    r->offset = k->data_off;
    r->bytes = bytes;
    r->data_hash = app_hash_bytes(0, out, bytes);
    app_tile_record_seal(r);
    return TESS_OK;
}

static int journal_tile(app_tile_ckpt *k, const tess_tile_box *box, const void *out);

/* The job's write(): rank 0's controller thread, one tile at a time; the
 * time it takes is the journal's cost to the run (reported at the end). */
static int journal_write(const tess_tile_box *box, const void *out, void *arg)
{
    app_tile_ckpt *k = arg;
    double t0 = tess_now();
    int rc = journal_tile(k, box, out);
    k->busy_s += tess_now() - t0;
    k->tiles_written++;
    return rc;
}

static int journal_tile(app_tile_ckpt *k, const tess_tile_box *box, const void *out)
{
    size_t bytes = k->job->out_bytes;
    for (int d = 0; d < box->ndims; d++) bytes *= (size_t)(box->hi[d] - box->lo[d]);
    app_tile_box_place(k->job, box, out, k->out);
    if (write_all(k->fd_data, out, bytes, (off_t)k->data_off) != 0)
        return io_error(k, APP_TILE_DATA);
    int rc = queue_record(k, box, out, bytes);
    k->data_off += bytes;
    return rc == TESS_OK ? offer(k) : rc;
}

/* ---- the steps ---- */

int app_tile_ckpt_prepare(app_tile_ckpt *k, tess_ctx *ctx, const app_tile_spec *spec)
{
    *k = (app_tile_ckpt){.app = spec->name,
                         .dir = spec->cli->ckpt_dir,
                         .cli = spec->cli,
                         .ctx = ctx,
                         .job = spec->job,
                         .fd_data = -1,
                         .fd_journal = -1};
    if (k->dir == NULL) return 0;
    k->identity = make_identity(spec);
    if (k->identity == NULL) return ckpt_error(k, "out of memory"), -1;
    k->identity_hash = app_hash_bytes(0, k->identity, strlen(k->identity));
    char why[600];
    int same = check_identity(k, why, sizeof why);
    if (same < 0 && !k->cli->ckpt_overwrite) {
        if (tess_rank(ctx) == 0)
            app_error(k->app,
                      "checkpoint in %s is another job's (%s); use another directory, "
                      "or --checkpoint-overwrite",
                      k->dir, why);
        return -1;
    }
    if (k->cli->restore && same == 0 && restore(k) != 0) return -1;
    k->afresh_note = k->cli->restore && !k->restoring; /* said once DIR is claimed */
    if (tess_rank(ctx) == 0) { /* the output rank: its tiles go through the journal */
        k->out = k->job->output;
        k->job->output = NULL;
        k->job->write = journal_write;
        k->job->write_arg = k;
    }
    app_ckpt_cli c = {.dir = k->dir, .overwrite = k->cli->ckpt_overwrite};
    return app_ckpt_cli_enable(k->app, ctx, &c, k->identity) == TESS_OK ? 0 : -1;
}

static int open_file(app_tile_ckpt *k, const char *name, int flags, int *fd)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", k->dir, name);
    *fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
    if (*fd >= 0) return 0;
    app_error(k->app, "checkpoint in %s: cannot open %s: %s", k->dir, name, strerror(errno));
    return -1;
}

/* A fresh checkpoint: the identity (whole, then renamed into place), an
 * empty journal and no outputs. */
static int start_fresh(app_tile_ckpt *k)
{
    char path[4096], tmp[4112];
    snprintf(path, sizeof path, "%s/" APP_TILE_IDENTITY, k->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd;
    if (open_file(k, APP_TILE_IDENTITY ".tmp", O_TRUNC, &fd) != 0) return -1;
    uint8_t head[APP_TILE_JOURNAL_HEADER];
    memcpy(head, APP_TILE_JOURNAL_MAGIC, 8);
    memcpy(head + 8, &k->identity_hash, 8);
    int rc = write_all(fd, k->identity, strlen(k->identity), 0) || fsync(fd) || close(fd) ||
                     rename(tmp, path)
                 ? -1
                 : 0;
    if (rc == 0) rc = open_file(k, APP_TILE_DATA, O_TRUNC, &k->fd_data);
    if (rc == 0) rc = open_file(k, APP_TILE_JOURNAL, O_TRUNC, &k->fd_journal);
    if (rc == 0 && (write_all(k->fd_journal, head, sizeof head, 0) || fsync(k->fd_journal))) {
        app_error(k->app, "checkpoint in %s: cannot write %s: %s", k->dir, APP_TILE_JOURNAL,
                  strerror(errno));
        rc = -1;
    }
    return rc;
}

/* Go on with the restored checkpoint: the journal cut to its valid records
 * (a torn end would otherwise sit before the new ones), new outputs after
 * the old. */
static int go_on(app_tile_ckpt *k)
{
    struct stat st;
    if (open_file(k, APP_TILE_DATA, 0, &k->fd_data) != 0 ||
        open_file(k, APP_TILE_JOURNAL, 0, &k->fd_journal) != 0)
        return -1;
    uint64_t valid = APP_TILE_JOURNAL_HEADER + k->journal_records * sizeof(app_tile_record);
    if (fstat(k->fd_data, &st) != 0 || ftruncate(k->fd_journal, (off_t)valid) != 0) {
        app_error(k->app, "checkpoint in %s: cannot resume the journal: %s", k->dir,
                  strerror(errno));
        return -1;
    }
    k->data_off = (uint64_t)st.st_size;
    return 0;
}

int app_tile_ckpt_open(app_tile_ckpt *k)
{
    if (k->dir == NULL) return 0;
    k->last_flush = tess_now();
    if (k->afresh_note)
        fprintf(stderr, "%s: no checkpoint of this job in %s; starting afresh\n", k->app, k->dir);
    int rc = k->restoring ? go_on(k) : start_fresh(k);
    k->data_start = k->data_off;
    if (rc == 0 && (errno = app_tile_flusher_start(&k->flusher, k->fd_data, k->fd_journal)) != 0) {
        app_error(k->app, "checkpoint in %s: cannot start its writer: %s", k->dir, strerror(errno));
        rc = -1;
    }
    k->busy_s = tess_now() - k->last_flush;
    return rc;
}

int app_tile_ckpt_finish(app_tile_ckpt *k)
{
    if (k->dir == NULL || !k->flusher.started) return 0;
    double t0 = tess_now();
    int rc = app_tile_flusher_drain(&k->flusher, &k->pending, &k->npending, &k->cap_pending);
    app_tile_flusher_stop(&k->flusher);
    if (rc != 0) {
        app_error(k->app, "checkpoint in %s: cannot write %s: %s", k->dir, k->flusher.failed,
                  strerror(k->flusher.err));
        return -1;
    }
    k->busy_s += tess_now() - t0;
    if (k->cli->progress != APP_PROGRESS_OFF)
        fprintf(stderr, "%s: journaled %llu tiles (%.1f MB) in %s, %.3f s of rank 0's controller\n",
                k->app, (unsigned long long)k->tiles_written,
                (double)(k->data_off - k->data_start) / 1e6, k->dir, k->busy_s);
    return 0;
}

void app_tile_ckpt_free(app_tile_ckpt *k)
{
    if (k->dir == NULL) return; /* never prepared: nothing is open */
    if (k->flusher.started)     /* a failed or interrupted run: keep what it finished */
        app_tile_flusher_drain(&k->flusher, &k->pending, &k->npending, &k->cap_pending);
    app_tile_flusher_stop(&k->flusher);
    if (k->fd_data >= 0) close(k->fd_data);
    if (k->fd_journal >= 0) close(k->fd_journal);
    if (k->job != NULL && k->out != NULL) k->job->output = k->out; /* the app frees it */
    free(k->identity);
    free(k->done);
    free(k->pending);
    memset(k, 0, sizeof *k);
}
