/*
 * csr_pagerank.h — the memory-bandwidth reference for `tessera bench
 * pagerank`: a plain C pull PageRank over an in-edge CSR, parallelised with
 * OpenMP and nothing else.  It computes the formula of DESIGN §6 (tables
 * face, dangling rank spread over all vertices), so its ranks double as a
 * correctness check for the runtime, and its time per iteration is the
 * yardstick tessera's time is divided by.
 *
 * Not part of the library; used only by bench/bench_pagerank.c.
 */
#ifndef TESS_BENCH_CSR_PAGERANK_H
#define TESS_BENCH_CSR_PAGERANK_H

#include <stdint.h>
#include "graph.h"

/* In-edge CSR of a tg_graph in its internal numbering: the sources of the
 * in-edges of v are in_src[in_first[v] .. in_first[v+1]), in input order
 * (duplicates kept).  inv_outdeg[u] is 1/outdeg(u), or 0 for a vertex with
 * no out-edges (dangling); dangling[0 .. ndangling) lists those vertices. */
typedef struct bench_csr {
    uint32_t nv;
    uint64_t ne;
    tg_in_csr in;       /* in_first, in_src (tools/graph), and out-degrees */
    double *inv_outdeg; /* nv */
    uint32_t *dangling; /* ndangling */
    uint32_t ndangling;
} bench_csr;

/* Build the CSR of `g` into *csr.  The CSR owns its arrays (free with
 * bench_csr_free) and does not refer to `g` afterwards.  Returns 0, or
 * TESS_ERR_NOMEM / TESS_ERR_INVAL (empty graph) with *csr zeroed. */
int bench_csr_build(const tg_graph *g, bench_csr *csr);

/* Release the arrays; accepts NULL and a zeroed struct; leaves *csr zeroed. */
void bench_csr_free(bench_csr *csr);

/* Run `iterations` (>= 1) PageRank iterations from PR0 = 1/N with damping
 * `damping`, on `threads` OpenMP threads (<= 0: the OpenMP default).
 * Each iteration is timed separately (both of its parallel loops, not the
 * allocation of the rank arrays).  If ranks_out is not NULL it receives the
 * nv final ranks in internal index order (ranks_out[i] belongs to g->ids[i]);
 * if iter_seconds_out is not NULL it receives the `iterations` times.
 * Returns the median seconds per iteration, or a negative tess_status
 * (TESS_ERR_NOMEM, TESS_ERR_INVAL) with the outputs untouched.
 * `csr` is only read, so several runs may share it, one at a time. */
double bench_csr_run(const bench_csr *csr, int iterations, double damping, int threads,
                     double *ranks_out, double *iter_seconds_out);

#endif
