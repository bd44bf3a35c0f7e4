/*
 * bench_rounds.c — alternating rounds of two systems and the median of their
 * per-round ratios (bench_rounds.h).  A ratio taken within one round pairs
 * runs a few seconds apart, so slow drifts of the machine cancel in it.
 */
#include "bench_rounds.h"

#include <stdlib.h>

#include "bench_util.h"

/* The most rounds a bench takes (--rounds of bench kmeans and ckpt). */
#define BENCH_MAX_RATIOS 1024

int bench_alternate(bench_side_fn run, void *ctx, long rounds, bench_on_failure on_failure,
                    bench_pair *out)
{
    out->n = 0;
    for (long r = 0; r < rounds && r < BENCH_MAX_ROUNDS; r++) {
        int first = (int)(r % 2);
        double t[2];
        t[first] = run(ctx, first);
        t[1 - first] = run(ctx, 1 - first);
        if (t[0] > 0 && t[1] > 0) {
            out->t[0][out->n] = t[0];
            out->t[1][out->n++] = t[1];
        } else if (on_failure == BENCH_STOP_AT_FAILED) break;
    }
    return out->n;
}

int bench_rounds_main(const bench_rounds_def *def, int argc, char **argv)
{
    void *state = calloc(1, def->state_size);
    if (!state) return 1;
    int rc = def->parse(state, argc, argv);
    if (rc != 0) {
        free(state);
        return rc > 0 ? 0 : 2;
    }
    long rounds = def->start(state);
    rc = rounds < 0 ? -1 : 0;
    for (int round = 0; rc == 0 && round < rounds; round++) rc = def->one_round(state, round);
    if (rc == 0) def->report(state);
    def->finish(state);
    free(state);
    return rc == 0 ? 0 : 1;
}

bench_ratio bench_median_ratio(const double *num, const double *den, int n)
{
    double ratio[BENCH_MAX_RATIOS];
    bench_ratio r;
    if (n > BENCH_MAX_RATIOS) n = BENCH_MAX_RATIOS;
    for (int k = 0; k < n; k++) ratio[k] = num[k] / den[k];
    r.coverage = bench_median_ci(ratio, n, &r.lo, &r.hi);
    r.median = bench_median(ratio, n);
    return r;
}
