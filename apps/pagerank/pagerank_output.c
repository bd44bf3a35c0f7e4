/*
 * pagerank_output.c — the results of a PageRank run: every vertex's rank in
 * ascending id order into a file that appears only when complete (with the
 * metrics, all or nothing), or the ten highest-ranked vertices on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagerank.h"

/* Final ranks, gathered from every partition. */
static double *gather_ranks(pr_app *app)
{
    uint64_t n = app->g.nv;
    double *sums = calloc(n ? n : 1, sizeof *sums);
    if (sums == NULL) return NULL;
    tess_table *t = app->ranks;
    for (int p = 0; p < tess_table_partitions(t); p++) {
        tess_iter *it = NULL;
        if (tess_table_iter(t, p, &it) != TESS_OK) {
            free(sums);
            return NULL;
        }
        const void *k, *v;
        size_t len;
        while (tess_iter_next(it, &k, &v, &len) == 1) {
            uint64_t key;
            memcpy(&key, k, sizeof key);
            if (key < n) memcpy(&sums[key], v, sizeof(double));
        }
        tess_iter_free(it);
    }
    return sums;
}

static int write_all(pr_app *app, const double *pr)
{
    app_outfile *o = &app->out_ranks;
    if (app_outfile_open(o, app->opt.output) != 0) return -1;
    for (uint64_t v = 0; v < app->g.nv; v++)
        fprintf(o->fp, "%llu\t%.17g\n", (unsigned long long)app->g.ids[v], pr[v]);
    return 0; /* a write error shows when the file is committed */
}

/* Does vertex x rank before y: higher rank first, then smaller id. */
static int ranks_before(const double *pr, uint64_t x, uint64_t y)
{
    if (pr[x] != pr[y]) return pr[x] > pr[y];
    return x < y;
}

/* The ten best by a partial selection: keep a sorted top list while scanning. */
void pr_print_top(const tg_graph *g, const double *pr)
{
    uint64_t top[10];
    int n = 0;
    for (uint64_t v = 0; v < g->nv; v++) {
        if (n == 10 && !ranks_before(pr, v, top[9])) continue;
        int at = n < 10 ? n++ : 9;
        top[at] = v;
        while (at > 0 && ranks_before(pr, top[at], top[at - 1])) {
            uint64_t tmp = top[at];
            top[at] = top[at - 1];
            top[at - 1] = tmp;
            at--;
        }
    }
    for (int i = 0; i < n; i++)
        printf("%llu\t%.17g\n", (unsigned long long)g->ids[top[i]], pr[top[i]]);
    fflush(stdout);
}

int pr_write_results(pr_app *app, tess_ctx *ctx)
{
    double *pr = gather_ranks(app);
    if (pr == NULL) {
        app_error("pagerank", "cannot gather the ranks: %s", tess_last_error(ctx));
        return TESS_ERR_NOMEM;
    }
    int rc = 0;
    if (app->opt.output) {
        rc = write_all(app, pr);
    } else {
        if (app->progress)
            fprintf(stderr, "pagerank: the ten highest-ranked vertices (id, rank):\n");
        pr_print_top(&app->g, pr);
    }
    free(pr);
    return rc == 0 ? TESS_OK : TESS_ERR_IO;
}
