/*
 * auto.c — what `--alg auto` runs, from a calibration of local
 * synchronisation (run.c): its STEP time s and wait w per tick, and the
 * tuples a ghost layer adds to a partition, rho.  docs/ticks.md, "--alg auto".
 *
 *   - w <= s/10: latency hardly shows; local.
 *   - Very cheap layers (all 15 together within 10% of the partition:
 *     Jacobi's 1000x1000 blocks): repl as wide as allowed, m+1 = 15, busy
 *     cores or not, k as below.  On busy cores k = 8 sends one message in
 *     eight ticks, which saves the runtime's per-message work, and the
 *     layers hide spikes: real Jacobi under `cloud`, repl k=8 m=14 at 1.16x
 *     local with 2 processes and 1.33x with 4 on 2 cores (1.08x both
 *     without jitter), where local was chosen and reached 89% and 73% of it.
 *   - Cheap layers (rho <= 5%) and a STEP that leaves its core free (its
 *     CPU time under half its wall time: an emulated step cost, or work
 *     done elsewhere), cores not idle (busy >= 25%): combined, m+1 = 15,
 *     d = k = 8.  Sub-steps of later ticks then cost no core, and hide
 *     what a late round leaves: the paper regime on this machine's clock
 *     (49 processes, 1 ms emulated steps) ran combined d=8 k=8 m=14 at
 *     1.16x and 1.13x repl k=8 m=14 under `cloud` in two runs (1.07x and
 *     0.98x without jitter), where the earlier rules chose repl, or k=2
 *     m=1 without jitter, and reached 87% and 85% of the best.
 *   - the processes kept 70% of the cores busy or more: the waits are for a
 *     core, not for messages (more processes than cores), and layers or
 *     work ahead would only add compute; local.
 *   - n = ceil(w / s), the ticks of compute one wait covers, at most 14;
 *     ahead = n+1.  Replication lets a process run m+1 ticks past the last
 *     round it received, so m+1 = ahead covers the wait; lazily, layers cost
 *     compute only while the process would wait anyway, plus wider messages.
 *     A full set of layers should not outweigh the partition: m+1 at most
 *     1/rho (and at least 2).
 *   - Cheap layers (rho <= 5%, Jacobi): repl, k = (m+1)/2 + 1 — a message
 *     every k ticks instead of every tick, and m+1 < 2k, so layers are not
 *     widened past the next round start: with the cores half busy that
 *     speculation cost more than it hid (the paper regime: k=7 m=14 at
 *     0.63x of k=8 m=14, 18% more tuples stepped) — but k = 2 when the cores
 *     were idle (busy < 25%: Jacobi 400x400 5 ms late, k=2 m=14 at 1.3x of
 *     k=8 m=14) — unless the waits are spikes (the median tick waits
 *     under 60% of the mean): every message risks a spike, so a period
 *     of a third of the width sends fewer and still keeps layers to spare
 *     (the paper regime under `cloud`, virtual clock: k=5 m=14 at 1.21x of
 *     k=2 m=14, 1.27x of k=8 m=14, means of seeds 1-3) — and when the wait
 *     covers 4 ticks or more,
 *     m+1 = 15 (within 1/rho): fewer messages and more replicated ticks paid
 *     in every such case measured.  Scheduling is left out: computing inner regions of later ticks
 *     in pieces cost more than it hid in every measured case (Jacobi with
 *     combined d=8 k=8 m=14 at 0.4-0.8x of repl k=8 m=14).
 *   - Dearer layers: combined, d = ahead, k = 1 — but k = 2, m+1 = 4 when
 *     the waits are spikes and ahead >= 4: the fish school at the paper's
 *     scale (virtual clock, `cloud`, a layer 55% of a partition) ran at
 *     0.61x of the best hand-picked setting with k = 1, m = 1, and at
 *     0.99-1.02x over eight seeds with k = 2, m = 3.
 *   - rho >= 1 (a layer as big as the partition: the fish school's small
 *     partitions): no replication; sched, d = ahead, which computes ahead
 *     only the process's own tuples.
 * (Measured on this machine: docs/benchmarks.md, "The tick face".)
 * k must divide --repart-every: the largest such k up to the choice.
 */
#include <math.h>
#include "tick/tick_internal.h"

#define AUTO_MAX_AHEAD 15 /* m+1 and d at most */

void tess__tick_auto_choose(const tess_tick_calibration *c, int64_t repart_every,
                            tess_tick_alg *alg, int *depth, int *period, int *layers)
{
    *alg = TESS_TICK_LOCAL;
    *depth = 1, *period = 1, *layers = 0;
    double s = c->step_s > 0 ? c->step_s : 1e-9, w = c->wait_s;
    if (c->ticks <= 0 || !(w > s / 10)) return;
    int very_cheap = c->layer_ratio > 0 && c->layer_ratio * AUTO_MAX_AHEAD <= 0.1;
    int cheap = c->layer_ratio <= 0.05;
    int free_steps = cheap && c->step_cpu_share < 0.5 && c->busy >= 0.25;
    if (c->busy >= 0.7 && !very_cheap && !free_steps) return;
    double ticks = very_cheap || free_steps ? AUTO_MAX_AHEAD : ceil(w / s);
    int n = ticks < AUTO_MAX_AHEAD - 1 ? (int)ticks : AUTO_MAX_AHEAD - 1;
    int ahead = n + 1;
    if (c->layer_ratio >= 1.0) {
        *alg = TESS_TICK_SCHED;
        *depth = ahead;
        return;
    }
    /* A long wait with cheap layers: as wide as allowed (fewer messages and
     * more run-ahead both paid in every measured case). */
    int want = cheap && n >= 4 ? AUTO_MAX_AHEAD : ahead;
    int spiky = c->wait_median_s < 0.6 * w; /* rare long waits make most of the mean */
    int width = c->layer_ratio > 0 ? (int)floor(1.0 / c->layer_ratio) : want;
    if (width > want) width = want;
    if (width < 2) width = 2;
    *layers = width - 1;
    if (free_steps) {
        *alg = TESS_TICK_COMBINED;
        *period = *depth = width / 2 + 1 <= width ? width / 2 + 1 : width;
    } else if (cheap) {
        *alg = TESS_TICK_REPL;
        /* Idle cores make speculative layers free: a short period keeps
         * replica layers to spare for running ahead of a late round. */
        if (c->busy < 0.25 && width >= 4) *period = spiky && width >= 6 ? width / 3 : 2;
        else *period = width / 2 + 1 <= width ? width / 2 + 1 : width;
    } else {
        *alg = TESS_TICK_COMBINED;
        *depth = ahead;
        /* Spikes: lazy layers cost compute only while a spike holds the
         * process anyway, so a round every 2 ticks with layers to spare
         * (k = 2, m+1 = 4) pays even where a layer is dear. */
        if (spiky && want >= 4) *period = 2, *layers = 3;
    }
    while (repart_every > 0 && repart_every % *period != 0) (*period)--;
}
