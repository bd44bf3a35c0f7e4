/*
 * capture.h — what the unit tests of one-line error messages share: run a
 * function with stderr redirected to a temporary file and get back what it
 * printed.  Header-only: each test is one source file.
 */
#ifndef TESS_TESTS_CAPTURE_H
#define TESS_TESTS_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* fn's return value in the last capture_stderr. */
static int captured_rc;

/* Run fn with stderr captured; returns what it printed (a static buffer,
 * valid until the next call). */
static inline const char *capture_stderr(int (*fn)(void))
{
    static char text[8192];
    char path[] = "/tmp/tess_unit_stderr_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    captured_rc = fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return text;
}

#endif
