/*
 * tile_journal.c — a tiles checkpoint's journal and outputs, read back and
 * checked (tile_journal.h).
 *
 * The journal is appended to, a batch of records at a time, after the
 * outputs they name were synced: a kill can leave a last record cut short
 * (or, written but torn inside, failing its checksum), never a record whose
 * output is missing.  So a short or failing LAST record is the torn end of
 * an append and is left out (the tiles it named are computed again); a
 * failing record before it, a bad header, or an output that fails its
 * checksum is damage, and the checkpoint is refused.
 *
 * Also here, as the other reader of DIR: tiles.identity's text against this
 * run's, naming the first line that differs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cli.h"
#include "tile_journal.h"

#define RECORD_MAGIC "TJR1"
#define RECORD_HASHED offsetof(app_tile_record, record_hash)

void app_tile_record_seal(app_tile_record *r)
{
    memcpy(r->magic, RECORD_MAGIC, 4);
    r->record_hash = app_hash_bytes(0, r, RECORD_HASHED);
}

static int record_sealed(const app_tile_record *r)
{
    return memcmp(r->magic, RECORD_MAGIC, 4) == 0 &&
           r->record_hash == app_hash_bytes(0, r, RECORD_HASHED);
}

uint64_t app_tile_area_cells(const tess_tile_job *job)
{
    uint64_t n = 1;
    for (int d = 0; d < job->ndims; d++) n *= (uint64_t)job->extent[d];
    return n;
}

/* Call fn for every run of a box's cells along the last dimension: the
 * run's first cell in the area's row-major order and its length. */
typedef void run_fn(uint64_t first, uint64_t len, void *arg);
static void box_runs(const tess_tile_job *job, const tess_tile_box *box, run_fn *fn, void *arg)
{
    int nd = job->ndims;
    int64_t idx[TESS_TILE_MAX_DIMS];
    for (int d = 0; d < nd; d++) idx[d] = box->lo[d];
    uint64_t len = (uint64_t)(box->hi[nd - 1] - box->lo[nd - 1]);
    for (;;) {
        uint64_t first = 0;
        for (int d = 0; d < nd; d++) first = first * (uint64_t)job->extent[d] + (uint64_t)idx[d];
        fn(first, len, arg);
        int d = nd - 2; /* next run: odometer over every dimension but the last */
        for (; d >= 0; d--) {
            if (++idx[d] < box->hi[d]) break;
            idx[d] = box->lo[d];
        }
        if (d < 0) return;
    }
}

typedef struct place {
    const uint8_t *in;
    uint8_t *whole;
    size_t cell_bytes;
} place;

static void place_run(uint64_t first, uint64_t len, void *arg)
{
    place *p = arg;
    memcpy(p->whole + first * p->cell_bytes, p->in, len * p->cell_bytes);
    p->in += len * p->cell_bytes;
}

void app_tile_box_place(const tess_tile_job *job, const tess_tile_box *box, const void *in,
                        uint8_t *whole)
{
    place p = {in, whole, job->out_bytes};
    box_runs(job, box, place_run, &p);
}

