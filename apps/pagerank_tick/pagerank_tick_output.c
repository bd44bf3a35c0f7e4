/*
 * pagerank_tick_output.c — the ranks of a pagerank-tick run: every vertex,
 * ascending id, into the --output file (which appears only when complete),
 * or the ten highest-ranked vertices on stdout.
 */
#include <stdio.h>

#include "pagerank/pagerank.h"
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

int prt_write_ranks(const prt_app *a, const double *pr, FILE *fp)
{
    if (fp != NULL) return write_all(a, pr, fp);
    pr_print_top(&a->g, pr); /* the tables app's summary */
    return 0;
}
