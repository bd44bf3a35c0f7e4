/*
 * pagerank_tick_output.c — the ranks of a pagerank-tick run: every vertex,
 * ascending id, into the --output file (which appears only when complete),
 * or the ten highest-ranked vertices on stdout.
 */
#include <stdio.h>

#include "pagerank_tick.h"

static int write_all(const prt_app *a, const double *pr, FILE *fp)
{
    for (uint64_t v = 0; v < a->g.nv; v++)
        if (fprintf(fp, "%llu\t%.17g\n", (unsigned long long)a->g.ids[v], pr[v]) < 0) {
            app_error(PRT_APP, "cannot write %s", a->output_path);
            return -1;
        }
    return 0;
}

/* Does x rank before y: higher rank first, then the smaller id. */
static int ranks_before(const double *pr, uint64_t x, uint64_t y)
{
    if (pr[x] != pr[y]) return pr[x] > pr[y];
    return x < y;
}

/* A sorted top list kept while scanning once. */
static void print_top(const prt_app *a, const double *pr)
{
    uint64_t top[10];
    int n = 0;
    for (uint64_t v = 0; v < a->g.nv; v++) {
        if (n == 10 && !ranks_before(pr, v, top[9])) continue;
        int at = n < 10 ? n++ : 9;
        top[at] = v;
        for (; at > 0 && ranks_before(pr, top[at], top[at - 1]); at--) {
            uint64_t t = top[at];
            top[at] = top[at - 1];
            top[at - 1] = t;
        }
    }
    for (int i = 0; i < n; i++)
        printf("%llu\t%.17g\n", (unsigned long long)a->g.ids[top[i]], pr[top[i]]);
    fflush(stdout);
}

int prt_write_ranks(const prt_app *a, const double *pr, FILE *fp)
{
    if (fp != NULL) return write_all(a, pr, fp);
    print_top(a, pr);
    return 0;
}
