/*
 * store_io.c — the checkpoint store's file operations and path names.  Each
 * write, fsync and rename first asks the store's test hook, so tests can make
 * any step fail as a full or broken disk would.  Files are only ever created
 * new (O_EXCL|O_NOFOLLOW) and a file replaced goes through a temporary of a
 * random name: the directory may be shared, and a symbolic link planted at a
 * name we would use must never be written through or removed through.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt/store_impl.h"
#include "tessera/tessera.h"

int tess__ckpt_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

void tess__ckpt_epoch_path(const tess__ckpt_store *s, uint64_t epoch, const char *suffix, char *buf,
                           size_t buflen)
{
    snprintf(buf, buflen, "%s/epoch-%08" PRIu64 "%s", s->dir, epoch, suffix);
}

void tess__ckpt_static_dir(const tess__ckpt_store *s, unsigned generation, char *buf, size_t buflen)
{
    if (generation <= 1) snprintf(buf, buflen, "%s/static", s->dir);
    else snprintf(buf, buflen, "%s/static-%u", s->dir, generation);
}

void tess__ckpt_file_path(const tess__ckpt_store *s, const char *epoch_dir,
                          const tess__ckpt_file *f, char *buf, size_t buflen)
{
    char name[64];
    tess__ckpt_file_name(f, name, sizeof name);
    if (f->in_static) {
        char dir[TESS__CKPT_PATH_MAX];
        tess__ckpt_static_dir(s, f->in_static, dir, sizeof dir);
        snprintf(buf, buflen, "%s/%s", dir, name);
    } else snprintf(buf, buflen, "%s/%s", epoch_dir, name);
}

int tess__ckpt_parse_epoch_name(const char *name, const char *suffix, uint64_t *epoch_out)
{
    if (strncmp(name, "epoch-", 6) != 0) return 0;
    const char *p = name + 6;
    uint64_t v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (v > (UINT64_MAX - 9) / 10) return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (digits == 0 || strcmp(p, suffix) != 0) return 0;
    *epoch_out = v;
    return 1;
}

static int hook_fails(const tess__ckpt_store *s, const char *path)
{
    if (s->hook != NULL && s->hook(s->hook_arg, path) != 0) {
        errno = EIO;
        return 1;
    }
    return 0;
}

/* All of p[0, len) through write() (writing) or read(), again where a
 * signal cut a call short: 0, or -1 on an error or an early end of file. */
static int transfer_all(int fd, uint8_t *p, size_t len, int writing)
{
    while (len > 0) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* write() only reads p: the cast is safe. */
static int write_all(int fd, const uint8_t *p, size_t len)
{
    return transfer_all(fd, (uint8_t *)p, len, 1);
}

/* Write, fsync and close fd, the file at `path`; closes fd in every case. */
static int write_fd(const tess__ckpt_store *s, int fd, const char *path, const void *data,
                    size_t len, char *err, size_t errlen)
{
    if (hook_fails(s, path) || write_all(fd, data, len) != 0) {
        int e = errno ? errno : EIO;
        close(fd);
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    if (hook_fails(s, path) || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: fsync failed: %s", path, strerror(e));
    }
    if (close(fd) != 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: close failed: %s", path,
                              strerror(errno));
    return TESS_OK;
}

/* O_EXCL with O_CREAT also refuses a symbolic link at path, dangling or not:
 * nothing planted in a shared directory is ever written through. */
#define CREATE_NEW (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)

int tess__ckpt_write_file(const tess__ckpt_store *s, const char *path, const void *data, size_t len,
                          char *err, size_t errlen)
{
    int fd = open(path, CREATE_NEW, 0644);
    if (fd < 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot create: %s", path,
                              strerror(errno));
    return write_fd(s, fd, path, data, len, err, errlen);
}

/* Unguessable, so a name cannot even be taken in advance to make us fail. */
static void random_suffix(char out[7])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    static _Atomic unsigned long counter;
    uint8_t b[6];
    if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = tess_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ ++counter);
        memcpy(b, &x, sizeof b);
    }
    for (int i = 0; i < 6; i++) out[i] = alphabet[b[i] % (sizeof alphabet - 1)];
    out[6] = '\0';
}

