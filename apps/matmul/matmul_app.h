/*
 * matmul_app.h — the state of `tessera run matmul`, shared by matmul.c (the
 * control function and the setup), matmul_kernels.c and matmul_options.c.
 * Private to apps/matmul.
 */
#ifndef TESS_APPS_MATMUL_APP_H
#define TESS_APPS_MATMUL_APP_H

#include <cblas.h>
#include <pthread.h>

#include "../common/common.h"
#include "matmul.h"

#define MM_APP "matmul"

typedef struct mm_opts {
    long n;
    long block; /* 0: mm_default_block */
    long seed;
    const char *input_a, *input_b;
    app_run_opts run;
    int check;
} mm_opts;

/* This rank's copies of B's partitions as row panels (block row k of B
 * as one B x nb*B row-major matrix, what a wide dgemm reads), made once
 * and shared by its kernel instances (B is read-only while they run). */
typedef struct mm_bcache {
    double **slot;          /* per partition: its block rows as row panels */
    unsigned char *ready;   /* per partition: slot filled */
    pthread_mutex_t *locks; /* per partition */
} mm_bcache;

typedef struct mm_app {
    mm_opts opt;
    mm_geom g;
    int partitions;   /* block rows are cut into this many ranges */
    long *row_bounds; /* partitions + 1 block-row boundaries */
    tess_table *a, *b, *c;
    mm_bcache bcache;
    double start;
    /* control function (rank 0) only: */
    double load_seconds, replicate_seconds, multiply_seconds, check_seconds;
    double check_max_error, check_tolerance_used;
    double checksum; /* the sum of C's elements, row by row */
    app_outfile out_c, out_metrics;
} mm_app;

/* Parse argv into *o: 0, 1 after --help, -1 after an error message. */
int mm_opts_parse(int argc, char **argv, mm_opts *o);

/* The library matmul_blas.c loads: the soname a link with -lopenblas records. */
#ifndef MM_OPENBLAS_SONAME
#define MM_OPENBLAS_SONAME "libopenblas.so.0"
#endif

/* Load OpenBLAS with one thread per call (matmul_blas.c): 0, or -1 after a
 * message on stderr.  Before tess_init: it sets the environment. */
int mm_blas_load(void);

/* C = A*B + beta*C, row-major, no transposes, through the loaded
 * library's cblas_dgemm. */
void mm_dgemm(int m, int n, int k, double beta, const double *a, int lda, const double *b, int ldb,
              double *c, int ldc);

/* The kernels (matmul_kernels.c). */
int mm_load_kernel(tess_task *task, const void *args, size_t args_len);
int mm_multiply_kernel(tess_task *task, const void *args, size_t args_len);
int mm_replicate_kernel(tess_task *task, const void *args, size_t args_len);
int mm_bcache_init(mm_bcache *bc, const mm_app *app);
void mm_bcache_free(mm_bcache *bc, int partitions);

/* A block of a table: a pointer into the partition when it is local (only
 * safe for the calling instance's own partition), or a copy in buf (B*B
 * doubles) fetched from its owner. */
const double *mm_block(const mm_app *app, tess_table *t, long key, double *buf);

#endif
