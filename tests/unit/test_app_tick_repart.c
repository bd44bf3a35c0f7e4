/*
 * test_app_tick_repart.c — re-partitioning with a PART that does not
 * partition the universe.  With --repart-every N the runtime splits the
 * state of tick N with the queries PART made from tick N - N/2, so PART's
 * queries must hold every place a tuple can be.  A PART that leaves gaps
 * between its rectangles (good the first time, so that the run starts)
 * must stop the run with an error naming PART, not lose the fish in the
 * gaps; the same run with the fish school's own PART succeeds and keeps
 * every fish.  At a re-partitioning PART runs once, on process 0, on the
 * whole snapshot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdatomic.h>
#include <cmocka.h>

#include "test_main.h"

#include "test_ctx.h"
#include "fish/fish.h"

#define FISH 400
#define WORKERS 4

/* Each tick process calls PART on its own thread: once at the start, then
 * at each re-partitioning. */
static __thread int part_calls;

static int gappy_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts)
{
    int rc = fish_part(ctx, user, snapshot, n, parts);
    if (rc != 0 || part_calls++ == 0) return rc;
    for (int i = 0; i < n; i++) /* a 2-wide gap along every inner edge */
        fish_shrink(&parts[i], 1.0, &parts[i]);
    return 0;
}

/* A PART that fails at the re-partitioning (good the first time). */
static int failing_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts)
{
    static __thread int calls;
    if (calls++ == 0) return fish_part(ctx, user, snapshot, n, parts);
    return tess_set_error(ctx, TESS_ERR_INVAL, "fish PART: no room for the school");
}

/* Every PART call, and those that saw the whole school. */
static atomic_int parts_called, parts_whole;

static int counting_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts)
{
    const tess_particles_view *v = snapshot;
    atomic_fetch_add(&parts_called, 1);
    if (v != NULL && v->count == FISH) atomic_fetch_add(&parts_whole, 1);
    return fish_part(ctx, user, snapshot, n, parts);
}

typedef struct run_case {
    tess_tick_app app;
    int rc;
    char error[256];
    size_t final_bytes;
} run_case;

static int control(tess_ctx *ctx, void *arg)
{
    run_case *c = arg;
    tess_tick_options o;
    tess_tick_options_init(&o);
    o.ticks = 12;
    o.repart_every = 4;
    tess_tick_result res;
    c->rc = tess_tick_run(ctx, &c->app, &o, &res);
    if (c->rc != 0) {
        snprintf(c->error, sizeof c->error, "%s", tess_last_error(ctx));
        return 0;
    }
    c->final_bytes = res.final_state.len;
    tess_tick_result_free(&res);
    return 0;
}

static void run(int (*part)(tess_ctx *, void *, const void *, int, tess_query *), run_case *c)
{
    fish_params prm;
    fish_params_default(&prm);
    fish_model model;
    fish_model_init(&model, &prm, FISH, 0.1);
    tess_particle_fns fns;
    memset(c, 0, sizeof *c);
    c->app = fish_tick_app(&model, &fns, part);
    tess_ctx *ctx = test_ctx(WORKERS);
    assert_int_equal(tess_tick_register(ctx, &c->app), 0);
    assert_int_equal(tess_main(ctx, control, c), 0);
    tess_finalize(ctx);
}

static void test_gaps_stop_the_run(void **state)
{
    (void)state;
    run_case c;
    run(gappy_part, &c);
    assert_int_not_equal(c.rc, 0);
    if (strstr(c.error, "PART") == NULL) fail_msg("error without PART: '%s'", c.error);
    print_message("the error: %s\n", c.error);
}

static void test_own_part_keeps_every_fish(void **state)
{
    (void)state;
    run_case c;
    run(fish_part, &c);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.final_bytes, (size_t)FISH * TESS_PARTICLE_BYTES);
}

/* 12 ticks, re-partitioning every 4: at the start every process calls PART
 * (no message yet), at ticks 4 and 8 only process 0 (it sends the queries;
 * the n calls each re-partitioning made before were n copies of the
 * snapshot merged for one answer). */
static void test_part_runs_once_per_repartition(void **state)
{
    (void)state;
    run_case c;
    atomic_store(&parts_called, 0);
    atomic_store(&parts_whole, 0);
    run(counting_part, &c);
    assert_int_equal(c.rc, 0);
    assert_int_equal(c.final_bytes, (size_t)FISH * TESS_PARTICLE_BYTES);
    assert_int_equal(atomic_load(&parts_called), WORKERS + 2);
    assert_int_equal(atomic_load(&parts_whole), WORKERS + 2);
}

/* Only process 0 calls PART at a re-partitioning: its failure must stop
 * every process (they wait for its queries), with PART's own message. */
static void test_failing_part_stops_every_process(void **state)
{
    (void)state;
    run_case c;
    run(failing_part, &c);
    assert_int_not_equal(c.rc, 0);
    if (strstr(c.error, "no room for the school") == NULL)
        fail_msg("error without PART's message: '%s'", c.error);
}

TEST_MAIN(cmocka_unit_test(test_gaps_stop_the_run),
          cmocka_unit_test(test_failing_part_stops_every_process),
          cmocka_unit_test(test_own_part_keeps_every_fish),
          cmocka_unit_test(test_part_runs_once_per_repartition))
