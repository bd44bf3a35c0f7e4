/*
 * slurp.c — read a regular file into memory, for the readers of the
 * applications' own formats (sar's TSAR scenes, texture's PGM/PPM images).
 * Opened without blocking and checked to be a regular file first, so a FIFO
 * or a device is refused at once instead of read forever.  Also the
 * stream opener and the interrupt check of the line-oriented readers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slurp.h"
#include "tessera/tessera.h"

int app_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int app_slurp(const char *path, size_t max, uint8_t **buf, size_t *len, size_t *file_size,
              char *err, size_t errlen)
{
    *buf = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd < 0) return app_fail(err, errlen, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return app_fail(err, errlen, "%s: not a regular file", path);
    }
    *file_size = (size_t)st.st_size;
    *len = max && *file_size > max ? max : *file_size;
    uint8_t *b = malloc(*len ? *len : 1);
    size_t got = 0;
    while (b && got < *len) {
        ssize_t r = read(fd, b + got, *len - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    int saved = errno;
    close(fd);
    if (b == NULL) return app_fail(err, errlen, "%s: out of memory (%zu bytes)", path, *len);
    if (got != *len) {
        free(b);
        return app_fail(err, errlen, "%s: %s", path, got ? "shrank while read" : strerror(saved));
    }
    *buf = b;
    return 0;
}

FILE *app_fopen_regular(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        app_fail(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        app_fail(err, errlen, "%s: not a regular file", path);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *fp = fdopen(fd, "r");
    if (fp == NULL) {
        app_fail(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
    }
    return fp;
}

int app_load_interrupted(unsigned long lineno)
{
    return (lineno & 4095) == 0 && tess_interrupted(NULL);
}
