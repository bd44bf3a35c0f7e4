/*
 * auto.c — what `--alg auto` runs, from a calibration of local
 * synchronisation (run.c): its STEP time s and wait w per tick, and the
 * tuples a ghost layer adds to a partition, rho.  docs/ticks.md, "--alg auto".
 *
 *   - w <= s/10: latency hardly shows; local.
 *   - the processes kept 70% of the cores busy or more: the waits are for a
 *     core, not for messages (more processes than cores), and layers or
 *     work ahead would only add compute; local.
 *   - n = ceil(w / s), the ticks of compute one wait covers, at most 14;
 *     ahead = n+1.  Replication lets a process run m+1 ticks past the last
 *     round it received, so m+1 = ahead covers the wait; lazily, layers cost
 *     compute only while the process would wait anyway, plus wider messages.
 *     A full set of layers should not outweigh the partition: m+1 at most
 *     1/rho (and at least 2).  Combined, d = ahead, and k = 2 when layers are
 *     cheap (rho <= 5%) and m+1 >= 4 (half the messages), else 1.
 *   - rho >= 1 (a layer as big as the partition: the fish school's small
 *     partitions): no replication; sched, d = ahead, which computes ahead
 *     only the process's own tuples.
 * (Measured on 4 workers: Jacobi 400x400 and 3200 fish under fixed and
 * cloud latency, docs/bench-tick.md.)
 * k must divide --repart-every: the largest such k up to the choice.
 */
#include <math.h>
#include "tick/tick_internal.h"

#define AUTO_MAX_AHEAD 15 /* m+1 and d at most */

void tick_auto_choose(const tess_tick_calibration *c, int64_t repart_every, tess_tick_alg *alg,
                      int *depth, int *period, int *layers)
{
    *alg = TESS_TICK_LOCAL;
    *depth = 1, *period = 1, *layers = 0;
    double s = c->step_s > 0 ? c->step_s : 1e-9, w = c->wait_s;
    if (c->ticks <= 0 || !(w > s / 10) || c->busy >= 0.7) return;
    double ticks = ceil(w / s);
    int n = ticks < AUTO_MAX_AHEAD - 1 ? (int)ticks : AUTO_MAX_AHEAD - 1;
    int ahead = n + 1;
    if (c->layer_ratio >= 1.0) {
        *alg = TESS_TICK_SCHED;
        *depth = ahead;
        return;
    }
    int width = c->layer_ratio > 0 ? (int)floor(1.0 / c->layer_ratio) : ahead;
    if (width > ahead) width = ahead;
    if (width < 2) width = 2;
    *alg = TESS_TICK_COMBINED;
    *depth = ahead;
    *layers = width - 1;
    *period = width >= 4 && c->layer_ratio <= 0.05 ? 2 : 1;
    while (repart_every > 0 && repart_every % *period != 0) (*period)--;
}
