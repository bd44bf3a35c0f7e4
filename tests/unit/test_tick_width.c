/*
 * test_tick_width.c — the WIDTH bookkeeping of lazy replication (width.c)
 * against a schedule worked out by hand: with W = m+1 = 4 and k = 2, from a
 * base round at tick 0, which replica layer each piece computes, how far the
 * process can step ahead of the next round, and what changes when the next
 * round arrives.  A piece "v:w" raises version v to width w.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"
#include <stdio.h>
#include <string.h>

#include "tick/tick_internal.h"

enum { MAXV = 32 };
static int width[MAXV];

static int width_of(void *arg, int64_t v)
{
    (void)arg;
    return v >= 0 && v < MAXV ? width[v] : -1;
}

static int full(const tick_widths *t, int64_t v) { return width[v] >= tess__tick_width_std(t, v); }

/* Step ahead as the process loop does while waiting: the goal is the first
 * version after the base that is not full; apply pieces until none is left.
 * The pieces, "v:w v:w ...", go to out. */
static void run_ahead(const tick_widths *t, char *out, size_t cap)
{
    out[0] = '\0';
    for (;;) {
        int64_t goal = t->base + 1;
        while (goal < MAXV && full(t, goal)) goal++;
        int64_t v;
        int w;
        if (!tess__tick_width_next(t, goal, width_of, NULL, &v, &w)) return;
        assert_true(w > width[v]);
        /* what a piece reads is there: the base or a wider version before it */
        assert_true(v - 1 == t->base || width[v - 1] >= w + 1);
        width[v] = w;
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%lld:%d", len ? " " : "", (long long)v, w);
    }
}

static void reset_widths(void)
{
    for (int v = 0; v < MAXV; v++) width[v] = -1;
}

static void test_standard_widths(void **state)
{
    (void)state;
    tick_widths t = {.W = 4, .k = 3, .epoch_start = 6, .base = 6};
    assert_int_equal(tess__tick_width_std(&t, 7), 2);
    assert_int_equal(tess__tick_width_std(&t, 8), 1);
    assert_int_equal(tess__tick_width_std(&t, 9), 0);
    assert_int_equal(tess__tick_width_std(&t, 10), 2);
    assert_int_equal(tess__tick_width_round_at_or_after(&t, 10), 12);
    assert_int_equal(tess__tick_width_round_at_or_after(&t, 12), 12);
}

static void test_schedule_by_hand(void **state)
{
    (void)state;
    char pieces[256];
    reset_widths();
    tick_widths t = {.W = 4, .k = 2, .epoch_start = 0, .base = 0};
    width[0] = 4; /* round 0 arrived from every neighbour */

    /* Round 2 is late: tick 1 at width 1, tick 2 (the next round start) at
     * 0; then the layers tick 3 needs, lowest first (1 to 3, 2 to 2), tick 3
     * at its standard width 1, tick 4 at 0 — four ticks past the base, and
     * no further: tick 5 needs width 6 at the base. */
    run_ahead(&t, pieces, sizeof pieces);
    assert_string_equal(pieces, "1:1 2:0 1:3 2:2 3:1 4:0");

    /* Round 2 arrives: it becomes the base at width 4, and the process
     * widens 3 and 4 from it and runs on to tick 6. */
    t.base = 2;
    width[2] = 4;
    run_ahead(&t, pieces, sizeof pieces);
    assert_string_equal(pieces, "3:3 4:2 5:1 6:0");

    /* Round 4 arrives after 6 was computed: nothing to redo, and 7 and 8 follow. */
    t.base = 4;
    width[4] = 4;
    run_ahead(&t, pieces, sizeof pieces);
    assert_string_equal(pieces, "5:3 6:2 7:1 8:0");
}

static void test_no_room_beyond_the_period(void **state)
{
    (void)state;
    char pieces[256];
    /* W = k: the versions of the round only, the next round start last. */
    reset_widths();
    tick_widths t = {.W = 3, .k = 3, .epoch_start = 0, .base = 0};
    width[0] = 3;
    run_ahead(&t, pieces, sizeof pieces);
    assert_string_equal(pieces, "1:2 2:1 3:0");
    /* W = 3, k = 2: tick 3 would need width 4 at the base, so the process
     * stops at the round start 2. */
    reset_widths();
    t = (tick_widths){.W = 3, .k = 2, .epoch_start = 0, .base = 0};
    width[0] = 3;
    run_ahead(&t, pieces, sizeof pieces);
    assert_string_equal(pieces, "1:1 2:0");
    /* No base yet (round 0 not in): nothing. */
    reset_widths();
    t.base = -1;
    run_ahead(&t, pieces, sizeof pieces);
    assert_string_equal(pieces, "");
}

TEST_MAIN(cmocka_unit_test(test_standard_widths), cmocka_unit_test(test_schedule_by_hand),
          cmocka_unit_test(test_no_room_beyond_the_period))
