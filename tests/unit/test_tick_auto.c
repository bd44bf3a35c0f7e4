/*
 * test_tick_auto.c — what `--alg auto` chooses (auto.c) from calibrations
 * worked out by hand: latency hidden or the cores busy (local), cheap
 * layers (repl: as wide as allowed for a long wait, k = 2 on idle cores
 * unless the waits are spikes (then k = a third of the width), else
 * m+1 < 2k), dear layers (combined, fewer of them, k = 1), layers as
 * big as the partition (sched), the caps, and a period that must divide
 * --repart-every.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"

#include "tick/tick_internal.h"

typedef struct choice {
    tess_tick_alg alg;
    int d, k, m;
} choice;

/* A calibration whose median tick waits `median_share` of the mean wait,
 * with a STEP that computes (step_cpu_share 1) or not (0). */
static choice choose_step(double step, double step_cpu_share, double wait, double median_share,
                          double layer, double busy, int64_t repart)
{
    tess_tick_calibration c = {.ticks = 20,
                               .step_s = step,
                               .wait_s = wait,
                               .wait_median_s = wait * median_share,
                               .layer_ratio = layer,
                               .busy = busy,
                               .step_cpu_share = step_cpu_share};
    choice x;
    tess__tick_auto_choose(&c, repart, &x.alg, &x.d, &x.k, &x.m);
    return x;
}

static choice choose_waits(double step, double wait, double median_share, double layer, double busy,
                           int64_t repart)
{
    return choose_step(step, 1.0, wait, median_share, layer, busy, repart);
}

/* Steady waits: every tick waits about the mean. */
static choice choose(double step, double wait, double layer, double busy, int64_t repart)
{
    return choose_waits(step, wait, 1.0, layer, busy, repart);
}

static void expect(choice x, tess_tick_alg alg, int d, int k, int m)
{
    assert_int_equal(x.alg, alg);
    assert_int_equal(x.d, d);
    assert_int_equal(x.k, k);
    assert_int_equal(x.m, m);
}

