/*
 * matmul_blas.c — OpenBLAS, loaded only when matmul runs.
 *
 * Debian's OpenBLAS (the pthread flavour) starts a pool of threads from its
 * constructor as soon as a process that links it starts, and each spins on
 * sched_yield for about a tenth of a second before it sleeps.  Linked into
 * the tessera binary, that cost every command — a Black-Scholes run, a
 * tick application, a test — about 0.1 s of one core at start, taken from
 * the workers on a two-core machine (measured: 0.37 vs 0.26 CPU-seconds
 * for a 0.25 s tiles run).  Only matmul multiplies matrices, and it wants
 * one BLAS thread per call (its workers are the parallelism), so it loads
 * the library itself with OPENBLAS_NUM_THREADS=1: no pool at all.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "matmul_app.h"

/* The type only: nothing here refers to the symbol at link time. */
static __typeof__(&cblas_dgemm) dgemm_fn;

int mm_blas_load(void)
{
    if (dgemm_fn != NULL) return 0;
    /* Read by OpenBLAS's constructor, so set before dlopen.  Called before
     * tess_init starts any thread, so setenv is safe here. */
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    void *lib = dlopen(MM_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "%s: cannot load OpenBLAS (%s): %s\n", MM_APP, MM_OPENBLAS_SONAME,
                dlerror());
        return -1;
    }
    void *sym = dlsym(lib, "cblas_dgemm");
    if (sym == NULL) {
        fprintf(stderr, "%s: %s has no cblas_dgemm\n", MM_APP, MM_OPENBLAS_SONAME);
        dlclose(lib);
        return -1;
    }
    /* POSIX: a dlsym result converts to a function pointer. */
    *(void **)&dgemm_fn = sym;
    return 0;
}

void mm_dgemm(int m, int n, int k, double beta, const double *a, int lda, const double *b, int ldb,
              double *c, int ldc)
{
    dgemm_fn(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}
