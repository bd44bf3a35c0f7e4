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

/* ---- the class against a cell-by-cell model (its fast paths included) ---- */

typedef struct model {
    tess_grid_rect hull;
    int held[2][ROWS][COLS];
    double val[2][ROWS][COLS];
} model;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static int64_t rnd(int64_t n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (int64_t)((rng_state >> 33) % (uint64_t)n);
}

/* A rectangle that may be empty, may reach past the grid, is often narrow
 * (so that runs touch the intervals a row holds) and often a halo row or
 * column. */
static tess_query random_rect(void)
{
    int64_t r0 = rnd(ROWS + 2) - 1, c0 = rnd(COLS + 2) - 1;
    int64_t r1 = r0 + rnd(ROWS), c1 = c0 + (rnd(2) ? rnd(COLS) : 1 + rnd(3));
    switch (rnd(6)) {
    case 0: c1 = c0 + 1; break; /* a halo column */
    case 1: r1 = r0 + 1; break; /* a halo row */
    default: break;
    }
    return rect(r0, r1, c0, c1);
}

static tess_query rpos[3], rneg[4];

static tess_region random_region(void)
{
    tess_region r = {
        .npos = 1 + (int)rnd(2), .nneg = (int)rnd(4) * (rnd(2) == 0), .pos = rpos, .neg = rneg};
    for (int i = 0; i < r.npos; i++) rpos[i] = random_rect();
    for (int i = 0; i < r.nneg; i++) rneg[i] = random_rect();
    return r;
}

static int in_rect(const tess_query *q, int64_t r, int64_t c)
{
    tess_grid_rect x = tess_grid_rect_of(q);
    return r >= x.r0 && r < x.r1 && c >= x.c0 && c < x.c1;
}

static int in_region(const model *m, const tess_region *g, int64_t r, int64_t c)
{
    tess_grid_rect h = m->hull;
    if (r < h.r0 || r >= h.r1 || c < h.c0 || c >= h.c1) return 0;
    for (int i = 0; i < g->npos; i++)
        if (!in_rect(&g->pos[i], r, c)) return 0;
    for (int i = 0; i < g->nneg; i++)
        if (in_rect(&g->neg[i], r, c)) return 0;
    return 1;
}

/* The packed form the model gives: per row, the maximal runs of held cells
 * in g; a run continues the last block when it has its columns. */
static void model_pack(const model *m, int s, const tess_region *g, tess_buf *out)
{
    int64_t last = -1, lr1 = -1, lc0 = -1, lc1 = -1;
    for (int64_t r = 0; r < ROWS; r++)
        for (int64_t c = 0; c < COLS;) {
            if (!(in_region(m, g, r, c) && m->held[s][r][c])) {
                c++;
                continue;
            }
            int64_t e = c;
            while (e < COLS && in_region(m, g, r, e) && m->held[s][r][e]) e++;
            if (r == lr1 && c == lc0 && e == lc1) {
                int64_t r1 = r + 1;
                memcpy(out->data + last + sizeof r1, &r1, sizeof r1);
            } else {
                int64_t head[4] = {r, r + 1, c, e};
                last = (int64_t)out->len;
                assert_int_equal(tess_buf_append(out, head, sizeof head), 0);
            }
            assert_int_equal(
                tess_buf_append(out, &m->val[s][r][c], (size_t)(e - c) * sizeof(double)), 0);
            lr1 = r + 1, lc0 = c, lc1 = e;
            c = e;
        }
}

/* A block of values, row-major, that merge() takes. */
static void put_block(tess_buf *b, tess_grid_rect x, double tag)
{
    int64_t head[4] = {x.r0, x.r1, x.c0, x.c1};
    assert_int_equal(tess_buf_append(b, head, sizeof head), 0);
    for (int64_t r = x.r0; r < x.r1; r++)
        for (int64_t c = x.c0; c < x.c1; c++) {
            double v = (double)(r * 100 + c) + tag;
            assert_int_equal(tess_buf_append(b, &v, sizeof v), 0);
        }
}

static void random_block(tess_buf *b, double tag)
{
    tess_grid_rect x;
    do {
        tess_query q = random_rect();
        x = tess_grid_rect_of(&q);
    } while (x.r0 < 0 || x.c0 < 0 || x.r1 <= x.r0 || x.c1 <= x.c0);
    put_block(b, x, tag);
}

static void model_merge(model *m, int s, const void *data, size_t len, const tess_region *g)
{
    const unsigned char *p = data;
    while (len > 0) {
        int64_t h[4];
        memcpy(h, p, sizeof h);
        p += sizeof h, len -= sizeof h;
        for (int64_t r = h[0]; r < h[1]; r++)
            for (int64_t c = h[2]; c < h[3]; c++, p += sizeof(double), len -= sizeof(double)) {
                int in = r < ROWS && c < COLS &&
                         (g ? in_region(m, g, r, c) : in_region(m, &(tess_region){0}, r, c));
                if (in && !m->held[s][r][c]) {
                    memcpy(&m->val[s][r][c], p, sizeof(double));
                    m->held[s][r][c] = 1;
                }
            }
    }
}

/* Packing the whole hull of both slots gives the model's bytes. */
static void check_same(void *st, const model *m, tess_query *hull)
{
    tess_region all = {.npos = 1, .pos = hull};
    for (int s = 0; s < 2; s++) {
        tess_buf got = {0}, want = {0};
        assert_int_equal(tess_grid_class.pack(st, s, &all, &got), 0);
        model_pack(m, s, &all, &want);
        assert_int_equal(got.len, want.len);
        if (got.len) assert_memory_equal(got.data, want.data, got.len);
        tess_buf_free(&got);
        tess_buf_free(&want);
    }
}

