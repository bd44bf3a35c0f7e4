/*
 * pagerank.h — PageRank on the tables face (Piccolo §4.1), pull-style: the
 * graph (in-lists), ranks and contrib tables share one partitioning; kernels
 * read the previous iteration's contributions from a replica of the contrib
 * table and write their partitions of ranks and contrib; the rank of
 * vertices without out-edges is summed from that replica on rank 0 and
 * spread over all vertices.
 */
#ifndef TESS_APPS_PAGERANK_H
#define TESS_APPS_PAGERANK_H

#include <stdint.h>
#include "ckpt_cli.h"
#include "common.h"
#include "graph.h"

typedef struct pr_options {
    const char *graph_path, *gen_spec;
    long iterations;
    double damping;
    long workers, partitions;
    const char *output, *metrics;
    app_progress_mode progress;
    app_ckpt_cli ckpt;
    /* work stealing (docs/stealing.md): --no-steal, --slow-worker RANK:FACTOR */
    int no_steal;
    int slow_rank;
    double slow_factor;
    int slow_sleep;
    /* --flush-ms MS: the tables' timeout flush (tess_config.flush_ms); -1: not given */
    double flush_ms;
} pr_options;

typedef struct pr_app {
    pr_options opt;
    tg_graph g;    /* ids and counts; its edge list is not kept */
    tg_in_csr csr; /* in_src freed once in the graph table */
    _Atomic int in_src_released;
    uint32_t *dangling; /* the ndangling vertices without out-edges, ascending */
    uint64_t ndangling;
    tess_table *graph, *ranks, *contrib;
    double spread;           /* D/N of the ranks in the tables */
    long first_iteration;    /* 0, or the iterations a restored checkpoint had done */
    uint64_t restored_epoch; /* 0 unless restored */
    double start;            /* tess_now() before tess_init: the metrics' wall time */
    double load_seconds;
    double *iteration_seconds;
    int progress;
    app_outfile out_ranks, out_metrics; /* rank 0, committed together at the end */
} pr_app;

/* Write "id<TAB>rank" for every vertex into app->out_ranks (committed with
 * the metrics by the caller), or the top ten on stdout (rank 0). */
int pr_write_results(pr_app *app, tess_ctx *ctx);
/* The ten highest-ranked vertices of g on stdout, "id<TAB>rank" lines,
 * higher rank first, then the smaller id (also pagerank-tick's summary). */
void pr_print_top(const tg_graph *g, const double *pr);

#endif
