/*
 * throttle.c — the --slow-worker throttle (tess_config.slow_rank and
 * slow_factor): the slowed rank stretches each piece of its work, so tests
 * and benchmarks get a heterogeneous machine out of a homogeneous one.  It
 * lives in core because every layer that does work on the rank stretches
 * it: the workers (sched), the flushes (sched) and the progress engine's
 * message handling (comm).
 */
#include <time.h>
#include "internal.h"

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Burn the core until `until`: a slower core would not give it away. */
static void spin_until(double until)
{
    while (tess_now() < until) {
        for (volatile int i = 0; i < 256; i++) {
        }
    }
}

void tess__throttle(tess_ctx *ctx, double started)
{
    if (ctx->cfg.slow_rank != ctx->rank || !(ctx->cfg.slow_factor > 1.0)) return;
    double extra = (ctx->cfg.slow_factor - 1.0) * (tess_now() - started);
    if (ctx->cfg.slow_sleep) sleep_seconds(extra);
    else spin_until(tess_now() + extra);
}
