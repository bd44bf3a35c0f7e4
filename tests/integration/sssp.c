/*
 * sssp.c — a fixpoint on tables with no change-counting of its own:
 * single-source shortest paths relaxed over a MIN table until
 * tess_table_changes() says no update lowered a distance, compared with a
 * plain sequential Dijkstra.  Also checks the count itself (updates from the
 * identity count, updates that lower nothing do not; a SUM table is refused).
 * Each instance reads its partition with one tess_table_read_range and the
 * control function the result with tess_table_gather.  Run embedded
 * (`sssp --workers 2`) or under `mpirun -np 3 sssp`.  Prints one line per
 * check and "N passed, N failed"; exits non-zero on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"

#include "checks.h"

#define NV 3000
#define DEG 4
#define PARTS 5
#define UNREACHED INT64_MAX

typedef struct app {
    uint32_t adj[NV][DEG]; /* the same graph on every rank (a seeded generator) */
    int64_t w[NV][DEG];
    tess_table *dist, *sum;
} app;

static uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Vertices >= NV - 50 have no in-edges: some stay unreached. */
static void make_graph(app *a)
{
    uint64_t s = 42;
    for (int v = 0; v < NV; v++)
        for (int j = 0; j < DEG; j++) {
            a->adj[v][j] = (uint32_t)(next_rand(&s) % (NV - 50));
            a->w[v][j] = 1 + (int64_t)(next_rand(&s) % 100);
        }
}

/* Relax every edge out of a reached vertex of this instance's partition. */
static int k_relax(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    int i = tess_task_instance(task);
    uint64_t first, count;
    tess_table_dense_range(a->dist, i, &first, &count);
    int64_t *d = malloc(count * sizeof *d);
    if (d == NULL) return -1;
    int rc = tess_table_read_range(a->dist, first, count, d); /* one call */
    for (uint64_t k = 0; rc == TESS_OK && k < count; k++) {
        if (d[k] == UNREACHED) continue;
        for (int j = 0; rc == TESS_OK && j < DEG; j++) {
            uint64_t u = a->adj[first + k][j];
            int64_t nd = d[k] + a->w[first + k][j];
            rc = tess_table_update(a->dist, &u, &nd, sizeof nd);
        }
    }
    free(d);
    return rc;
}

/* Plain Dijkstra with an O(V^2) scan: small enough, obviously right. */
static void dijkstra(const app *a, int64_t *dist)
{
    static char done[NV];
    memset(done, 0, sizeof done);
    for (int v = 0; v < NV; v++) dist[v] = UNREACHED;
    dist[0] = 0;
    for (;;) {
        int best = -1;
        for (int v = 0; v < NV; v++)
            if (!done[v] && dist[v] != UNREACHED && (best < 0 || dist[v] < dist[best])) best = v;
        if (best < 0) return;
        done[best] = 1;
        for (int j = 0; j < DEG; j++) {
            int64_t nd = dist[best] + a->w[best][j];
            if (nd < dist[a->adj[best][j]]) dist[a->adj[best][j]] = nd;
        }
    }
}

static void check_counting(tess_ctx *ctx, app *a)
{
    uint64_t keys[3] = {1, 2, 3};
    int64_t low[3] = {5, 6, 7}, high[3] = {9, 9, 9};
    tess_table_changes(a->dist); /* start from 0 */
    tess_table_update_batch(a->dist, keys, low, 3);
    tess_barrier(ctx);
    check(tess_table_changes(a->dist) == 3, "updates from the identity count once a key");
    tess_table_update_batch(a->dist, keys, high, 3);
    tess_barrier(ctx);
    check(tess_table_changes(a->dist) == 0, "updates that lower nothing are not counted");
    check(tess_table_changes(a->dist) == 0, "the count restarts after a call");
    check(tess_table_changes(a->sum) == TESS_ERR_INVAL, "a SUM table: TESS_ERR_INVAL");
    tess_table_clear(a->dist);
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    check_counting(ctx, a);
    uint64_t src = 0;
    int64_t zero = 0;
    int rc = tess_table_update(a->dist, &src, &zero, sizeof zero);
    int rounds = 0;
    int64_t changes = 1;
    while (rc == TESS_OK && changes > 0 && rounds < NV) {
        rc = tess_run(ctx, "relax", PARTS, a->dist, NULL, 0);
        if (rc == TESS_OK) rc = tess_barrier(ctx);
        changes = tess_table_changes(a->dist);
        rounds++;
    }
    check(rc == TESS_OK && changes == 0, "the fixpoint ends: no update lowered a distance");
    static int64_t want[NV], got[NV];
    dijkstra(a, want);
    if (rc == TESS_OK) rc = tess_table_gather(a->dist, got, sizeof got);
    check(rc == TESS_OK && memcmp(want, got, sizeof got) == 0,
          "distances equal a sequential Dijkstra's");
    printf("rounds: %d\n", rounds);
    return rc;
}

static int setup(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = tess_register_kernel(ctx, "relax", k_relax);
    tess_table_spec s = checks_acc_spec("dist", PARTS, NV, TESS_ACC_MIN, TESS_I64);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->dist);
    s.name = "sum";
    s.accum = TESS_ACC_SUM;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->sum);
    return rc;
}

int main(int argc, char **argv)
{
    static app a;
    make_graph(&a);
    tess_config cfg;
    checks_config(argc, argv, &cfg);
    return checks_exit("sssp", checks_run(&cfg, setup, control, &a));
}
