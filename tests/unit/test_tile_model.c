/*
 * test_tile_model.c — the tiles face's planning arithmetic against
 * hand-worked examples: Algorithm 2's shares and finish time, the
 * performance model's rates and best size, and the bootstrap's doubling.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include "tile/model.h"

static void check_shares(int n, const double *rate, const double *queued, uint64_t work,
                         const uint64_t *want, double want_t)
{
    uint64_t got[8];
    double t = tess__tile_allocate(n, rate, queued, work, got);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(got[i], want[i]);
        sum += got[i];
    }
    assert_int_equal(sum, work);
    assert_true(fabs(t - want_t) < 1e-9);
}

/* Equal processors with empty queues split the work equally; a processor
 * three times as fast gets three times the work: T = W / sum r. */
static void test_allocate_empty_queues(void **state)
{
    (void)state;
    check_shares(2, (double[]){1, 1}, (double[]){0, 0}, 100, (uint64_t[]){50, 50}, 50);
    check_shares(2, (double[]){3, 1}, (double[]){0, 0}, 100, (uint64_t[]){75, 25}, 25);
}

/* Processor 1 already has 30 s queued: 20 cells at rate 1 end at T = 20,
 * before its queue does, so it gets nothing. */
static void test_allocate_long_queue_gets_nothing(void **state)
{
    (void)state;
    check_shares(2, (double[]){1, 1}, (double[]){0, 30}, 20, (uint64_t[]){20, 0}, 20);
}

/* Rates 2 and 1, queues 5 s and 0 s, 40 cells: both take part, T =
 * (40 + 2*5 + 1*0) / 3 = 16.67; exact shares 2*(16.67-5) = 23.33 and 16.67;
 * whole cells 23 + 16 = 39, the last cell to the larger fraction (0.67). */
static void test_allocate_water_filling(void **state)
{
    (void)state;
    check_shares(2, (double[]){2, 1}, (double[]){5, 0}, 40, (uint64_t[]){23, 17}, 50.0 / 3.0);
}

/* Unknown rates (0) get nothing while another rate is known; with none
 * known the work is split equally, remainder to the first. */
static void test_allocate_unknown_rates(void **state)
{
    (void)state;
    check_shares(2, (double[]){1, 0}, (double[]){0, 0}, 10, (uint64_t[]){10, 0}, 10);
    uint64_t got[3];
    tess__tile_allocate(3, (double[]){0, 0, 0}, (double[]){0, 0, 0}, 10, got);
    assert_int_equal(got[0], 4);
    assert_int_equal(got[1], 3);
    assert_int_equal(got[2], 3);
    assert_true(tess__tile_allocate(2, (double[]){1, 1}, (double[]){0, 0}, 0, got) == 0.0);
    assert_int_equal(got[0] + got[1], 0);
}

/* Many processors: the shares always add up, and every processor that
 * gets work finishes at T. */
static void test_allocate_finish_together(void **state)
{
    (void)state;
    double rate[8] = {1e6, 2.5e6, 0.3e6, 4e6, 1e6, 1e6, 0.01e6, 3e6};
    double queued[8] = {0.01, 0.0, 0.2, 0.05, 1.0, 0.0, 0.0, 0.02};
    uint64_t got[8], sum = 0;
    double t = tess__tile_allocate(8, rate, queued, 5000000, got);
    for (int i = 0; i < 8; i++) {
        sum += got[i];
        /* within the one whole cell that rounding may add or take */
        if (got[i] > 1)
            assert_true(fabs(queued[i] + (double)got[i] / rate[i] - t) <= 1.0 / rate[i]);
        else assert_true(queued[i] >= t - 1e-5 || rate[i] * (t - queued[i]) < 2);
    }
    assert_int_equal(sum, 5000000);
    assert_int_equal(got[4], 0); /* its 1 s queue ends after T */
}

