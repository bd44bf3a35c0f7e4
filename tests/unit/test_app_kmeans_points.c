/*
 * test_app_kmeans_points.c — the k-means points file reader (values,
 * comments, exact FILE:LINE messages) and the --gen spec parser/generator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_main.h"

#include "../../apps/kmeans/kmeans.h"

static char path[64];

static const char *write_points(const char *text)
{
    snprintf(path, sizeof path, "/tmp/tess_kmeans_points_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_read_valid(void **state)
{
    (void)state;
    kmeans_points p;
    char err[256];
    write_points("# header\n1 2.5\n  -3e2\t4\r\n# mid\n0.125 +7\n");
    assert_int_equal(kmeans_points_read(path, &p, err, sizeof err), 0);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.dim, 2);
    const double want[] = {1, 2.5, -300, 4, 0.125, 7};
    for (int i = 0; i < 6; i++) assert_true(p.coords[i] == want[i]);
    kmeans_points_free(&p);
    unlink(path);
}

static void expect_read_error(const char *text, const char *suffix)
{
    kmeans_points p = {NULL, 0, 0};
    char err[256], want[256];
    write_points(text);
    assert_int_equal(kmeans_points_read(path, &p, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s%s", path, suffix);
    assert_string_equal(err, want);
    assert_null(p.coords);
    unlink(path);
}

static void test_read_errors(void **state)
{
    (void)state;
    expect_read_error("1 2 3\n# c\n4 5\n", ":3: expected 3 coordinates, got 2: 4 5");
    expect_read_error("1\n2 x\n", ":2: expected 1 coordinate, got 2: 2 x");
    expect_read_error("1 2\nnan 1\n", ":2: coordinate 1 is not a finite decimal number: nan 1");
    expect_read_error("1 2\n1 inf\n", ":2: coordinate 2 is not a finite decimal number: 1 inf");
    expect_read_error("1 2\n1 0x10\n", ":2: coordinate 2 is not a finite decimal number: 1 0x10");
    expect_read_error("1 2\n1 1e999\n", ":2: coordinate 2 is not a finite decimal number: 1 1e999");
    expect_read_error("1 2\n1 2.\n3 -\n", ":3: coordinate 2 is not a finite decimal number: 3 -");
    expect_read_error("1 2\n\n", ":2: expected 2 coordinates, got 0");
    expect_read_error("\n1 2\n", ":1: expected coordinates, got an empty line");
    expect_read_error("# only a comment\n", ": no points");
}

static void test_read_missing_file(void **state)
{
    (void)state;
    kmeans_points p;
    char err[256];
    assert_int_equal(kmeans_points_read("/nonexistent/p.txt", &p, err, sizeof err), -1);
    assert_string_equal(err, "cannot read /nonexistent/p.txt: No such file or directory");
}

static void test_gen_parse(void **state)
{
    (void)state;
    kmeans_gen_spec g;
    char err[256];
    assert_int_equal(kmeans_gen_parse("2000:2:5", &g, err, sizeof err), 0);
    assert_true(g.n == 2000 && g.dim == 2 && g.k == 5 && g.seed == 1);
    assert_int_equal(kmeans_gen_parse("10:3:10:18446744073709551615", &g, err, sizeof err), 0);
    assert_true(g.seed == UINT64_MAX && g.k == 10);
    const char *bad[] = {"",
                         "10",
                         "10:2",
                         "10:2:3:4:5",
                         "0:2:1",
                         "10:0:1",
                         "10:2:0",
                         "10:4097:1",
                         "a:2:1",
                         "10:2:3:",
                         "-1:2:1",
                         "10::3",
                         "10:2:3:18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(kmeans_gen_parse(bad[i], &g, err, sizeof err), -1);
    assert_int_equal(kmeans_gen_parse("5:2:9", &g, err, sizeof err), -1);
    assert_string_equal(err, "K (9) is larger than N (5) in '5:2:9'");
}

static void test_generate_matches_point_function(void **state)
{
    (void)state;
    kmeans_gen_spec g = {500, 3, 4, 7};
    kmeans_points p;
    assert_int_equal(kmeans_points_generate(&g, &p), 0);
    assert_int_equal(p.n, 500);
    double *centres = kmeans_gen_centres(&g);
    double row[3], lo = 1e300, hi = -1e300;
    for (uint64_t i = 0; i < p.n; i++) {
        kmeans_gen_point(&g, centres, i, row);
        assert_memory_equal(row, p.coords + i * 3, sizeof row);
        for (int d = 0; d < 3; d++) {
            lo = row[d] < lo ? row[d] : lo;
            hi = row[d] > hi ? row[d] : hi;
        }
    }
    for (int j = 0; j < 12; j++) assert_true(centres[j] >= 0 && centres[j] < 100);
    assert_true(lo > -30 && hi < 130); /* sigma 2 around [0, 100) */
    free(centres);
    kmeans_points_free(&p);
}

TEST_MAIN(cmocka_unit_test(test_read_valid), cmocka_unit_test(test_read_errors),
          cmocka_unit_test(test_read_missing_file), cmocka_unit_test(test_gen_parse),
          cmocka_unit_test(test_generate_matches_point_function))
