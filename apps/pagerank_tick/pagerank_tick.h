/*
 * pagerank_tick.h — `tessera run pagerank-tick`: PageRank on the tick face
 * (DESIGN §6, the SoCC 2011 paper's Appendix B.2; docs/pagerank-tick.md).
 * Every rank loads the same graph, builds the same in-edge CSR and the same
 * METIS partition; the graph state class (tick_graph.h) holds the ranks.
 */
#ifndef TESS_APPS_PAGERANK_TICK_H
#define TESS_APPS_PAGERANK_TICK_H

#include <stdint.h>
#include "common.h"
#include "graph.h"
#include "tessera/tick_graph.h"
#include "tick_app.h"

#define PRT_APP "pagerank-tick"

typedef struct prt_app {
    const char *graph_path, *gen_spec, *output_path;
    double damping;
    app_tick_cli cli;

    tg_graph g;
    tg_in_csr csr;     /* in-edges, in edge-list order per target, and out-degrees */
    int32_t *part;     /* METIS partition, one part per tick process */
    uint64_t edge_cut; /* of the symmetrised graph, as METIS reports it */
    tess_graph *graph;
    double base; /* (1-d)/N */
    double init; /* 1/N */

    tess_graph_fns fns;
    tess_tick_app tick;
    double load_seconds, partition_seconds;
} prt_app;

/* The name of the graph for messages: the file or the generator spec. */
const char *prt_graph_name(const prt_app *a);

/* Partition the graph into n parts with METIS (n = 1: trivially) into
 * a->part.  0, or -1 with "cannot partition GRAPH into N parts: REASON" in
 * err. */
int prt_partition(prt_app *a, int n, char *err, size_t errlen);

/* Write every vertex's rank to fp (the --output file), or without one (fp
 * NULL) the ten highest-ranked vertices on stdout.  0 or -1 (message printed). */
int prt_write_ranks(const prt_app *a, const double *pr, FILE *fp);

#endif
