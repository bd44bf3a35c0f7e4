/*
 * store_owner.c — a checkpoint directory belongs to one job.  DIR/OWNER
 * names the job (its fingerprint: table shapes and the application's job
 * string, never rank or partition counts, so a restore onto other ranks is
 * the same job).  Rank 0 claims the directory before the control function
 * runs: a directory that is free, or already this job's, is claimed; one of
 * another job is left untouched and refused, unless the caller asked to
 * overwrite it, which deletes that job's checkpoints first.  A directory
 * written before OWNER existed is judged by its epochs' manifests.
 *
 * The claim also sweeps the temporaries that killed writers left in the
 * static directories (only regular files of ours, named as our temporaries):
 * no writer of this job is running yet, and another job's was refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/store_impl.h"
#include "tessera/tessera.h"

#define OWNER_NAME "OWNER"
#define OWNER_FORMAT "tessera checkpoints of job %016" PRIx64 "\n"

/* Up to cap-1 bytes of a regular file (never through a link) into buf;
 * the count, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ssize_t n = -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = read(fd, buf, cap - 1);
    if (fd >= 0) close(fd);
    if (n >= 0) buf[n] = '\0';
    return n;
}

/* 1 with *fp_out when DIR/OWNER names a job, 0 when there is none, -1 when
 * it holds anything else (damaged: judged like a directory without one). */
static int read_owner(const tess__ckpt_store *s, uint64_t *fp_out)
{
    char path[TESS__CKPT_PATH_MAX], text[80], again[80];
    snprintf(path, sizeof path, "%s/" OWNER_NAME, s->dir);
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) return 0;
    uint64_t fp;
    if (read_small(path, text, sizeof text) <= 0 || sscanf(text, OWNER_FORMAT, &fp) != 1) return -1;
    snprintf(again, sizeof again, OWNER_FORMAT, fp); /* nothing after, nothing different */
    if (strcmp(text, again) != 0) return -1;
    *fp_out = fp;
    return 1;
}

int tess__ckpt_epoch_fingerprint(const tess__ckpt_store *s, uint64_t epoch, const char *suffix,
                                 uint64_t *fp_out)
{
    char dir[TESS__CKPT_PATH_MAX], path[TESS__CKPT_PATH_MAX + 16];
    uint8_t head[25];
    tess__ckpt_epoch_path(s, epoch, suffix, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    /* "TESSCKPT" u32 version u32 flags u64 fingerprint (docs/checkpoint-format.md) */
    if (read_small(path, (char *)head, sizeof head) != 24 || memcmp(head, "TESSCKPT", 8) != 0)
        return 0;
    uint64_t fp = 0;
    for (int i = 7; i >= 0; i--) fp = fp << 8 | head[16 + i];
    *fp_out = fp;
    return 1;
}

/* The fingerprint of another job that a committed epoch records; 1 if any. */
static int foreign_epoch(const tess__ckpt_store *s, uint64_t *fp_out, char *err, size_t errlen)
{
    uint64_t *v, fp;
    size_t n;
    if (tess__ckpt_scan(s, "", &v, &n, err, errlen) != TESS_OK) return -1;
    int found = 0;
    for (size_t i = n; i-- > 0 && !found;)
        if (tess__ckpt_epoch_fingerprint(s, v[i], "", &fp) && fp != s->fingerprint) {
            *fp_out = fp;
            found = 1;
        }
    free(v);
    return found;
}

/* An entry of the store's layout: epoch-N[.tmp|.old|.del], static, static-G. */
static int layout_name(const char *name)
{
    static const char *const suffixes[] = {"", ".tmp", ".old", ".del"};
    uint64_t epoch;
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (tess__ckpt_parse_epoch_name(name, suffixes[i], &epoch)) return 1;
    if (strcmp(name, "static") == 0) return 1;
    if (strncmp(name, "static-", 7) != 0 || name[7] == '\0') return 0;
    return strspn(name + 7, "0123456789") == strlen(name + 7);
}

/* Delete what another job left: every entry of the layout, nothing else. */
static int wipe(const tess__ckpt_store *s, char *err, size_t errlen)
{
    DIR *d = opendir(s->dir);
    if (d == NULL)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot list: %s", s->dir,
                              strerror(errno));
    char path[TESS__CKPT_PATH_MAX];
    int rc = TESS_OK;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!layout_name(e->d_name)) continue;
        snprintf(path, sizeof path, "%s/%.200s", s->dir, e->d_name);
        if (tess__ckpt_remove_dir(path) != 0 && rc == TESS_OK)
            rc = tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot remove: %s", path,
                                strerror(errno));
    }
    closedir(d);
    return rc;
}