int tess__ckpt_write_temp(const tess__ckpt_store *s, const char *path, const void *data, size_t len,
                          char *tmp, size_t tmpcap, char *err, size_t errlen)
{
    char suffix[7];
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        random_suffix(suffix);
        snprintf(tmp, tmpcap, "%s" TESS__CKPT_TMP_MARK "%s", path, suffix);
        fd = open(tmp, CREATE_NEW, 0644);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot create: %s", tmp,
                              strerror(errno));
    int rc = write_fd(s, fd, tmp, data, len, err, errlen);
    if (rc != TESS_OK) unlink(tmp);
    return rc;
}

int tess__ckpt_write_replace(const tess__ckpt_store *s, const char *path, const void *data,
                             size_t len, char *err, size_t errlen)
{
    char tmp[TESS__CKPT_PATH_MAX + 16];
    int rc = tess__ckpt_write_temp(s, path, data, len, tmp, sizeof tmp, err, errlen);
    if (rc != TESS_OK) return rc;
    rc = tess__ckpt_rename(s, tmp, path, err, errlen);
    if (rc != TESS_OK) unlink(tmp);
    return rc;
}

int tess__ckpt_is_tmp_name(const char *name)
{
    const char *mark = strstr(name, TESS__CKPT_TMP_MARK);
    if (mark == NULL || mark == name) return 0;
    const char *suffix = mark + strlen(TESS__CKPT_TMP_MARK);
    if (strlen(suffix) != 6) return 0;
    for (const char *c = suffix; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9'))) return 0;
    return 1;
}

int tess__ckpt_fsync_dir(const tess__ckpt_store *s, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot open directory: %s", path,
                              strerror(errno));
    int failed = hook_fails(s, path) || fsync(fd) != 0;
    int e = errno;
    close(fd);
    if (failed)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: fsync failed: %s", path, strerror(e));
    return TESS_OK;
}

int tess__ckpt_rename(const tess__ckpt_store *s, const char *from, const char *to, char *err,
                      size_t errlen)
{
    if (hook_fails(s, to) || rename(from, to) != 0)
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot rename to %s: %s", from, to,
                              strerror(errno));
    return TESS_OK;
}

int tess__ckpt_mkdir(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir(path, 0755) == 0) return TESS_OK;
    if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return TESS_OK;
    return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: cannot create directory: %s", path,
                          errno == EEXIST ? "exists and is not a directory" : strerror(errno));
}

static int read_all(int fd, uint8_t *p, size_t len) { return transfer_all(fd, p, len, 0); }

int tess__ckpt_read_file(const char *path, uint8_t **buf_out, size_t *len_out, char *err,
                         size_t errlen)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block the open */
    if (fd < 0)
        return tess__ckpt_err(err, errlen, errno == ENOENT ? TESS_ERR_NOTFOUND : TESS_ERR_IO,
                              "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    uint8_t *buf = len ? malloc(len) : NULL;
    if (len && buf == NULL) {
        close(fd);
        return tess__ckpt_err(err, errlen, TESS_ERR_NOMEM, "%s: out of memory (%zu bytes)", path,
                              len);
    }
    if (read_all(fd, buf, len) != 0) {
        free(buf);
        close(fd);
        return tess__ckpt_err(err, errlen, TESS_ERR_IO, "%s: read failed", path);
    }
    close(fd);
    *buf_out = buf;
    *len_out = len;
    return TESS_OK;
}

/* A link, or anything else that is not a directory, is unlinked itself:
 * nothing is ever removed through a symbolic link. */
int tess__ckpt_remove_dir(const char *path)
{
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT) return 0;
        return errno == ELOOP || errno == ENOTDIR ? unlink(path) : -1;
    }
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return -1;
    }
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL)
        if (strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0)
            unlinkat(dfd, ent->d_name, 0);
    closedir(d);
    return rmdir(path);
}
