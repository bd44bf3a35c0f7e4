/*
 * scalapack_mm.c — the peers of `tessera bench matmul`: C = A * B with the
 * same generated A and B as `tessera run matmul --seed S`.
 *
 *   mpirun -np P tessera-scalapack-mm pdgemm N NB [SEED]
 *       ScaLAPACK's pdgemm on a pr x pc process grid (as square as P
 *       allows), NB x NB block-cyclic distribution, one BLAS thread per
 *       process (OPENBLAS_NUM_THREADS=1 is the caller's job).
 *   tessera-scalapack-mm dgemm N THREADS [SEED]
 *       one OpenBLAS dgemm of the whole matrices on THREADS threads: the
 *       limit a distributed code can approach on this machine.
 *
 * Prints one line: "seconds S checksum X", S the wall time of the product
 * alone (the slowest rank's, between barriers; inputs already in memory)
 * and X the sum of C's elements, so the bench can tell that the peer
 * computed the same product.
 */
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/rng.h"

/* ScaLAPACK and BLACS entry points (Fortran and C BLACS interfaces). */
void Cblacs_pinfo(int *me, int *procs);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int cols);
void Cblacs_gridinfo(int context, int *rows, int *cols, int *row, int *col);
void Cblacs_gridexit(int context);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);

/* The generator of apps/matmul (mm_generated), from the public rng.h. */
static double element(unsigned long long seed, int which, long n, long i, long j)
{
    return 2.0 * tess_rng_unit(seed, (uint64_t)which, (uint64_t)i * (uint64_t)n + (uint64_t)j) -
           1.0;
}

static double now(void) { return MPI_Wtime(); }

static int run_dgemm(long n, int threads, unsigned long long seed)
{
    size_t n2 = (size_t)n * (size_t)n;
    double *a = malloc(n2 * sizeof *a), *b = malloc(n2 * sizeof *b), *c = calloc(n2, sizeof *c);
    if (!a || !b || !c) return 1;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            a[i * n + j] = element(seed, 0, n, i, j);
            b[i * n + j] = element(seed, 1, n, i, j);
        }
    openblas_set_num_threads(threads);
    double t0 = now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n,
                b, (int)n, 0.0, c, (int)n);
    double s = now() - t0, sum = 0;
    for (size_t i = 0; i < n2; i++) sum += c[i];
    printf("seconds %.6f checksum %.17g\n", s, sum);
    free(a), free(b), free(c);
    return 0;
}

/* The local part of a block-cyclic matrix (column-major, as ScaLAPACK
 * stores it): global (i, j) of local (li, lj). */
static void fill_local(double *m, int which, long n, int nb, int rows, int cols, int myrow,
                       int mycol, int nprow, int npcol, unsigned long long seed)
{
    for (int lj = 0; lj < cols; lj++) {
        long j = ((long)(lj / nb) * npcol + mycol) * nb + lj % nb;
        for (int li = 0; li < rows; li++) {
            long i = ((long)(li / nb) * nprow + myrow) * nb + li % nb;
            m[(size_t)lj * (size_t)rows + (size_t)li] = element(seed, which, n, i, j);
        }
    }
}

static int run_pdgemm(int n, int nb, unsigned long long seed)
{
    int me, procs, ctx, nprow = 1, npcol, myrow, mycol, zero = 0, one = 1, info;
    Cblacs_pinfo(&me, &procs);
    for (int r = 1; r * r <= procs; r++)
        if (procs % r == 0) nprow = r;
    npcol = procs / nprow;
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "Row", nprow, npcol);
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
    int rows = numroc_(&n, &nb, &myrow, &zero, &nprow);
    int cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
    int lld = rows > 1 ? rows : 1, desc[9];
    descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
    size_t local = (size_t)rows * (size_t)cols;
    double *a = malloc((local ? local : 1) * sizeof *a),
           *b = malloc((local ? local : 1) * sizeof *b);
    double *c = calloc(local ? local : 1, sizeof *c);
    if (!a || !b || !c || info != 0) return 1;
    fill_local(a, 0, n, nb, rows, cols, myrow, mycol, nprow, npcol, seed);
    fill_local(b, 1, n, nb, rows, cols, myrow, mycol, nprow, npcol, seed);
    double alpha = 1.0, beta = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c, &one,
            &one, desc);
    MPI_Barrier(MPI_COMM_WORLD);
    double s = now() - t0, sum = 0, total = 0;
    for (size_t i = 0; i < local; i++) sum += c[i];
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) printf("seconds %.6f checksum %.17g grid %dx%d\n", s, total, nprow, npcol);
    free(a), free(b), free(c);
    Cblacs_gridexit(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "pdgemm") != 0 && strcmp(argv[1], "dgemm") != 0)) {
        fprintf(stderr,
                "usage: tessera-scalapack-mm pdgemm N NB [SEED] | dgemm N THREADS [SEED]\n");
        return 2;
    }
    long n = atol(argv[2]), x = atol(argv[3]);
    unsigned long long seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    if (n < 1 || x < 1) {
        fprintf(stderr, "tessera-scalapack-mm: N and %s must be positive\n",
                argv[1][0] == 'p' ? "NB" : "THREADS");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rc = argv[1][0] == 'p' ? run_pdgemm((int)n, (int)x, seed) : run_dgemm(n, (int)x, seed);
    MPI_Finalize();
    return rc;
}
