/*
 * sssp.c — the tables walkthrough (docs/tables.md): single-source shortest
 * paths on a random graph as a fixpoint.  Distances live in a dense table
 * whose accumulator keeps the minimum; each round every partition relaxes
 * the edges out of its vertices, and the rounds end when tess_table_changes
 * says no update lowered a distance.  Prints how many vertices the source
 * reaches and the sum of their distances.
 *
 *   sssp NV          (embedded, or under mpirun -np R)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera/tessera.h>

#define DEG 4
#define PARTS 8
#define UNREACHED INT64_MAX /* the MIN accumulator's identity: never updated */

typedef struct graph {
    uint64_t nv;
    uint64_t *to; /* to[v * DEG + j]: the j-th edge out of v, of weight w[...] */
    int64_t *w;
    tess_table *dist;
} graph;

static uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* The same graph on every rank: a seeded generator. */
static int make_graph(graph *g, uint64_t nv)
{
    uint64_t s = 42;
    g->nv = nv;
    g->to = malloc(nv * DEG * sizeof *g->to);
    g->w = malloc(nv * DEG * sizeof *g->w);
    if (g->to == NULL || g->w == NULL) return -1;
    for (uint64_t e = 0; e < nv * DEG; e++) {
        g->to[e] = next_rand(&s) % nv;
        g->w[e] = 1 + (int64_t)(next_rand(&s) % 100);
    }
    return 0;
}

/* One round on one partition: read its distances in one call, then offer
 * every neighbour of a reached vertex a shorter distance (MIN keeps it). */
static int relax(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    graph *g = tess_task_app(task);
    uint64_t first, n;
    tess_table_dense_range(g->dist, tess_task_instance(task), &first, &n);
    int64_t *d = malloc(n * sizeof *d);
    int rc = d ? tess_table_read_range(g->dist, first, n, d) : TESS_ERR_NOMEM;
    for (uint64_t k = 0; rc == TESS_OK && k < n; k++) {
        for (int j = 0; d[k] != UNREACHED && rc == TESS_OK && j < DEG; j++) {
            uint64_t e = (first + k) * DEG + (uint64_t)j, u = g->to[e];
            int64_t nd = d[k] + g->w[e];
            rc = tess_table_update(g->dist, &u, &nd, sizeof nd);
        }
    }
    free(d);
    return rc;
}

static int control(tess_ctx *ctx, void *arg)
{
    graph *g = arg;
    uint64_t source = 0;
    int64_t zero = 0;
    int rc = tess_table_update(g->dist, &source, &zero, sizeof zero);
    for (int64_t changed = 1; rc == TESS_OK && changed > 0;) {
        rc = tess_run(ctx, "relax", PARTS, g->dist, NULL, 0);
        if (rc == TESS_OK) rc = tess_barrier(ctx);
        changed = tess_table_changes(g->dist); /* updates that lowered a value */
        if (changed < 0) rc = (int)changed;
    }
    int64_t *d = malloc(g->nv * sizeof *d);
    if (rc == TESS_OK) rc = d ? tess_table_gather(g->dist, d, g->nv * sizeof *d) : TESS_ERR_NOMEM;
    uint64_t reached = 0;
    int64_t sum = 0;
    for (uint64_t v = 0; rc == TESS_OK && v < g->nv; v++)
        if (d[v] != UNREACHED) reached++, sum += d[v];
    if (rc == TESS_OK)
        printf("reached %llu sum %lld\n", (unsigned long long)reached, (long long)sum);
    else fprintf(stderr, "sssp: %s\n", tess_last_error(ctx));
    free(d);
    return rc;
}

static int create_table(tess_ctx *ctx, graph *g)
{
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = "dist";
    s.key_size = sizeof(uint64_t);
    s.value_size = sizeof(int64_t);
    s.dense = 1, s.key_count = g->nv, s.partitions = PARTS;
    s.accum = TESS_ACC_MIN, s.elem = TESS_I64;
    return tess_table_create(ctx, &s, &g->dist);
}

int main(int argc, char **argv)
{
    graph g = {0};
    if (argc != 2 || atol(argv[1]) < PARTS || make_graph(&g, (uint64_t)atol(argv[1])) != 0) {
        fprintf(stderr, "usage: sssp NV (at least %d vertices)\n", PARTS);
        return 2;
    }
    tess_ctx *ctx;
    if (tess_init(NULL, &ctx) != TESS_OK) return 1;
    int rc = create_table(ctx, &g);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "relax", relax);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &g);
    else fprintf(stderr, "sssp: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    free(g.to);
    free(g.w);
    return rc == TESS_OK ? 0 : 1;
}
