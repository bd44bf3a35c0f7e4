/*
 * test_app_sar_trig.c — the SAR kernels' own cosine and sine
 * (apps/sar/sar_trig.h, through sar_phase_cos_sin): within 4.5e-16 of the C
 * library's (2 ulp of 1) over random phases from 1e-9 to 1e300 of either
 * sign, near multiples of pi/2, on both sides of 2^32 where the reduction
 * changes and at the double nearest a multiple of pi/2; exact at 0, tiny
 * phases and under negation; NaN for infinities and NaN.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_main.h"

#include "../../apps/sar/sar.h"
#include "tessera/rng.h"

#define BOUND 4.5e-16 /* measured: 2.2e-16 */

/* The larger of the two differences from the C library at x. */
static double error_at(double x)
{
    double c, s;
    sar_phase_cos_sin(x, &c, &s);
    return fmax(fabs(c - cos(x)), fabs(s - sin(x)));
}

static void test_random_phases(void **state)
{
    (void)state;
    double worst = 0, worst_x = 0;
    for (uint64_t i = 0; i < 2000000; i++) {
        /* log-uniform magnitude 1e-9 .. 1e300, and half of them under 1e13
         * (the phases of real scenes) */
        double e = i % 2 ? -9 + 309 * tess_rng_unit(7, 1, i) : -9 + 22 * tess_rng_unit(7, 1, i);
        double x = pow(10, e) * (tess_rng_unit(7, 2, i) < 0.5 ? -1 : 1);
        double err = error_at(x);
        if (err > worst) worst = err, worst_x = x;
    }
    print_message("max |error| %.3g at %.17g\n", worst, worst_x);
    assert_true(worst <= BOUND);
}

static void test_near_quadrants(void **state)
{
    (void)state;
    /* k*pi/2 rounded to double, and a few ulp around it, for k small and
     * large: the reduction cancels almost all of x there. */
    double worst = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        double k = floor(pow(2, 52 * tess_rng_unit(8, 1, i)));
        double x = k * 1.5707963267948966;
        for (int d = -3; d <= 3; d++) {
            double y = x;
            for (int j = 0; j < (d < 0 ? -d : d); j++)
                y = nextafter(y, d < 0 ? -INFINITY : INFINITY);
            worst = fmax(worst, error_at(y));
        }
    }
    print_message("max |error| %.3g\n", worst);
    assert_true(worst <= BOUND);
    /* The double nearest a multiple of pi/2 (6381956970095103 * 2^797). */
    assert_true(error_at(ldexp(6381956970095103.0, 797)) <= BOUND);
}

static void test_reduction_seam(void **state)
{
    (void)state;
    double x = 4294967296.0; /* 2^32: below it Cody-Waite, from it Payne-Hanek */
    for (int i = 0; i < 1000; i++) {
        assert_true(error_at(x) <= BOUND);
        double below = nextafter(x, 0);
        assert_true(error_at(below) <= BOUND);
        x = nextafter(x, INFINITY);
    }
    assert_true(error_at(1.7976931348623157e308) <= BOUND);
    assert_true(error_at(-1.7976931348623157e308) <= BOUND);
}

static void test_exact(void **state)
{
    (void)state;
    double c, s;
    sar_phase_cos_sin(0.0, &c, &s);
    assert_true(c == 1.0 && s == 0.0);
    double tiny[] = {1e-300, 4.9e-324, 1e-20, 1e-9};
    for (int i = 0; i < 4; i++) { /* sin x = x and cos x = 1 in double */
        sar_phase_cos_sin(tiny[i], &c, &s);
        assert_true(c == 1.0 && s == tiny[i]);
    }
    /* Negation: cos is even and sin odd to the bit, on both reductions. */
    for (uint64_t i = 0; i < 20000; i++) {
        double x = pow(10, -3 + 20 * tess_rng_unit(9, 1, i)), c2, s2;
        sar_phase_cos_sin(x, &c, &s);
        sar_phase_cos_sin(-x, &c2, &s2);
        assert_memory_equal(&c, &c2, sizeof c);
        s2 = -s2;
        assert_memory_equal(&s, &s2, sizeof s);
    }
    double bad[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        sar_phase_cos_sin(bad[i], &c, &s);
        assert_true(isnan(c) && isnan(s));
    }
}

TEST_MAIN(cmocka_unit_test(test_random_phases), cmocka_unit_test(test_near_quadrants),
          cmocka_unit_test(test_reduction_seam), cmocka_unit_test(test_exact))
