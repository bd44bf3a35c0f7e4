/*
 * matmul_io.c — block geometry, matrix files (raw little-endian float64,
 * row-major, what numpy's tofile writes) and the generator.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "matmul.h"
#include "tessera/rng.h"

long mm_default_block(long n)
{
    long nb = (n + 511) / 512;
    return (n + nb - 1) / nb;
}

void mm_geom_init(mm_geom *g, long n, long block)
{
    g->n = n;
    g->block = block;
    g->nb = (n + block - 1) / block;
}

long mm_block_extent(const mm_geom *g, long b)
{
    long left = g->n - b * g->block;
    return left < g->block ? left : g->block;
}

double mm_generated(uint64_t seed, int which, long n, long i, long j)
{
    return 2.0 * tess_rng_unit(seed, (uint64_t)which, (uint64_t)i * (uint64_t)n + (uint64_t)j) -
           1.0;
}

int mm_check_file(const char *path, long n, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    long long want = (long long)n * n * 8;
    if ((long long)st.st_size != want) {
        snprintf(err, errlen,
                 "%s: %lld bytes, but an N x N matrix of float64 with N = %ld is %lld bytes", path,
                 (long long)st.st_size, n, want);
        return -1;
    }
    return 0;
}

static int read_file_rows(const char *path, long n, long r0, long r1, double *buf, char *err,
                          size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t count = (size_t)(r1 - r0) * (size_t)n;
    int rc =
        fseeko(fp, (off_t)r0 * n * 8, SEEK_SET) == 0 && fread(buf, 8, count, fp) == count ? 0 : -1;
    if (rc != 0) snprintf(err, errlen, "%s: cannot read rows %ld..%ld", path, r0, r1 - 1);
    fclose(fp);
    return rc;
}

int mm_read_rows(const char *path, uint64_t seed, int which, long n, long r0, long r1, double *buf,
                 char *err, size_t errlen)
{
    if (path && read_file_rows(path, n, r0, r1, buf, err, errlen) != 0) return -1;
    for (long i = r0; i < r1; i++)
        for (long j = 0; j < n; j++) {
            double *v = &buf[(size_t)(i - r0) * (size_t)n + (size_t)j];
            if (!path) *v = mm_generated(seed, which, n, i, j);
            else if (!isfinite(*v)) {
                snprintf(err, errlen, "%s: element (%ld, %ld) is not finite", path, i, j);
                return -1;
            }
        }
    return 0;
}
