/*
 * csr_pagerank.c — the CSR pull PageRank reference (see csr_pagerank.h).
 *
 * Why pull over an in-edge CSR: each next[v] is written by exactly one
 * thread, so the loop needs no atomics and streams in_src once per
 * iteration — the closest a plain program gets to the memory-bandwidth
 * limit, which is what tessera's dense tables are measured against.
 * An iteration is two parallel loops:
 *   1. contrib[u] = PR(u) / outdeg(u), and D = total rank of dangling u;
 *   2. next[v] = (1-d)/N + d * (sum of contrib over in-edges of v + D/N).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
/* An OpenMP pragma that vanishes without -fopenmp (no unknown-pragma warnings). */
#define BENCH_PRAGMA(...) _Pragma(#__VA_ARGS__)
#define BENCH_OMP(...) BENCH_PRAGMA(omp __VA_ARGS__)
#else
#define BENCH_OMP(...)
#endif

#include "bench_util.h"
#include "csr_pagerank.h"
#include "tessera/tessera.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_csr_free(bench_csr *csr)
{
    if (csr == NULL) return;
    tg_in_csr_free(&csr->in);
    free(csr->inv_outdeg);
    free(csr->dangling);
    memset(csr, 0, sizeof *csr);
}

/* 1/outdeg into inv_outdeg and the list of dangling vertices. */
static int build_degrees(bench_csr *csr)
{
    const uint32_t *outdeg = csr->in.outdeg;
    uint32_t ndangling = 0;
    for (uint32_t u = 0; u < csr->nv; u++) ndangling += outdeg[u] == 0;
    csr->dangling = malloc((ndangling ? ndangling : 1) * sizeof *csr->dangling);
    if (csr->dangling == NULL) return TESS_ERR_NOMEM;
    for (uint32_t u = 0; u < csr->nv; u++) {
        csr->inv_outdeg[u] = outdeg[u] ? 1.0 / (double)outdeg[u] : 0.0;
        if (outdeg[u] == 0) csr->dangling[csr->ndangling++] = u;
    }
    return TESS_OK;
}

int bench_csr_build(const tg_graph *g, bench_csr *csr)
{
    memset(csr, 0, sizeof *csr);
    if (g->nv == 0 || g->nv > UINT32_MAX) return TESS_ERR_INVAL;
    bench_csr c = {.nv = (uint32_t)g->nv, .ne = g->ne};
    c.inv_outdeg = malloc((size_t)c.nv * sizeof *c.inv_outdeg);
    /* the in-edges in input order per vertex (stable counting sort) */
    if (c.inv_outdeg == NULL || tg_build_in_csr(g, &c.in, NULL, 0) != 0 ||
        build_degrees(&c) != TESS_OK) {
        bench_csr_free(&c);
        return TESS_ERR_NOMEM;
    }
    *csr = c;
    return TESS_OK;
}

/* Loop 1: contributions, and the dangling total D (returned). */
static double scatter_contrib(const bench_csr *csr, const double *pr, double *contrib, int threads)
{
    const int64_t nv = csr->nv;
    double dangling = 0.0;
    (void)threads; /* used only by OpenMP */
    BENCH_OMP(parallel num_threads(threads))
    {
        BENCH_OMP(for schedule(static))
        for (int64_t u = 0; u < nv; u++) contrib[u] = pr[u] * csr->inv_outdeg[u];
        BENCH_OMP(for schedule(static) reduction(+ : dangling))
        for (int64_t i = 0; i < (int64_t)csr->ndangling; i++) dangling += pr[csr->dangling[i]];
    }
    return dangling;
}

/* Loop 2: gather.  Guided scheduling because R-MAT in-degrees are skewed:
 * static blocks of vertices would give one thread most of the edges. */
static void gather_next(const bench_csr *csr, const double *contrib, double *next, double damping,
                        double dangling, int threads)
{
    const int64_t nv = csr->nv;
    const double n = (double)csr->nv;
    const double teleport = (1.0 - damping) / n, spread = dangling / n;
    (void)threads;
    BENCH_OMP(parallel for schedule(guided, 1024) num_threads(threads))
    for (int64_t v = 0; v < nv; v++) {
        double sum = 0.0;
        for (uint64_t k = csr->in.in_first[v]; k < csr->in.in_first[v + 1]; k++)
            sum += contrib[csr->in.in_src[k]];
        next[v] = teleport + damping * (sum + spread);
    }
}

double bench_csr_run(const bench_csr *csr, int iterations, double damping, int threads,
                     double *ranks_out, double *iter_seconds_out)
{
    if (csr == NULL || csr->nv == 0 || iterations < 1) return TESS_ERR_INVAL;
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    double *pr = malloc((size_t)csr->nv * sizeof *pr);
    double *next = malloc((size_t)csr->nv * sizeof *next);
    double *contrib = malloc((size_t)csr->nv * sizeof *contrib);
    double *times = malloc((size_t)iterations * sizeof *times);
    double result = TESS_ERR_NOMEM;
    if (pr == NULL || next == NULL || contrib == NULL || times == NULL) goto out_free;
    const double init = 1.0 / (double)csr->nv;
    /* first touch by the threads that will use the pages */
    BENCH_OMP(parallel for schedule(static) num_threads(threads))
    for (int64_t v = 0; v < (int64_t)csr->nv; v++) {
        pr[v] = init;
        next[v] = 0.0;
        contrib[v] = 0.0;
    }
    for (int k = 0; k < iterations; k++) {
        double t0 = now_seconds();
        double dangling = scatter_contrib(csr, pr, contrib, threads);
        gather_next(csr, contrib, next, damping, dangling, threads);
        times[k] = now_seconds() - t0;
        double *swap = pr;
        pr = next;
        next = swap;
    }
    result = bench_median(times, iterations);
    if (ranks_out != NULL) memcpy(ranks_out, pr, (size_t)csr->nv * sizeof *pr);
    if (iter_seconds_out != NULL)
        memcpy(iter_seconds_out, times, (size_t)iterations * sizeof *times);
out_free:
    free(times);
    free(contrib);
    free(next);
    free(pr);
    return result;
}
