/*
 * matmul.h — the pieces of `tessera run matmul` that need no runtime: the
 * block geometry, matrix files and the generator.  Private to apps/matmul
 * and its tests.
 *
 * An N x N matrix is cut into nb x nb blocks of B x B (nb = ceil(N / B));
 * blocks on the last row or column of blocks are padded with zeros to B x B
 * (zeros change no product), so every block is one fixed-size table value,
 * stored row-major.  Block (bi, bj) is key bi * nb + bj.
 */
#ifndef TESS_APPS_MATMUL_H
#define TESS_APPS_MATMUL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct mm_geom {
    long n;     /* matrix order */
    long block; /* B */
    long nb;    /* blocks per side */
} mm_geom;

/* The default block: the smallest padding with blocks of at most 512. */
long mm_default_block(long n);

/* nb from n and block. */
void mm_geom_init(mm_geom *g, long n, long block);

/* Rows (or columns) of block index b that lie inside the matrix. */
long mm_block_extent(const mm_geom *g, long b);

/* Element (i, j) of the generated matrix `which` (0: A, 1: B): uniform in
 * [-1, 1), a pure function of (seed, which, i, j). */
double mm_generated(uint64_t seed, int which, long n, long i, long j);

/* A matrix file must hold exactly n*n little-endian float64 values: 0, or -1
 * with "FILE: ..." in err. */
int mm_check_file(const char *path, long n, char *err, size_t errlen);

/* Rows [r0, r1) of a matrix (file or generated) into buf (row-major, n
 * columns).  Non-finite values are refused.  0, or -1 with the reason in
 * err ("FILE: element (i, j) is not finite"). */
int mm_read_rows(const char *path, uint64_t seed, int which, long n, long r0, long r1, double *buf,
                 char *err, size_t errlen);

#endif
