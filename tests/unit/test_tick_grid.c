/*
 * test_tick_grid.c — the grid state class and the tick options: block
 * layouts and their errors; NEW, count, pack and merge over regions with
 * subtracted rectangles; STEP computing exactly the cells not yet held (the
 * runtime relies on "never a tuple twice"); malformed packed buffers; and the
 * option checks (k <= m+1, depth, repart multiple of the period).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_ctx.h"
#include <stdlib.h>
#include <string.h>

#include "tessera/tick_grid.h"

enum { ROWS = 12, COLS = 10 };
static int steps_of_cell[ROWS][COLS];

static double init_cell(void *user, int64_t r, int64_t c)
{
    (void)user;
    return (double)(r * 100 + c);
}

static void step_row(void *user, const tess_grid_view *u, int64_t r, int64_t c0, int64_t c1,
                     int64_t tick, double *out)
{
    (void)user, (void)tick;
    for (int64_t c = c0; c < c1; c++) {
        out[c - c0] = tess_grid_at(u, r, c) + 0.5;
        steps_of_cell[r][c]++;
    }
}

static tess_grid_fns fns = {.rows = ROWS, .cols = COLS, .init = init_cell, .step_row = step_row};
static tess_tick_app app = {.name = "t", .class_fns = &fns};

/* A context for the calls that report through one (no threads start). */
static tess_ctx *new_ctx(void) { return test_ctx(1); }

static tess_query rect(int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    return tess_grid_query((tess_grid_rect){r0, r1, c0, c1});
}

static void test_layout(void **state)
{
    (void)state;
    tess_query parts[6];
    tess_ctx *ctx = new_ctx();
    assert_int_equal(tess_grid_part_blocks(ctx, ROWS, COLS, 1, 6, parts), 0);
    /* The blocks tile the whole grid, ring included: every cell once. */
    int cover[ROWS][COLS] = {{0}};
    for (int p = 0; p < 6; p++) {
        tess_grid_rect r = tess_grid_rect_of(&parts[p]);
        for (int64_t i = r.r0; i < r.r1; i++)
            for (int64_t j = r.c0; j < r.c1; j++) cover[i][j]++;
    }
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) assert_int_equal(cover[i][j], 1);
    assert_int_equal(tess_grid_part_blocks(ctx, 3, 3, 1, 2, parts), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "smaller than"));
    tess_finalize(ctx);
}

static void test_grow_disjoint(void **state)
{
    (void)state;
    tess_query q = rect(0, 3, 4, 6), g;
    tess_grid_grow(&fns, 2, &q, &g);
    tess_grid_rect r = tess_grid_rect_of(&g);
    assert_true(r.r0 == 0 && r.r1 == 5 && r.c0 == 2 && r.c1 == 8); /* clipped at row 0 */
    tess_query a = rect(0, 2, 0, 2), b = rect(2, 4, 0, 2), c = rect(1, 3, 1, 3);
    assert_true(tess_grid_disjoint(&a, &b));
    assert_false(tess_grid_disjoint(&a, &c));
    /* RX shrinks: a side on the grid's edge stays (nothing beyond it to read). */
    tess_query s;
    q = rect(0, 6, 3, 8);
    tess_grid_shrink(&fns, 1, &q, &s);
    r = tess_grid_rect_of(&s);
    assert_true(r.r0 == 0 && r.r1 == 5 && r.c0 == 4 && r.c1 == 7);
    q = rect(4, 8, 0, COLS);
    tess_grid_shrink(&fns, 2, &q, &s);
    r = tess_grid_rect_of(&s);
    assert_true(r.r1 <= r.r0); /* rows 6..6: nothing left */
    q = rect(3, 9, 2, 9);
    tess_grid_shrink(&fns, 2, &q, &s);
    r = tess_grid_rect_of(&s);
    assert_true(r.r0 == 5 && r.r1 == 7 && r.c0 == 4 && r.c1 == 7);
    /* grow(shrink(Q)) stays inside Q: what RX keeps reads only Q. */
    tess_grid_grow(&fns, 2, &s, &g);
    r = tess_grid_rect_of(&g);
    assert_true(r.r0 >= 3 && r.r1 <= 9 && r.c0 >= 2 && r.c1 <= 9);
}

