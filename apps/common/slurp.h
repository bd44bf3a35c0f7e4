/*
 * slurp.h — whole-file reads for the applications' file readers.  Depends
 * on nothing else of the applications, so fuzz targets can compile it in.
 */
#ifndef TESS_APPS_SLURP_H
#define TESS_APPS_SLURP_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Format a one-line reason into err; returns -1. */
int app_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Read the regular file `path` (at most `max` bytes of it, 0: all) into a
 * malloc'd *buf of *len bytes; *file_size is the whole file's.  0, or -1
 * with "PATH: reason" in err (not a regular file, unreadable, short). */
int app_slurp(const char *path, size_t max, uint8_t **buf, size_t *len, size_t *file_size,
              char *err, size_t errlen);

/* Open the regular file `path` for reading as a stream; NULL with
 * "PATH: reason" in err when it cannot be opened or is not a regular file
 * (a FIFO, /dev/zero or a directory would block or never end). */
FILE *app_fopen_regular(const char *path, char *err, size_t errlen);

/* A reader of a long text file calls this every few thousand lines: true
 * once SIGINT or SIGTERM arrived (the runtime's handlers are installed), so
 * loading stops instead of ignoring the signal until it ends. */
int app_load_interrupted(unsigned long lineno);

#endif
