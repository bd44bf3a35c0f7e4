/*
 * store_read.c — finding and reading back a complete checkpoint epoch.  An
 * epoch counts only if its manifest decodes and every file it lists has the
 * recorded size and XXH64; the newest such epoch wins and every newer one
 * passed over is reported in one line naming the offending file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "ckpt/store_impl.h"
#include "tessera/tessera.h"

struct tess__ckpt_epoch {
    const tess__ckpt_store *s;
    char dir[TESS__CKPT_PATH_MAX];
    tess__ckpt_manifest m;
};

/* ---------------------------------------------------------------- verifying */

/* The file must be a regular file of the recorded size: a FIFO, a device
 * or a symlink to one (/dev/urandom) would otherwise be read forever.
 * O_NONBLOCK so that opening a FIFO does not wait for a writer. */
static int open_regular(const char *path, uint64_t want_size, int *fd_out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: %s (%s)", path,
                              errno == ENOENT ? "missing" : "cannot open", strerror(errno));
    struct stat sb;
    int rc = TESS_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        rc = tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: not a regular file", path);
    else if ((uint64_t)sb.st_size != want_size)
        rc = tess__ckpt_err(err, errlen, TESS_ERR_FORMAT,
                            "%s: %" PRIu64 " bytes, the manifest records %" PRIu64
                            " (truncated or overwritten)",
                            path, (uint64_t)sb.st_size, want_size);
    if (rc != TESS_OK) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return TESS_OK;
}

/* Size and XXH64 of a file, streamed so a big partition need not fit twice. */
static int hash_file(const char *path, uint64_t want_size, uint64_t *size_out, uint64_t *hash_out,
                     char *err, size_t errlen)
{
    int fd = -1;
    int orc = open_regular(path, want_size, &fd, err, errlen);
    if (orc != TESS_OK) return orc;
    XXH64_state_t *st = XXH64_createState();
    uint8_t *buf = malloc(1 << 20);
    int rc = TESS_OK;
    uint64_t size = 0;
    ssize_t n = 0;
    if (st == NULL || buf == NULL)
        rc = tess__ckpt_err(err, errlen, TESS_ERR_NOMEM, "%s: out of memory", path);
    else XXH64_reset(st, 0);
    while (rc == TESS_OK && (n = read(fd, buf, 1 << 20)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: read failed: %s", path,
                                strerror(errno));
            break;
        }
        XXH64_update(st, buf, (size_t)n);
        size += (uint64_t)n;
    }
    if (rc == TESS_OK) {
        *size_out = size;
        *hash_out = XXH64_digest(st);
    }
    close(fd);
    free(buf);
    XXH64_freeState(st);
    return rc;
}

static int check_sum(const char *path, const tess__ckpt_file *f, uint64_t size, uint64_t hash,
                     char *err, size_t errlen)
{
    if (size != f->size)
        return tess__ckpt_err(err, errlen, TESS_ERR_FORMAT,
                              "%s: %" PRIu64 " bytes, the manifest records %" PRIu64
                              " (truncated or overwritten)",
                              path, size, f->size);
    if (hash != f->xxh64)
        return tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: checksum mismatch (corrupt)",
                              path);
    return TESS_OK;
}

