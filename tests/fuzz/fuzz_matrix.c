/*
 * fuzz_matrix.c — libFuzzer target for the matrix reader of `tessera run
 * matmul` (apps/matmul/matmul_io.c): any bytes in a file are refused with
 * a one-line message (wrong size, a non-finite element) or read as finite
 * values, never a crash.  N is taken from the size, so both paths run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "matmul.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz_matrix_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    int ok = write(fd, data, size) == (ssize_t)size;
    close(fd);
    long n = 1;
    while ((n + 1) * (n + 1) * 8 <= (long)size && n < 64) n++;
    char err[256] = "";
    double *m = malloc((size_t)n * (size_t)n * sizeof *m);
    if (ok && m && mm_check_file(path, n, err, sizeof err) == 0) {
        if (mm_read_rows(path, 1, 0, n, 0, n, m, err, sizeof err) == 0) {
            for (long i = 0; i < n * n; i++)
                if (!isfinite(m[i])) __builtin_trap();
        } else if (err[0] == '\0' || strchr(err, '\n')) __builtin_trap();
    } else if (ok && m && (err[0] == '\0' || strchr(err, '\n'))) __builtin_trap();
    free(m);
    unlink(path);
    return 0;
}
