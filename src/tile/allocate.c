/*
 * allocate.c — Algorithm 2 of APC+: share the remaining work so that every
 * processor finishes at the same time (model.h).
 *
 * With processors sorted by the time their queue ends, the common finish
 * time T lies past the queues of the first k of them; those k share the
 * work, T = (work + sum r_i q_i) / sum r_i over the k, and k grows while the
 * next processor's queue ends before the T of the first k.  This is
 * water-filling: O(n log n) for the sort, exact in real numbers; whole cells
 * are handed out by largest remainder.
 */
#include <math.h>
#include <stdlib.h>
#include "tile/model.h"

typedef struct by_queue {
    double q;
    int i;
} by_queue;

static int cmp_queue(const void *a, const void *b)
{
    const by_queue *x = a, *y = b;
    if (x->q != y->q) return x->q < y->q ? -1 : 1;
    return x->i - y->i;
}

/* The common finish time over the processors with rate > 0. */
static double finish_time(int n, const double *rate, const double *queued, double work)
{
    by_queue *order = malloc((size_t)n * sizeof *order);
    if (order == NULL) return -1.0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (rate[i] > 0) order[m++] = (by_queue){queued[i] > 0 ? queued[i] : 0.0, i};
    qsort(order, (size_t)m, sizeof *order, cmp_queue);
    double sum_r = 0.0, sum_rq = 0.0, t = 0.0;
    for (int k = 0; k < m; k++) {
        if (k > 0 && order[k].q >= t) break; /* this queue ends after T: it gets nothing */
        sum_r += rate[order[k].i];
        sum_rq += rate[order[k].i] * order[k].q;
        t = (work + sum_rq) / sum_r;
    }
    free(order);
    return t;
}

/* Whole cells: floors first, then the remainder to the largest fractions. */
static void round_shares(int n, const double *exact, uint64_t work, uint64_t *share_out)
{
    uint64_t given = 0;
    for (int i = 0; i < n; i++) {
        double f = floor(exact[i]);
        share_out[i] = f > 0 ? (uint64_t)f : 0;
        given += share_out[i];
    }
    while (given < work) {
        int best = -1;
        double best_frac = -1.0;
        for (int i = 0; i < n; i++) {
            double frac = exact[i] - (double)share_out[i];
            if (exact[i] > 0 && frac > best_frac) {
                best_frac = frac;
                best = i;
            }
        }
        if (best < 0) break;
        share_out[best]++;
        given++;
    }
    for (int i = n - 1; given > work && i >= 0; i--) { /* floating-point excess */
        uint64_t take = share_out[i] < given - work ? share_out[i] : given - work;
        share_out[i] -= take;
        given -= take;
    }
}

static void split_equally(int n, uint64_t work, uint64_t *share_out)
{
    for (int i = 0; i < n; i++)
        share_out[i] = work / (uint64_t)n + ((uint64_t)i < work % (uint64_t)n);
}

double tess__tile_allocate(int n, const double *rate, const double *queued, uint64_t work,
                           uint64_t *share_out)
{
    if (n <= 0) return 0.0;
    int known = 0;
    for (int i = 0; i < n; i++) known += rate[i] > 0;
    if (work == 0 || known == 0) {
        split_equally(n, work, share_out);
        return 0.0;
    }
    double t = finish_time(n, rate, queued, (double)work);
    double *exact = malloc((size_t)n * sizeof *exact);
    if (t < 0 || exact == NULL) { /* out of memory: still hand out all the work */
        free(exact);
        split_equally(n, work, share_out);
        return 0.0;
    }
    for (int i = 0; i < n; i++) {
        double q = queued[i] > 0 ? queued[i] : 0.0;
        exact[i] = rate[i] > 0 && t > q ? rate[i] * (t - q) : 0.0;
    }
    round_shares(n, exact, work, share_out);
    free(exact);
    return t;
}