static void test_model_rates(void **state)
{
    (void)state;
    tess__tile_model m;
    tess__tile_model_init(&m);
    double rate = -1;
    assert_int_equal(tess__tile_model_best_size(&m, &rate), 0);
    assert_true(rate == 0.0);
    tess__tile_model_add(&m, 1000, 0.010);  /* class 9: 100000 cells/s */
    tess__tile_model_add(&m, 1020, 0.0102); /* same class, same rate */
    tess__tile_model_add(&m, 4000, 0.020);  /* class 11: 200000 cells/s */
    tess__tile_model_add(&m, 16000, 0.100); /* class 13: 160000 cells/s */
    tess__tile_model_add(&m, 16000, 0);     /* ignored: no time */
    assert_true(fabs(tess__tile_model_rate(&m, 1010) - 100000) < 1e-6);
    assert_true(fabs(tess__tile_model_rate(&m, 4095) - 200000) < 1e-6);
    assert_true(tess__tile_model_rate(&m, 64) == 0.0);
    assert_int_equal(tess__tile_model_best_size(&m, &rate), 4000);
    assert_true(fabs(rate - 200000) < 1e-6);
    /* a tie goes to the larger class */
    tess__tile_model_add(&m, 40000, 0.2); /* class 15: 200000 cells/s */
    assert_int_equal(tess__tile_model_best_size(&m, NULL), 40000);
    /* a larger class within 5% of the best wins; one 6% below does not */
    tess__tile_model_add(&m, 300000, 1.6); /* class 18: 187500 cells/s, 6.25% below */
    assert_int_equal(tess__tile_model_best_size(&m, NULL), 40000);
    tess__tile_model_add(&m, 140000, 0.72); /* class 17: 194444 cells/s, 2.8% below */
    assert_int_equal(tess__tile_model_best_size(&m, &rate), 140000);
    assert_true(fabs(rate - 140000 / 0.72) < 1e-6);
}

/* Sizes double from the minimum until a tile takes the threshold (here at
 * 16 cells) or the maximum is reached. */
static void test_bootstrap(void **state)
{
    (void)state;
    tess__tile_boot b;
    tess__tile_boot_init(&b, 2, 1000, 0.010);
    uint64_t seen[8];
    int n = 0;
    while (!b.done && n < 8) {
        seen[n] = b.next;
        tess__tile_boot_record(&b, b.next, (double)b.next * 0.001);
        n++;
    }
    assert_int_equal(n, 4);
    assert_int_equal(seen[0], 2);
    assert_int_equal(seen[1], 4);
    assert_int_equal(seen[2], 8);
    assert_int_equal(seen[3], 16);
    tess__tile_boot_init(&b, 3, 10, 1.0); /* never slow enough: stops at the maximum */
    n = 0;
    while (!b.done && n < 8) {
        seen[n++] = b.next;
        tess__tile_boot_record(&b, b.next, 1e-6);
    }
    assert_int_equal(n, 3);
    assert_int_equal(seen[1], 6);
    assert_int_equal(seen[2], 10);
}

/* A bootstrapping processor's potential rate: the slope of its last two
 * sizes, between its best rate so far and 8 times it. */
static void test_boot_potential(void **state)
{
    (void)state;
    tess__tile_boot b;
    tess__tile_boot_init(&b, 1000, 1 << 20, 0.010);
    tess__tile_boot_record(&b, 1000, 0.002); /* 5e5 cells/s, no slope yet */
    assert_true(fabs(tess__tile_boot_potential(&b) - 5e5) < 1e-6);
    /* 1 ms per tile, then 1e6 cells/s: 2000 cells in 3 ms */
    tess__tile_boot_record(&b, 2000, 0.003);
    assert_true(fabs(tess__tile_boot_potential(&b) - 1e6) < 1e-3);
    /* all fixed cost so far: 4000 cells in 1 ms as 2000 took (the slope is
     * infinite): 8 times the best rate, 3.2e7 */
    tess__tile_boot_init(&b, 2000, 1 << 20, 0.010);
    tess__tile_boot_record(&b, 2000, 0.001);
    tess__tile_boot_record(&b, 4000, 0.001);
    assert_true(fabs(tess__tile_boot_potential(&b) - 3.2e7) < 1e-3);
    /* a flat rate: the slope is the rate */
    tess__tile_boot_init(&b, 2000, 1 << 20, 0.010);
    tess__tile_boot_record(&b, 2000, 0.001);
    tess__tile_boot_record(&b, 4000, 0.002);
    assert_true(fabs(tess__tile_boot_potential(&b) - 2e6) < 1e-3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocate_empty_queues),
        cmocka_unit_test(test_allocate_long_queue_gets_nothing),
        cmocka_unit_test(test_allocate_water_filling),
        cmocka_unit_test(test_allocate_unknown_rates),
        cmocka_unit_test(test_allocate_finish_together),
        cmocka_unit_test(test_model_rates),
        cmocka_unit_test(test_bootstrap),
        cmocka_unit_test(test_boot_potential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