static int verify_files(const tess__ckpt_epoch *e, char *err, size_t errlen)
{
    char path[TESS__CKPT_PATH_MAX];
    for (uint32_t i = 0; i < e->m.nfiles; i++) {
        const tess__ckpt_file *f = &e->m.files[i];
        uint64_t size = 0, hash = 0;
        tess__ckpt_file_path(e->s, e->dir, f, path, sizeof path);
        int rc = hash_file(path, f->size, &size, &hash, err, errlen);
        if (rc == TESS_OK) rc = check_sum(path, f, size, hash, err, errlen);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static int open_epoch(const tess__ckpt_store *s, uint64_t epoch, int verify,
                      tess__ckpt_epoch **e_out, char *err, size_t errlen)
{
    tess__ckpt_epoch *e = calloc(1, sizeof *e);
    if (e == NULL) return tess__ckpt_err(err, errlen, TESS_ERR_NOMEM, "%s: out of memory", s->dir);
    e->s = s;
    tess__ckpt_epoch_path(s, epoch, "", e->dir, sizeof e->dir);
    int rc = tess__ckpt_load_manifest(s, epoch, &e->m, err, errlen);
    if (rc == TESS_OK && verify) rc = verify_files(e, err, errlen);
    if (rc != TESS_OK) {
        tess__ckpt_epoch_close(e);
        return rc;
    }
    *e_out = e;
    return TESS_OK;
}

int tess__ckpt_open_epoch(const tess__ckpt_store *s, uint64_t epoch, tess__ckpt_epoch **e_out,
                          char *err, size_t errlen)
{
    return open_epoch(s, epoch, 1, e_out, err, errlen);
}

int tess__ckpt_open_epoch_verified_elsewhere(const tess__ckpt_store *s, uint64_t epoch,
                                             tess__ckpt_epoch **e_out, char *err, size_t errlen)
{
    return open_epoch(s, epoch, 0, e_out, err, errlen);
}

void tess__ckpt_epoch_close(tess__ckpt_epoch *e)
{
    if (e == NULL) return;
    tess__ckpt_manifest_free(&e->m);
    free(e);
}

/* ---------------------------------------------------------------- latest */

static void report_line(tess__ckpt_report_fn report, void *arg, const char *line)
{
    if (report != NULL) report(arg, line);
}

/* Uncommitted epochs newer than `above` are ignored, but said so. */
static void report_pending(const tess__ckpt_store *s, uint64_t above, int any,
                           tess__ckpt_report_fn report, void *arg)
{
    uint64_t *v;
    size_t n;
    char line[TESS__CKPT_PATH_MAX + 64], path[TESS__CKPT_PATH_MAX];
    if (report == NULL || tess__ckpt_scan(s, ".tmp", &v, &n, NULL, 0) != TESS_OK) return;
    for (size_t i = 0; i < n; i++) {
        if (any && v[i] <= above) continue;
        tess__ckpt_epoch_path(s, v[i], ".tmp", path, sizeof path);
        snprintf(line, sizeof line, "%s: uncommitted epoch (no manifest), ignored", path);
        report(arg, line);
    }
    free(v);
}

/* An epoch that opened, refused by accept: the line says why. */
static int refused(const tess__ckpt_store *s, uint64_t epoch, tess__ckpt_accept_fn accept,
                   void *accept_arg, tess__ckpt_epoch *e, char *line, size_t len)
{
    char why[512] = "", path[TESS__CKPT_PATH_MAX];
    if (accept == NULL || accept(accept_arg, e, why, sizeof why) == 0) return 0;
    tess__ckpt_epoch_path(s, epoch, "", path, sizeof path);
    snprintf(line, len, "%.600s: %.300s", path, why[0] ? why : "refused");
    return 1;
}

/* Newest first; stops at the first epoch that opens and is accepted, or a
 * hard error. */
static int open_newest(tess__ckpt_store *s, uint64_t below, const uint64_t *v, size_t n,
                       tess__ckpt_report_fn report, void *arg, tess__ckpt_accept_fn accept,
                       void *accept_arg, tess__ckpt_epoch **e_out, size_t *skipped, char *err,
                       size_t errlen)
{
    char line[1024];
    for (size_t i = n; i-- > 0;) {
        if (v[i] >= below) continue; /* already tried and refused */
        int rc = tess__ckpt_open_epoch(s, v[i], e_out, line, sizeof line);
        if (rc == TESS_OK && !refused(s, v[i], accept, accept_arg, *e_out, line, sizeof line))
            return TESS_OK;
        if (rc == TESS_OK) { /* refused: passed over like a damaged one */
            tess__ckpt_epoch_close(*e_out);
            *e_out = NULL;
            report_line(report, arg, line);
            ++*skipped;
            continue;
        }
        if (rc == TESS_ERR_INVAL || rc == TESS_ERR_NOMEM)
            return tess__ckpt_err(err, errlen, rc, "%s", line);
        report_line(report, arg, line);
        ++*skipped;
    }
    return TESS_ERR_NOTFOUND;
}

int tess__ckpt_open_latest(tess__ckpt_store *s, uint64_t below, tess__ckpt_report_fn report,
                           void *report_arg, tess__ckpt_accept_fn accept, void *accept_arg,
                           tess__ckpt_epoch **e_out, char *err, size_t errlen)
{
    uint64_t *v;
    size_t n, skipped = 0;
    tess__ckpt_epoch *e = NULL;
    int rc = tess__ckpt_scan(s, "", &v, &n, err, errlen);
    if (rc != TESS_OK) return rc;
    rc = open_newest(s, below, v, n, report, report_arg, accept, accept_arg, &e, &skipped, err,
                     errlen);
    free(v);
    if (rc == TESS_ERR_INVAL || rc == TESS_ERR_NOMEM) return rc;
    report_pending(s, e ? e->m.epoch : 0, e != NULL, report, report_arg);
    if (rc == TESS_ERR_NOTFOUND)
        return tess__ckpt_err(err, errlen, rc, "%s: no complete checkpoint (%zu epoch%s skipped)",
                              s->dir, skipped, skipped == 1 ? "" : "s");
    tess__ckpt_remember_static(s, &e->m);
    *e_out = e;
    return TESS_OK;
}

/* ---------------------------------------------------------------- accessors */

uint64_t tess__ckpt_epoch_number(const tess__ckpt_epoch *e) { return e->m.epoch; }

const void *tess__ckpt_epoch_user_data(const tess__ckpt_epoch *e, size_t *len_out)
{
    *len_out = e->m.user_len;
    return e->m.user;
}

uint32_t tess__ckpt_epoch_table_count(const tess__ckpt_epoch *e) { return e->m.ntables; }

uint32_t tess__ckpt_epoch_table_id(const tess__ckpt_epoch *e, uint32_t i)
{
    return e->m.tables[i].table;
}

int tess__ckpt_epoch_table(const tess__ckpt_epoch *e, uint32_t table, uint32_t *nparts_out,
                           const int32_t **owners_out, int *is_static_out)
{
    const tess__ckpt_table_map *t = tess__ckpt_manifest_table(&e->m, table);
    if (t == NULL) return TESS_ERR_NOTFOUND;
    *nparts_out = t->nparts;
    *owners_out = t->owners;
    *is_static_out = t->is_static;
    return TESS_OK;
}

int tess__ckpt_epoch_has_partition(const tess__ckpt_epoch *e, uint32_t table, uint32_t part)
{
    return tess__ckpt_manifest_file(&e->m, TESS__CKPT_FILE_PARTITION, table, part) != NULL;
}

/* ---------------------------------------------------------------- data */

static int decompress(const char *path, const uint8_t *src, size_t len, uint64_t raw,
                      void **data_out, char *err, size_t errlen)
{
    if (ZSTD_getFrameContentSize(src, len) != raw || raw > SIZE_MAX)
        return tess__ckpt_err(err, errlen, TESS_ERR_FORMAT,
                              "%s: zstd frame does not hold the %" PRIu64 " bytes recorded", path,
                              raw);
    void *out = raw ? malloc((size_t)raw) : NULL;
    if (raw && out == NULL)
        return tess__ckpt_err(err, errlen, TESS_ERR_NOMEM, "%s: out of memory (%" PRIu64 " bytes)",
                              path, raw);
    size_t n = ZSTD_decompress(out, (size_t)raw, src, len);
    if (ZSTD_isError(n) || n != raw) {
        free(out);
        return tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: zstd: %s", path,
                              ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short frame");
    }
    *data_out = out;
    return TESS_OK;
}

static int read_entry(const tess__ckpt_epoch *e, const tess__ckpt_file *f, void **data_out,
                      size_t *len_out, char *err, size_t errlen)
{
    char path[TESS__CKPT_PATH_MAX];
    uint8_t *buf = NULL;
    size_t len = 0;
    void *data = NULL;
    tess__ckpt_file_path(e->s, e->dir, f, path, sizeof path);
    int rc = tess__ckpt_read_file(path, &buf, &len, err, errlen);
    if (rc == TESS_ERR_NOTFOUND)
        rc = tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: missing", path);
    if (rc == TESS_OK) rc = check_sum(path, f, len, XXH64(buf, len, 0), err, errlen);
    if (rc == TESS_OK) rc = decompress(path, buf, len, f->raw_size, &data, err, errlen);
    free(buf);
    if (rc != TESS_OK) return rc;
    *data_out = data;
    *len_out = (size_t)f->raw_size;
    return TESS_OK;
}

int tess__ckpt_read_partition(const tess__ckpt_epoch *e, uint32_t table, uint32_t part,
                              void **data_out, size_t *len_out, char *err, size_t errlen)
{
    const tess__ckpt_file *f =
        tess__ckpt_manifest_file(&e->m, TESS__CKPT_FILE_PARTITION, table, part);
    if (f == NULL)
        return tess__ckpt_err(err, errlen, TESS_ERR_NOTFOUND,
                              "%s/MANIFEST: no file for table %" PRIu32 " partition %" PRIu32,
                              e->dir, table, part);
    return read_entry(e, f, data_out, len_out, err, errlen);
}

int tess__ckpt_read_log(const tess__ckpt_epoch *e, uint32_t rank, void **data_out, size_t *len_out,
                        char *err, size_t errlen)
{
    const tess__ckpt_file *f = tess__ckpt_manifest_file(&e->m, TESS__CKPT_FILE_LOG, rank, 0);
    if (f == NULL)
        return tess__ckpt_err(err, errlen, TESS_ERR_NOTFOUND,
                              "%s/MANIFEST: no replay log of rank %" PRIu32, e->dir, rank);
    return read_entry(e, f, data_out, len_out, err, errlen);
}

int tess__ckpt_epoch_log_rank(const tess__ckpt_epoch *e, uint32_t i, uint32_t *rank_out)
{
    uint32_t seen = 0;
    for (uint32_t k = 0; k < e->m.nfiles; k++) {
        if (e->m.files[k].kind != TESS__CKPT_FILE_LOG) continue;
        if (seen++ == i) {
            *rank_out = e->m.files[k].a;
            return 1;
        }
    }
    return 0;
}