/* Remove our stale temporaries from one static directory. */
static void sweep_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (d == NULL) {
        if (dfd >= 0) close(dfd);
        return;
    }
    struct stat st;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (tess__ckpt_is_tmp_name(e->d_name) &&
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid())
            unlinkat(dfd, e->d_name, 0);
    closedir(d);
}

static void sweep_static(const tess__ckpt_store *s)
{
    DIR *d = opendir(s->dir);
    char path[TESS__CKPT_PATH_MAX];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, "static", 6) != 0 || !layout_name(e->d_name)) continue;
        snprintf(path, sizeof path, "%s/%.200s", s->dir, e->d_name);
        sweep_dir(path);
    }
    if (d) closedir(d);
}

/* Write DIR/OWNER naming this job.  exclusive: only where there is none;
 * *lost_race is then set when another process made one first. */
static int write_owner(const tess__ckpt_store *s, int exclusive, int *lost_race, char *err,
                       size_t errlen)
{
    char path[TESS__CKPT_PATH_MAX], tmp[TESS__CKPT_PATH_MAX + 16], text[80];
    snprintf(path, sizeof path, "%s/" OWNER_NAME, s->dir);
    int len = snprintf(text, sizeof text, OWNER_FORMAT, s->fingerprint);
    *lost_race = 0;
    if (!exclusive) return tess__ckpt_write_replace(s, path, text, (size_t)len, err, errlen);
    /* a complete file under its own temporary name, then link(2): it never
     * replaces an OWNER that another job has just written */
    int rc = tess__ckpt_write_temp(s, path, text, (size_t)len, tmp, sizeof tmp, err, errlen);
    if (rc != TESS_OK) return rc;
    if (link(tmp, path) != 0) {
        if (errno == EEXIST) *lost_race = 1;
        else
            rc = tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot create: %s", path,
                                strerror(errno));
    }
    unlink(tmp);
    return rc;
}

static int refuse(const tess__ckpt_store *s, uint64_t other, char *err, size_t errlen)
{
    return tess__ckpt_err(err, errlen, TESS_ERR_INVAL,
                          "checkpoint directory %s belongs to another job (fingerprint %016" PRIx64
                          ", this job %016" PRIx64
                          "), left untouched; use another directory, or overwrite it "
                          "(--checkpoint-overwrite, tess_checkpoint_set_overwrite)",
                          s->dir, other, s->fingerprint);
}

int tess__ckpt_claim(tess__ckpt_store *s, int overwrite, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        uint64_t other = 0;
        int owner = read_owner(s, &other);
        int foreign = owner == 1 ? other != s->fingerprint : foreign_epoch(s, &other, err, errlen);
        if (foreign < 0) return TESS_ERR_IO;
        if (foreign && !overwrite) return refuse(s, other, err, errlen);
        int rc = foreign ? wipe(s, err, errlen) : TESS_OK;
        if (rc != TESS_OK) return rc;
        sweep_static(s);
        if (owner == 1 && !foreign) return TESS_OK;
        int lost_race;
        rc = write_owner(s, owner == 0, &lost_race, err, errlen);
        if (rc != TESS_OK || !lost_race) return rc;
        /* another job claimed it between our look and our link: look again */
    }
    return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot claim the directory", s->dir);
}
