/*
 * store.c — the checkpoint store handle and the directory as a whole: open
 * and close, the epochs present, and retention of the newest K.  Writing an
 * epoch is store_write.c, reading one store_read.c.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/store_impl.h"
#include "tessera/tessera.h"

int tess__ckpt_store_open(const char *dir, uint64_t fingerprint, tess__ckpt_store **store_out,
                          char *err, size_t errlen)
{
    if (dir == NULL || dir[0] == '\0' || strlen(dir) > TESS__CKPT_DIR_MAX)
        return tess__ckpt_err(err, errlen, TESS_ERR_INVAL,
                              "checkpoint directory name empty or too long");
    int rc = tess__ckpt_mkdir(dir, err, errlen);
    if (rc != TESS_OK) return rc;
    tess__ckpt_store *s = calloc(1, sizeof *s);
    if (s == NULL || (s->dir = strdup(dir)) == NULL) {
        free(s);
        return tess__ckpt_err(err, errlen, TESS_ERR_NOMEM, "%s: out of memory", dir);
    }
    s->fingerprint = fingerprint;
    *store_out = s;
    return TESS_OK;
}

void tess__ckpt_store_close(tess__ckpt_store *s)
{
    if (s == NULL) return;
    free(s->statics);
    free(s->dir);
    free(s);
}

void tess__ckpt_store_set_fail_hook(tess__ckpt_store *s, tess__ckpt_fail_hook hook, void *arg)
{
    s->hook = hook;
    s->hook_arg = arg;
}

void tess__ckpt_store_set_pace_hook(tess__ckpt_store *s, tess__ckpt_pace_hook hook, void *arg)
{
    s->pace = hook;
    s->pace_arg = arg;
}

unsigned tess__ckpt_static_generation(const tess__ckpt_store *s)
{
    unsigned g = 0;
    for (uint32_t i = 0; i < s->nstatics; i++)
        if (s->statics[i].in_static > g) g = s->statics[i].in_static;
    return g;
}

int tess__ckpt_static_saved(const tess__ckpt_store *s, uint32_t table)
{
    for (uint32_t i = 0; i < s->nstatics; i++)
        if (s->statics[i].a == table) return 1;
    return 0;
}

void tess__ckpt_remember_static(tess__ckpt_store *s, const tess__ckpt_manifest *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nfiles; i++) n += m->files[i].in_static != 0;
    tess__ckpt_file *v = malloc(sizeof *v * (n ? n : 1));
    if (v == NULL) return;
    n = 0;
    for (uint32_t i = 0; i < m->nfiles; i++)
        if (m->files[i].in_static) v[n++] = m->files[i];
    free(s->statics);
    s->statics = v;
    s->nstatics = n;
}

/* ---------------------------------------------------------------- scanning */

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static int push_epoch(uint64_t **v, size_t *n, size_t *cap, uint64_t epoch)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        uint64_t *nv = realloc(*v, ncap * sizeof *nv);
        if (nv == NULL) return -1;
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = epoch;
    return 0;
}

int tess__ckpt_scan(const tess__ckpt_store *s, const char *suffix, uint64_t **epochs_out,
                    size_t *n_out, char *err, size_t errlen)
{
    DIR *d = opendir(s->dir);
    if (d == NULL)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot list: %s", s->dir,
                              strerror(errno));
    uint64_t *v = NULL, epoch;
    size_t n = 0, cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (!tess__ckpt_parse_epoch_name(ent->d_name, suffix, &epoch)) continue;
        if (push_epoch(&v, &n, &cap, epoch) != 0) {
            closedir(d);
            free(v);
            return tess__ckpt_err(err, errlen, TESS_ERR_NOMEM, "%s: out of memory", s->dir);
        }
    }
    closedir(d);
    if (n > 1) qsort(v, n, sizeof *v, u64_cmp);
    *epochs_out = v;
    *n_out = n;
    return TESS_OK;
}

int tess__ckpt_list(const tess__ckpt_store *s, uint64_t **epochs_out, size_t *n_out, char *err,
                    size_t errlen)
{
    return tess__ckpt_scan(s, "", epochs_out, n_out, err, errlen);
}