static void random_ops(tess_query own, tess_query hull)
{
    model m = {.hull = tess_grid_rect_of(&hull)};
    void *st = tess_grid_class.create(&app, 2, &own, &hull);
    assert_non_null(st);
    for (int op = 0; op < 400; op++) {
        int s = (int)rnd(2);
        tess_region g = random_region();
        int which = (int)rnd(12);
        if (which < 1) { /* NEW */
            assert_int_equal(tess_grid_class.init(st, s, &g), 0);
            for (int64_t r = 0; r < ROWS; r++)
                for (int64_t c = 0; c < COLS; c++)
                    if (in_region(&m, &g, r, c) && !m.held[s][r][c]) {
                        m.held[s][r][c] = 1;
                        m.val[s][r][c] = init_cell(NULL, r, c);
                    }
        } else if (which < 5) { /* a received block, kept where in g or everywhere */
            tess_buf b = {0};
            random_block(&b, 0.25 * op);
            if (rnd(2)) random_block(&b, 0.5 * op);
            const tess_region *keep = rnd(2) ? &g : NULL;
            assert_int_equal(tess_grid_class.merge(st, s, b.data, b.len, keep), 0);
            model_merge(&m, s, b.data, b.len, keep);
            tess_buf_free(&b);
        } else if (which < 7) { /* pack and count */
            tess_buf got = {0}, want = {0};
            assert_int_equal(tess_grid_class.pack(st, s, &g, &got), 0);
            model_pack(&m, s, &g, &want);
            assert_int_equal(got.len, want.len);
            if (got.len) assert_memory_equal(got.data, want.data, got.len);
            int64_t n = 0;
            for (int64_t r = 0; r < ROWS; r++)
                for (int64_t c = 0; c < COLS; c++) n += in_region(&m, &g, r, c) && m.held[s][r][c];
            assert_int_equal(tess_grid_class.count(st, s, &g), n);
            tess_buf_free(&got);
            tess_buf_free(&want);
        } else if (which < 9) { /* STEP into s from the other slot: the cells it lacks */
            tess_region all = {.npos = 1, .pos = &hull}; /* what STEP reads is held */
            assert_int_equal(tess_grid_class.init(st, 1 - s, &all), 0);
            for (int64_t r = m.hull.r0; r < m.hull.r1; r++)
                for (int64_t c = m.hull.c0; c < m.hull.c1; c++)
                    if (!m.held[1 - s][r][c]) {
                        m.held[1 - s][r][c] = 1;
                        m.val[1 - s][r][c] = init_cell(NULL, r, c);
                    }
            int64_t n = 0;
            for (int64_t r = 0; r < ROWS; r++)
                for (int64_t c = 0; c < COLS; c++)
                    if (in_region(&m, &g, r, c) && !m.held[s][r][c]) {
                        m.held[s][r][c] = 1;
                        m.val[s][r][c] = m.val[1 - s][r][c] + 0.5;
                        n++;
                    }
            assert_int_equal(tess_grid_class.step(st, 1 - s, s, &g, op), n);
        } else if (which < 10) { /* a block, then its halo: runs that touch, a gap closed */
            tess_grid_class.clear(st, s);
            memset(m.held[s], 0, sizeof m.held[s]);
            int64_t r0 = 1 + rnd(ROWS - 4), c0 = 1 + rnd(COLS - 5);
            int64_t r1 = r0 + 1 + rnd(2), c1 = c0 + 1 + rnd(2);
            tess_query q = rect(r0, r1, c0, c1);
            tess_region o = {.npos = 1, .pos = &q};
            tess_buf b = {0};
            put_block(&b, (tess_grid_rect){r0, r1, c0, c1}, 0);
            assert_int_equal(tess_grid_class.merge(st, s, b.data, b.len, rnd(2) ? &o : NULL), 0);
            model_merge(&m, s, b.data, b.len, NULL);
            tess_grid_rect frame[5] = {{r0, r1, c1 + 1, c1 + 2}, /* leaves a gap at c1 */
                                       {r0, r1, c0 - 1, c0},
                                       {r0, r1, c1, c1 + 1}, /* closes it */
                                       {r0 - 1, r0, c0 - 1, c1 + 2},
                                       {r1, r1 + 1, c0 - 1, c1 + 2}};
            for (int f = 0; f < 5; f++) {
                b.len = 0;
                put_block(&b, frame[f], 0.125 * f);
                assert_int_equal(tess_grid_class.merge(st, s, b.data, b.len, NULL), 0);
                model_merge(&m, s, b.data, b.len, NULL);
            }
            tess_buf_free(&b);
        } else { /* clear (often: sparse rows take the gap paths) */
            tess_grid_class.clear(st, s);
            memset(m.held[s], 0, sizeof m.held[s]);
        }
        check_same(st, &m, &hull);
    }
    tess_grid_class.destroy(st);
}

/* Partial presence, several intervals a row, rectangles at the grid's and
 * the hull's edges, halo rows and columns: pack, merge, count, NEW and
 * STEP agree with the model cell for cell, packed bytes included. */
static void test_against_model(void **state)
{
    (void)state;
    random_ops(rect(2, 8, 2, 8), rect(0, ROWS, 0, COLS));
    random_ops(rect(3, 7, 3, 6), rect(2, 8, 2, 7)); /* a hull inside the grid */
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
        cmocka_unit_test(test_step_never_twice), cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