/* A radius-2 stencil: Table 1 from its radius alone, the same rectangles
 * as the grid helpers give. */
static void test_stencil_app(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx();
    tess_grid_stencil st = {.fns = fns, .radius = 2, .ring = 1};
    tess_tick_app a = {.name = "stencil"};
    assert_int_equal(tess_grid_stencil_app(ctx, &st, &a), 0);
    assert_ptr_equal(a.state, &tess_grid_class);
    assert_ptr_equal(a.user, &st);
    tess_query q = rect(3, 9, 2, 9), got, want;
    a.rd(a.user, &q, &got);
    tess_grid_grow(&fns, 2, &q, &want);
    assert_memory_equal(&got, &want, sizeof got);
    a.rx(a.user, &q, &got);
    tess_grid_shrink(&fns, 2, &q, &want);
    assert_memory_equal(&got, &want, sizeof got);
    a.wd(a.user, &q, &got);
    assert_memory_equal(&got, &q, sizeof got);
    a.wx(a.user, &q, &got);
    assert_memory_equal(&got, &q, sizeof got);
    tess_query b = rect(9, 12, 0, 10), parts[4], blocks[4];
    assert_true(a.disjoint(a.user, &q, &b));
    assert_int_equal(a.part(ctx, a.user, NULL, 4, parts), 0);
    assert_int_equal(tess_grid_part_blocks(ctx, ROWS, COLS, 1, 4, blocks), 0);
    assert_memory_equal(parts, blocks, sizeof parts);
    tess_grid_rect u = tess_grid_rect_of(&a.universe);
    assert_true(u.r0 == 0 && u.r1 == ROWS && u.c0 == 0 && u.c1 == COLS);
    st.radius = 0;
    assert_int_equal(tess_grid_stencil_app(ctx, &st, &a), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "radius must be >= 1"));
    tess_finalize(ctx);
}

static void test_regions_pack_merge(void **state)
{
    (void)state;
    tess_query own = rect(2, 8, 2, 8), hull = rect(0, ROWS, 0, COLS);
    void *st = tess_grid_class.create(&app, 2, &own, &hull);
    assert_non_null(st);
    tess_query neg[2] = {rect(3, 5, 3, 5), rect(4, 7, 4, 9)};
    tess_region r = {.npos = 1, .nneg = 2, .pos = &own, .neg = neg};
    assert_int_equal(tess_grid_class.init(st, 0, &r), 0);
    /* 36 cells minus the union of the subtracted rectangles inside own. */
    int expect = 0;
    for (int i = 2; i < 8; i++)
        for (int j = 2; j < 8; j++)
            expect += !((i >= 3 && i < 5 && j >= 3 && j < 5) || (i >= 4 && i < 7 && j >= 4));
    tess_region all = {.npos = 1, .pos = &hull};
    assert_int_equal(tess_grid_class.count(st, 0, &all), expect);
    tess_buf b = {0};
    assert_int_equal(tess_grid_class.pack(st, 0, &all, &b), 0);
    /* Merge into slot 1 keeping only rows 2..4. */
    tess_query keep = rect(2, 4, 0, COLS);
    tess_region kr = {.npos = 1, .pos = &keep};
    assert_int_equal(tess_grid_class.merge(st, 1, b.data, b.len, &kr), 0);
    assert_int_equal(tess_grid_class.count(st, 1, &all),
                     6 + 4); /* row 2: 6 cells; row 3: 6 minus 2 subtracted */
    /* The whole grid unpacked from slot 0 has the initial values where held. */
    double out[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) out[i] = -1;
    assert_int_equal(tess_grid_unpack(b.data, b.len, ROWS, COLS, out), 0);
    assert_true(out[2 * COLS + 2] == 202 && out[3 * COLS + 3] == -1);
    /* Malformed: a truncated record. */
    assert_int_equal(tess_grid_unpack(b.data, 5, ROWS, COLS, out), TESS_ERR_FORMAT);
    assert_int_equal(tess_grid_class.merge(st, 1, b.data, b.len - 3, NULL), TESS_ERR_FORMAT);
    tess_buf_free(&b);
    tess_grid_class.destroy(st);
}

