/*
 * test_app_fish_part.c — the fish school's Table-1 functions as the paper
 * defines them: RD and WD grow a rectangle, RX and WX shrink it, and the
 * runtime's compositions stay on the safe side under rounding — growing a
 * shrunk rectangle by the same distance never leaves the original (what RX
 * keeps reads only fish inside it), for random rectangles near the origin
 * and far from it, where a rounding error is largest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "test_main.h"
#include "fish/fish.h"

static tess_particle_rect rect_of(const tess_query *q) { return tess_particle_rect_of(q); }

static int inside(tess_particle_rect a, tess_particle_rect b) /* a within b */
{
    return a.x0 >= b.x0 && a.x1 <= b.x1 && a.y0 >= b.y0 && a.y1 <= b.y1;
}

static double uniform(uint64_t *s) /* [0, 1) */
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1p-53;
}

static void test_grow_and_shrink(void **state)
{
    (void)state;
    fish_model m = {.p = {.rho = 6.0}, .reach = 0.2};
    tess_query q = tess_particle_query((tess_particle_rect){0, 100, -50, 50}), out;
    fish_rd(&m, &q, &out);
    tess_particle_rect r = rect_of(&out);
    assert_true(r.x0 < -6.0 && r.x0 > -6.001 && r.x1 > 106.0 && r.x1 < 106.001);
    fish_rx(&m, &q, &out);
    r = rect_of(&out);
    assert_true(r.x0 > 6.0 && r.x0 < 6.001 && r.x1 < 94.0 && r.x1 > 93.999);
    assert_true(r.y0 > -44.0 && r.y1 < 44.0);
    fish_wx(&m, &q, &out);
    r = rect_of(&out);
    assert_true(r.x0 > 0.2 && r.x1 < 99.8);
    /* Shrunk past nothing: empty, and disjoint from everything. */
    q = tess_particle_query((tess_particle_rect){0, 10, 0, 10});
    fish_rx(&m, &q, &out);
    assert_true(fish_disjoint(&m, &out, &q));
    /* Infinite sides stay infinite. */
    q = tess_particle_query((tess_particle_rect){-INFINITY, 0, -INFINITY, INFINITY});
    fish_rx(&m, &q, &out);
    r = rect_of(&out);
    assert_true(isinf(r.x0) && r.x1 < -6.0 && isinf(r.y0) && isinf(r.y1));
}

/* grow(shrink(Q, d), d) within Q, and shrink(grow(Q, d), d) around Q's inside. */
static void test_compositions_stay_safe(void **state)
{
    (void)state;
    uint64_t s = 42;
    for (int i = 0; i < 20000; i++) {
        double scale = i % 3 == 0 ? 1.0 : i % 3 == 1 ? 1e4 : 1e9;
        double x0 = (uniform(&s) - 0.5) * scale, y0 = (uniform(&s) - 0.5) * scale;
        double w = uniform(&s) * scale + 1e-3, h = uniform(&s) * scale + 1e-3;
        double d = uniform(&s) * 10.0;
        tess_query q = tess_particle_query((tess_particle_rect){x0, x0 + w, y0, y0 + h}), a, b;
        fish_shrink(&q, d, &a);
        if (!fish_disjoint(NULL, &a, &a)) { /* not empty */
            fish_grow(&a, d, &b);
            assert_true(inside(rect_of(&b), rect_of(&q)));
        }
    }
}

TEST_MAIN(cmocka_unit_test(test_grow_and_shrink), cmocka_unit_test(test_compositions_stay_safe))