static void mark_run(uint64_t first, uint64_t len, void *arg)
{
    uint8_t *done = arg;
    for (uint64_t i = first; i < first + len; i++) done[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* ---- reading back ---- */

/* The whole of a small file (the journal): 0, 1 when it does not exist, -1. */
static int read_file(const char *path, uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 1 : -1;
    struct stat st;
    ssize_t got = -1;
    *buf = NULL;
    if (fstat(fd, &st) == 0 && (*buf = malloc((size_t)st.st_size + 1)) != NULL)
        got = pread(fd, *buf, (size_t)st.st_size, 0);
    close(fd);
    if (got != (ssize_t)st.st_size) return free(*buf), *buf = NULL, -1;
    *len = (size_t)got;
    return 0;
}

/* A record's box and bytes fit the job's area and the data file. */
static int record_fits(const app_tile_journal_read *j, const app_tile_record *r, uint64_t data_len)
{
    const tess_tile_job *job = j->job;
    if (r->ndims != (uint32_t)job->ndims) return 0;
    uint64_t cells = 1;
    for (int d = 0; d < job->ndims; d++) {
        if (r->lo[d] < 0 || r->lo[d] >= r->hi[d] || r->hi[d] > job->extent[d]) return 0;
        cells *= (uint64_t)(r->hi[d] - r->lo[d]);
    }
    return r->bytes == cells * job->out_bytes && r->offset <= data_len &&
           r->bytes <= data_len - r->offset;
}

static tess_tile_box record_box(const app_tile_record *r)
{
    tess_tile_box b = {.ndims = (int)r->ndims};
    memcpy(b.lo, r->lo, sizeof b.lo);
    memcpy(b.hi, r->hi, sizeof b.hi);
    return b;
}

/* One record's output: read, checked, marked done and placed. */
static int take_record(app_tile_journal_read *j, int fd, const app_tile_record *r, uint8_t *buf)
{
    if (pread(fd, buf, r->bytes, (off_t)r->offset) != (ssize_t)r->bytes) return -1;
    if (app_hash_bytes(0, buf, r->bytes) != r->data_hash) return -1;
    tess_tile_box box = record_box(r);
    box_runs(j->job, &box, mark_run, j->done);
    if (j->out != NULL) app_tile_box_place(j->job, &box, buf, j->out);
    j->records++;
    return 0;
}

/* Every record after the header: 0, or -1 with why. */
static int take_records(app_tile_journal_read *j, const uint8_t *p, size_t n, int fd,
                        uint64_t data_len, char *why, size_t whylen)
{
    uint8_t *buf = NULL;
    for (size_t i = 0; i < n; i++) {
        app_tile_record r;
        memcpy(&r, p + i * sizeof r, sizeof r);
        if (!record_sealed(&r) && i + 1 == n) break; /* the torn end of an append */
        if (!record_sealed(&r) || !record_fits(j, &r, data_len))
            return free(buf), snprintf(why, whylen, "journal record %zu is damaged", i + 1), -1;
        uint8_t *grown = realloc(buf, r.bytes ? r.bytes : 1);
        if (grown == NULL) return free(buf), snprintf(why, whylen, "out of memory"), -1;
        buf = grown;
        if (take_record(j, fd, &r, buf) != 0)
            return free(buf),
                   snprintf(why, whylen, "the output of journal record %zu fails its checksum",
                            i + 1),
                   -1;
    }
    free(buf);
    return 0;
}

static int check_header(const app_tile_journal_read *j, const uint8_t *p, size_t len)
{
    uint64_t h;
    if (len < APP_TILE_JOURNAL_HEADER || memcmp(p, APP_TILE_JOURNAL_MAGIC, 8) != 0) return -1;
    memcpy(&h, p + 8, sizeof h);
    return h == j->identity_hash ? 0 : -1;
}

int app_tile_journal_load(const char *dir, app_tile_journal_read *j, char *why, size_t whylen)
{
    char path[4096];
    uint8_t *p = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/" APP_TILE_JOURNAL, dir);
    int rc = read_file(path, &p, &len);
    if (rc != 0) return rc > 0 ? 1 : (snprintf(why, whylen, "cannot read %s", path), -1);
    if (check_header(j, p, len) != 0) {
        free(p);
        return snprintf(why, whylen, "%s has a damaged header", APP_TILE_JOURNAL), -1;
    }
    snprintf(path, sizeof path, "%s/" APP_TILE_DATA, dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    rc = fd >= 0 && fstat(fd, &st) == 0 ? 0 : -1;
    if (rc != 0) snprintf(why, whylen, "cannot read %s", path);
    /* whole records only: a short last one is the torn end of an append */
    size_t n = (len - APP_TILE_JOURNAL_HEADER) / sizeof(app_tile_record);
    if (rc == 0)
        rc = take_records(j, p + APP_TILE_JOURNAL_HEADER, n, fd, (uint64_t)st.st_size, why, whylen);
    if (fd >= 0) close(fd);
    free(p);
    return rc;
}

/* ---- the identity ---- */

/* The line of `text` whose first word is `key` (up to its newline), or NULL. */
static const char *find_line(const char *text, const char *key, size_t klen)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, klen) == 0 && (p[klen] == ' ' || p[klen] == '\n')) return p;
    return NULL;
}

static int line_len(const char *p) { return (int)strcspn(p, "\n"); }

/* What follows a line's key, or "(not given)" for no line. */
static void rest_of(const char *line, size_t klen, char *out, size_t cap)
{
    int len = line ? line_len(line) - (int)klen : 0;
    if (len <= 1) snprintf(out, cap, "%s", line ? "(set)" : "(not given)");
    else snprintf(out, cap, "%.*s", len - 1, line + klen + 1);
}

/* The first line of `a` that `b` lacks or has otherwise: 1 with
 * "KEY THEIRS there, OURS here" in why; 0 when there is none. */
static int first_difference(const char *a, const char *b, int a_is_theirs, char *why, size_t cap)
{
    for (const char *p = a; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        size_t klen = strcspn(p, " \n");
        const char *q = find_line(b, p, klen);
        if (q != NULL && line_len(q) == line_len(p) && strncmp(q, p, (size_t)line_len(p)) == 0)
            continue;
        char theirs[256], ours[256];
        rest_of(a_is_theirs ? p : q, klen, theirs, sizeof theirs);
        rest_of(a_is_theirs ? q : p, klen, ours, sizeof ours);
        snprintf(why, cap, "%.*s %s there, %s here", (int)klen, p, theirs, ours);
        return 1;
    }
    return 0;
}

/* Control characters of a damaged file as '?', so that why stays one
 * readable line (a carriage return or an escape would rewrite the terminal). */
static void printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

int app_tile_identity_compare(const char *theirs, const char *ours, char *why, size_t cap)
{
    if (strcmp(theirs, ours) == 0) return 0;
    if (!first_difference(theirs, ours, 1, why, cap) &&
        !first_difference(ours, theirs, 0, why, cap))
        snprintf(why, cap, "%s is damaged", APP_TILE_IDENTITY);
    printable(why);
    return -1;
}
