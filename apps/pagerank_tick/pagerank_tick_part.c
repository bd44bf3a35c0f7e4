/*
 * pagerank_tick_part.c — PART of pagerank-tick: METIS k-way partitioning of
 * the graph made undirected (u-v for every edge u->v, u != v, each pair
 * once), unit weights, a fixed seed, so every rank computes the same
 * partition.  METIS may leave a part empty on a small graph; each empty part
 * then takes the highest-numbered vertex of the currently largest part, so
 * every tick process owns at least one vertex.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <metis.h>

#include "pagerank_tick.h"

#define METIS_SEED 20110401 /* any fixed value: the partition must not vary */

typedef struct sym_graph {
    idx_t *xadj, *adjncy;
} sym_graph;

static void sym_free(sym_graph *s)
{
    free(s->xadj);
    free(s->adjncy);
}

static int cmp_idx(const void *a, const void *b)
{
    idx_t x = *(const idx_t *)a, y = *(const idx_t *)b;
    return (x > y) - (x < y);
}

/* Sort each adjacency list and drop repeats, compacting in place. */
static void sym_dedupe(sym_graph *s, uint32_t nv)
{
    idx_t at = 0;
    for (uint32_t v = 0; v < nv; v++) {
        idx_t b = s->xadj[v], e = s->xadj[v + 1];
        qsort(s->adjncy + b, (size_t)(e - b), sizeof *s->adjncy, cmp_idx);
        s->xadj[v] = at;
        for (idx_t i = b; i < e; i++)
            if (i == b || s->adjncy[i] != s->adjncy[i - 1]) s->adjncy[at++] = s->adjncy[i];
    }
    s->xadj[nv] = at;
}

static int sym_build(const tg_graph *g, sym_graph *s)
{
    uint32_t nv = (uint32_t)g->nv;
    s->xadj = calloc((size_t)nv + 1, sizeof *s->xadj);
    uint64_t half = 0;
    for (uint64_t e = 0; e < g->ne; e++) half += g->src[e] != g->dst[e];
    s->adjncy = malloc((half ? 2 * half : 1) * sizeof *s->adjncy);
    if (s->xadj == NULL || s->adjncy == NULL) return -1;
    for (uint64_t e = 0; e < g->ne; e++)
        if (g->src[e] != g->dst[e]) {
            s->xadj[g->src[e] + 1]++;
            s->xadj[g->dst[e] + 1]++;
        }
    for (uint32_t v = 0; v < nv; v++) s->xadj[v + 1] += s->xadj[v];
    idx_t *fill = malloc(((size_t)nv + 1) * sizeof *fill);
    if (fill == NULL) return -1;
    memcpy(fill, s->xadj, ((size_t)nv + 1) * sizeof *fill);
    for (uint64_t e = 0; e < g->ne; e++)
        if (g->src[e] != g->dst[e]) {
            s->adjncy[fill[g->src[e]]++] = (idx_t)g->dst[e];
            s->adjncy[fill[g->dst[e]]++] = (idx_t)g->src[e];
        }
    free(fill);
    sym_dedupe(s, nv);
    return 0;
}

static const char *metis_reason(int rc)
{
    switch (rc) {
    case METIS_ERROR_INPUT: return "METIS rejected the input";
    case METIS_ERROR_MEMORY: return "METIS ran out of memory";
    default: return "METIS failed";
    }
}

/* Give every empty part one vertex (see the file comment). */
static int fill_empty_parts(int32_t *part, uint32_t nv, int n)
{
    uint32_t *size = calloc((size_t)n, sizeof *size);
    if (size == NULL) return -1;
    for (uint32_t v = 0; v < nv; v++) size[part[v]]++;
    for (int e = 0; e < n; e++) {
        if (size[e] > 0) continue;
        int big = 0;
        for (int p = 1; p < n; p++)
            if (size[p] > size[big]) big = p;
        uint32_t v = nv;
        while (v > 0 && part[v - 1] != big) v--;
        part[v - 1] = e; /* size[big] >= 2 since n <= nv */
        size[big]--;
        size[e]++;
    }
    free(size);
    return 0;
}

static int run_metis(prt_app *a, sym_graph *s, int n, char *reason, size_t len)
{
    uint32_t nv = (uint32_t)a->g.nv;
    idx_t nvtxs = (idx_t)nv, ncon = 1, nparts = n, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = METIS_SEED;
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t *where = malloc((size_t)nv * sizeof *where);
    if (where == NULL) return snprintf(reason, len, "out of memory"), -1;
    int rc = METIS_PartGraphKway(&nvtxs, &ncon, s->xadj, s->adjncy, NULL, NULL, NULL, &nparts, NULL,
                                 NULL, options, &objval, where);
    if (rc != METIS_OK) {
        free(where);
        return snprintf(reason, len, "%s (status %d)", metis_reason(rc), rc), -1;
    }
    for (uint32_t v = 0; v < nv; v++) a->part[v] = (int32_t)where[v];
    free(where);
    for (uint32_t v = 0; v < nv; v++)
        if (a->part[v] < 0 || a->part[v] >= n)
            return snprintf(reason, len, "METIS returned part %d", (int)a->part[v]), -1;
    a->edge_cut = (uint64_t)objval;
    return 0;
}

static int partition_into(prt_app *a, int n, char *reason, size_t len)
{
    uint64_t nv = a->g.nv;
    if ((uint64_t)n > nv)
        return snprintf(reason, len, "more parts than vertices (%llu)", (unsigned long long)nv), -1;
    if (nv > (uint64_t)INT32_MAX / 2 || a->g.ne > (uint64_t)INT32_MAX / 2)
        return snprintf(reason, len, "too large for METIS's 32-bit indices"), -1;
    if (n == 1) {
        memset(a->part, 0, (size_t)nv * sizeof *a->part);
        return 0;
    }
    sym_graph s = {0};
    int rc = sym_build(&a->g, &s);
    if (rc != 0) snprintf(reason, len, "out of memory");
    else rc = run_metis(a, &s, n, reason, len);
    sym_free(&s);
    if (rc == 0 && fill_empty_parts(a->part, (uint32_t)nv, n) != 0)
        return snprintf(reason, len, "out of memory"), -1;
    return rc;
}

int prt_partition(prt_app *a, int n, char *err, size_t errlen)
{
    char reason[200] = "";
    free(a->part);
    a->part = malloc((a->g.nv ? a->g.nv : 1) * sizeof *a->part);
    int rc = a->part ? partition_into(a, n, reason, sizeof reason)
                     : (snprintf(reason, sizeof reason, "out of memory"), -1);
    if (rc != 0)
        snprintf(err, errlen, "cannot partition %s into %d parts: %s", prt_graph_name(a), n,
                 reason);
    return rc;
}