static void test_step_never_twice(void **state)
{
    (void)state;
    memset(steps_of_cell, 0, sizeof steps_of_cell);
    tess_query hull = rect(0, ROWS, 0, COLS);
    void *st = tess_grid_class.create(&app, 2, &hull, &hull);
    tess_region all = {.npos = 1, .pos = &hull};
    assert_int_equal(tess_grid_class.init(st, 0, &all), 0);
    /* First the target minus two cones, then each cone piece as it is released. */
    tess_query cones[2] = {rect(0, 4, 0, 4), rect(6, 12, 5, 10)};
    tess_region part = {.npos = 1, .nneg = 2, .pos = &hull, .neg = cones};
    int64_t n1 = tess_grid_class.step(st, 0, 1, &part, 0);
    tess_query pos2[2] = {hull, cones[0]};
    tess_region piece = {.npos = 2, .nneg = 1, .pos = pos2, .neg = &cones[1]};
    int64_t n2 = tess_grid_class.step(st, 0, 1, &piece, 0);
    int64_t n3 = tess_grid_class.step(st, 0, 1, &all, 0);
    int64_t n4 = tess_grid_class.step(st, 0, 1, &all, 0);
    assert_int_equal(n1 + n2 + n3, ROWS * COLS);
    assert_int_equal(n2, 16);
    assert_int_equal(n4, 0);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) assert_int_equal(steps_of_cell[i][j], 1);
    tess_grid_class.clear(st, 1);
    assert_int_equal(tess_grid_class.count(st, 1, &all), 0);
    tess_grid_class.destroy(st);
}

static void test_options(void **state)
{
    (void)state;
    tess_tick_options o;
    tess_ctx *ctx = new_ctx();
    tess_tick_options_init(&o);
    o.ticks = 10;
    assert_int_equal(tess_tick_options_check(ctx, &o), 0);
    o.alg = TESS_TICK_REPL;
    o.period = 3;
    o.layers = 1;
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    assert_string_equal(tess_last_error(ctx), "period: 3 needs layers >= 2 (k <= m+1)");
    o.layers = 2;
    o.repart_every = 4;
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    o.repart_every = 6;
    assert_int_equal(tess_tick_options_check(ctx, &o), 0);
    o.depth = 0;
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    o.depth = 4; /* repl does not use depth */
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    assert_string_equal(tess_last_error(ctx),
                        "depth: 4 is for alg sched or combined, not repl (leave it at 1)");
    o.alg = TESS_TICK_COMBINED;
    assert_int_equal(tess_tick_options_check(ctx, &o), 0);
    o.alg = TESS_TICK_LOCAL;
    o.depth = 1;
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "period: only alg repl or combined uses it"));
    o.alg = TESS_TICK_AUTO;
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "auto chooses depth, period and layers"));
    o.alg = TESS_TICK_REPL;
    o.jitter = "lognormal:sigma=1";
    assert_int_equal(tess_tick_options_check(ctx, &o), TESS_ERR_INVAL);
    assert_string_equal(tess_last_error(ctx), "jitter: lognormal: median is required");
    tess_finalize(ctx);
    tess_tick_alg alg;
    assert_int_equal(tess_tick_alg_parse("combined", &alg), 0);
    assert_int_equal(alg, TESS_TICK_COMBINED);
    assert_string_equal(tess_tick_alg_name(TESS_TICK_SCHED), "sched");
    assert_int_equal(tess_tick_alg_parse("fast", &alg), TESS_ERR_INVAL);
}

int main(void)
{
    app.state = &tess_grid_class;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),           cmocka_unit_test(test_grow_disjoint),
        cmocka_unit_test(test_stencil_app),      cmocka_unit_test(test_regions_pack_merge),
        cmocka_unit_test(test_step_never_twice), cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