static void test_choices(void **state)
{
    (void)state;
    /* Latency below a tenth of STEP, or the cores busy: local. */
    expect(choose(1e-3, 5e-5, 0.01, 0.1, 0), TESS_TICK_LOCAL, 1, 1, 0);
    expect(choose(1e-4, 3e-4, 0.01, 0.9, 0), TESS_TICK_LOCAL, 1, 1, 0);
    /* Jacobi 400x400 on 4 workers, 5 ms late: 0.13 ms of STEP, n = 39 ticks
     * capped at 14; layers of 1%, idle cores: repl, m = 14, k = 2. */
    expect(choose(1.3e-4, 5.2e-3, 0.01, 0.05, 0), TESS_TICK_REPL, 1, 2, 14);
    /* The paper regime on the virtual clock under `cloud`: 1 ms STEP, a
     * mean wait of 7.3 ms but a median tick of 2.9 ms (spikes), 11% busy:
     * m+1 = 15 and k = 5, a third of it; just under 60% is still spikes,
     * at 60% the waits count as steady (k = 2). */
    expect(choose_waits(1e-3, 7.3e-3, 0.40, 0.04, 0.11, 0), TESS_TICK_REPL, 1, 5, 14);
    expect(choose_waits(1e-3, 7.3e-3, 0.59, 0.04, 0.11, 0), TESS_TICK_REPL, 1, 5, 14);
    expect(choose_waits(1e-3, 7.3e-3, 0.60, 0.04, 0.11, 0), TESS_TICK_REPL, 1, 2, 14);
    /* The same with a re-partitioning every 9 ticks: k = 1 divides it. */
    expect(choose(1.3e-4, 5.2e-3, 0.01, 0.05, 9), TESS_TICK_REPL, 1, 1, 14);
    /* The paper regime (49 emulated processes, cores half busy): n = 5, so
     * m+1 = 15, and k = 15/2 + 1 = 8: nothing widened past the next round. */
    expect(choose(1.6e-3, 7.9e-3, 0.04, 0.5, 0), TESS_TICK_REPL, 1, 8, 14);
    /* Fish, 3200 on 4 workers: 2.2 ms STEP, 5.7 ms wait -> n = 3, ahead 4;
     * a layer adds 30%: m+1 = floor(1/0.3) = 3, k = 1. */
    expect(choose(2.2e-3, 5.7e-3, 0.30, 0.37, 0), TESS_TICK_COMBINED, 4, 1, 2);
    /* A wait of 1.5 ticks: ahead 3 (n = 2), cheap layers: m+1 = 3, k = 2. */
    expect(choose(1e-3, 1.5e-3, 0.02, 0.3, 0), TESS_TICK_REPL, 1, 2, 2);
    /* Dear layers still get two (one replica layer). */
    expect(choose(1e-3, 9e-3, 0.8, 0.3, 0), TESS_TICK_COMBINED, 10, 1, 1);
    /* The fish school at the paper's scale on the virtual clock under
     * `cloud` (seed 1's calibration): 1 ms emulated STEP, a mean wait of
     * 6.5 ms and a median of 2.5 (spikes), a layer 55% of the partition,
     * 11% busy: combined d = 8 with k = 2, m = 3 (spikes pay for lazy dear
     * layers), not m+1 = floor(1/0.55) = 2; steady waits keep that rule.
     * Re-partitioning every 60 ticks keeps k = 2; every 9, k = 1. */
    expect(choose_step(1e-3, 0.0, 6.5e-3, 0.38, 0.55, 0.11, 60), TESS_TICK_COMBINED, 8, 2, 3);
    expect(choose_step(1e-3, 0.0, 6.5e-3, 0.38, 0.55, 0.11, 9), TESS_TICK_COMBINED, 8, 1, 3);
    expect(choose_step(1e-3, 0.0, 6.5e-3, 1.0, 0.55, 0.11, 60), TESS_TICK_COMBINED, 8, 1, 1);
    /* ... and a wait of two ticks or less (ahead < 4) keeps it too. */
    expect(choose_step(1e-3, 0.0, 2e-3, 0.38, 0.55, 0.11, 60), TESS_TICK_COMBINED, 3, 1, 1);
    /* A layer as big as the partition (fish, 50 per worker): sched. */
    expect(choose(1e-3, 2e-3, 1.6, 0.3, 0), TESS_TICK_SCHED, 3, 1, 0);
    /* Real Jacobi, 1000x1000 per process: 15 layers add 6%.  Busy cores,
     * a wait of a quarter STEP: repl, m+1 = 15, k = 8; the same on idle
     * cores with spiky waits: k = 5.  A wait under a tenth of STEP: local. */
    expect(choose(2e-3, 5e-4, 0.004, 0.9, 0), TESS_TICK_REPL, 1, 8, 14);
    expect(choose(2e-3, 5e-4, 0.004, 0.5, 0), TESS_TICK_REPL, 1, 8, 14);
    expect(choose_waits(2e-3, 5e-4, 0.3, 0.004, 0.1, 0), TESS_TICK_REPL, 1, 5, 14);
    expect(choose(2e-3, 1.9e-4, 0.004, 0.9, 0), TESS_TICK_LOCAL, 1, 1, 0);
    /* The paper regime on this machine's clock: emulated 1 ms steps (no
     * CPU), layers of 4%.  Under `cloud` (spiky waits, 39% busy) and
     * without jitter (a wait of half a STEP, 69% or 75% busy): combined,
     * d = k = 8, m = 14.  On the virtual clock (11% busy): repl as above. */
    expect(choose_step(1.2e-3, 0.0, 7.4e-3, 0.41, 0.04, 0.39, 0), TESS_TICK_COMBINED, 8, 8, 14);
    expect(choose_step(1.2e-3, 0.0, 6.7e-4, 0.72, 0.04, 0.69, 0), TESS_TICK_COMBINED, 8, 8, 14);
    expect(choose_step(1.2e-3, 0.0, 6.7e-4, 0.72, 0.04, 0.75, 0), TESS_TICK_COMBINED, 8, 8, 14);
    expect(choose_step(1e-3, 0.0, 7.3e-3, 0.40, 0.04, 0.11, 0), TESS_TICK_REPL, 1, 5, 14);
    /* ... but not with dear layers (fish): the busy cores rule. */
    expect(choose_step(1e-3, 0.0, 6.7e-4, 0.72, 0.30, 0.75, 0), TESS_TICK_LOCAL, 1, 1, 0);
    /* No calibration (0 ticks): local. */
    tess_tick_calibration none = {0};
    choice x;
    tess__tick_auto_choose(&none, 0, &x.alg, &x.d, &x.k, &x.m);
    expect(x, TESS_TICK_LOCAL, 1, 1, 0);
}

TEST_MAIN(cmocka_unit_test(test_choices))