int tess__ckpt_load_manifest(const tess__ckpt_store *s, uint64_t epoch, tess__ckpt_manifest *m_out,
                             char *err, size_t errlen)
{
    char path[TESS__CKPT_PATH_MAX];
    tess__ckpt_epoch_path(s, epoch, "/MANIFEST", path, sizeof path);
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = tess__ckpt_read_file(path, &buf, &len, err, errlen);
    if (rc == TESS_ERR_NOTFOUND)
        return tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: missing", path);
    if (rc != TESS_OK) return rc;
    tess__ckpt_manifest m;
    rc = tess__ckpt_manifest_decode(path, buf, len, &m, err, errlen);
    free(buf);
    if (rc != TESS_OK) return rc;
    if (m.epoch != epoch) {
        rc = tess__ckpt_err(err, errlen, TESS_ERR_FORMAT, "%s: records epoch %" PRIu64, path,
                            m.epoch);
    } else if (m.fingerprint != s->fingerprint) {
        rc = tess__ckpt_err(err, errlen, TESS_ERR_INVAL,
                            "%s: checkpoint written by a different job (fingerprint %016" PRIx64
                            ", this job %016" PRIx64 ")",
                            path, m.fingerprint, s->fingerprint);
    }
    if (rc != TESS_OK) {
        tess__ckpt_manifest_free(&m);
        return rc;
    }
    *m_out = m;
    return TESS_OK;
}

/* ---------------------------------------------------------------- retention */

/* Rename first so a half-deleted epoch never looks committed. */
static int delete_epoch_dir(const tess__ckpt_store *s, uint64_t epoch, const char *suffix,
                            char *err, size_t errlen)
{
    char path[TESS__CKPT_PATH_MAX], doomed[TESS__CKPT_PATH_MAX];
    tess__ckpt_epoch_path(s, epoch, suffix, path, sizeof path);
    tess__ckpt_epoch_path(s, epoch, ".del", doomed, sizeof doomed);
    if (strcmp(suffix, ".del") != 0) {
        tess__ckpt_remove_dir(doomed);
        if (rename(path, doomed) != 0)
            return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot remove: %s", path,
                                  strerror(errno));
    }
    if (tess__ckpt_remove_dir(doomed) != 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot remove: %s", doomed,
                              strerror(errno));
    return TESS_OK;
}

/* The oldest of the `keep` newest epochs with a valid manifest of this job;
 * 0 with *found 0 when there are fewer. */
static int oldest_kept(const tess__ckpt_store *s, unsigned keep, uint64_t *oldest_out, int *found,
                       char *err, size_t errlen)
{
    uint64_t *v;
    size_t n;
    int rc = tess__ckpt_scan(s, "", &v, &n, err, errlen);
    if (rc != TESS_OK) return rc;
    unsigned valid = 0;
    *found = 0;
    for (size_t i = n; i-- > 0 && valid < keep;) {
        tess__ckpt_manifest m;
        if (tess__ckpt_load_manifest(s, v[i], &m, NULL, 0) != TESS_OK) continue;
        tess__ckpt_manifest_free(&m);
        if (++valid == keep) {
            *oldest_out = v[i];
            *found = 1;
        }
    }
    free(v);
    return TESS_OK;
}

static int delete_older(const tess__ckpt_store *s, const char *suffix, uint64_t oldest, char *err,
                        size_t errlen)
{
    uint64_t *v;
    size_t n;
    int rc = tess__ckpt_scan(s, suffix, &v, &n, err, errlen);
    uint64_t fp;
    for (size_t i = 0; rc == TESS_OK && i < n && v[i] < oldest; i++)
        if (!tess__ckpt_epoch_fingerprint(s, v[i], suffix, &fp) || fp == s->fingerprint)
            rc = delete_epoch_dir(s, v[i], suffix, err, errlen);
    free(v);
    return rc;
}

int tess__ckpt_retain(const tess__ckpt_store *s, unsigned keep, char *err, size_t errlen)
{
    if (keep == 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_INVAL, "%s: retention must keep >= 1 epoch",
                              s->dir);
    uint64_t oldest = 0;
    int found;
    int rc = oldest_kept(s, keep, &oldest, &found, err, errlen);
    if (rc != TESS_OK || !found) return rc;
    static const char *const suffixes[] = {"", ".tmp", ".old", ".del"};
    for (size_t i = 0; rc == TESS_OK && i < sizeof suffixes / sizeof *suffixes; i++)
        rc = delete_older(s, suffixes[i], oldest, err, errlen);
    return rc;
}
