/*
 * test_bench_util.c — helpers of the benchmark drivers: the statistics
 * they print their verdicts from (the median's distribution-free
 * confidence interval, its order-statistic ranks and coverage against the
 * binomial's exact values, and the met / tie / MISS verdict), and the choice
 * of OpenMPI's single-copy transport.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_main.h"

#include "../../bench/bench_util.h"

/* Exact values: coverage of [x(k), x(n+1-k)] = 1 - 2 P(Bin(n, 1/2) < k). */
static void ranks_and_coverage(void **state)
{
    (void)state;
    double c;
    assert_int_equal(bench_median_ci_rank(1, &c), 1);
    assert_int_equal(bench_median_ci_rank(5, &c), 1); /* too few for 95% */
    assert_float_equal(c, 1.0 - 2.0 / 32, 1e-12);
    assert_int_equal(bench_median_ci_rank(7, &c), 1);
    assert_float_equal(c, 1.0 - 2.0 / 128, 1e-12);
    assert_int_equal(bench_median_ci_rank(9, &c), 2); /* P(X <= 1) = 10/512 */
    assert_float_equal(c, 1.0 - 20.0 / 512, 1e-12);
    assert_int_equal(bench_median_ci_rank(15, &c), 4); /* P(X <= 3) = 576/32768 */
    assert_float_equal(c, 1.0 - 1152.0 / 32768, 1e-12);
    assert_int_equal(bench_median_ci_rank(25, &c), 8); /* P(X <= 7) = 0.0216 */
    assert_true(c >= 0.95 && c < 0.96);
}

static void interval_of_values(void **state)
{
    (void)state;
    double v[15] = {9, 1, 8, 2, 7, 3, 6, 4, 5, 15, 14, 13, 12, 11, 10}, lo, hi;
    double c = bench_median_ci(v, 15, &lo, &hi);
    assert_true(c > 0.95);
    assert_float_equal(lo, 4, 0);
    assert_float_equal(hi, 12, 0);
    assert_float_equal(v[0], 9, 0); /* not reordered */
    double one = 3.5;
    bench_median_ci(&one, 1, &lo, &hi);
    assert_float_equal(lo, 3.5, 0);
    assert_float_equal(hi, 3.5, 0);
}

static void verdicts(void **state)
{
    (void)state;
    assert_string_equal(bench_verdict(0.99, 0.95, 1.02, 1.0, 1), "met");
    assert_string_equal(bench_verdict(1.01, 0.97, 1.04, 1.0, 1), "tie");
    assert_string_equal(bench_verdict(1.05, 1.02, 1.08, 1.0, 1), "MISS");
    assert_string_equal(bench_verdict(1.02, 1.00, 1.05, 1.0, 0), "met");
    assert_string_equal(bench_verdict(0.99, 0.97, 1.01, 1.0, 0), "tie");
    assert_string_equal(bench_verdict(0.95, 0.90, 0.98, 1.0, 0), "MISS");
}

/* The caller's choice wins; otherwise the probe's answer, and "none" is
 * exported for the MPI runs to come. */
static void single_copy_choice(void **state)
{
    (void)state;
    const char *var = "OMPI_MCA_btl_vader_single_copy_mechanism";
    setenv(var, "xpmem", 1);
    assert_string_equal(bench_mpi_single_copy(), "xpmem");
    unsetenv(var);
    const char *got = bench_mpi_single_copy();
    assert_true(strcmp(got, "cma") == 0 || strcmp(got, "none") == 0);
    if (strcmp(got, "none") == 0) assert_string_equal(getenv(var), "none");
    else assert_null(getenv(var)); /* OpenMPI's own default: CMA */
}

TEST_MAIN(cmocka_unit_test(ranks_and_coverage), cmocka_unit_test(interval_of_values),
          cmocka_unit_test(verdicts), cmocka_unit_test(single_copy_choice))
