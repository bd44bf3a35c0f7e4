/*
 * test_tile_area.c — columns, segments and tiles of a tiles work area:
 * every cell is cut exactly once whatever the tile sizes asked for, tiles
 * stay within the extents, no sliver is left, and stealing splits a segment
 * without losing rows; a restored checkpoint's finished rows are found.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"
#include "tile/area.h"

static void test_init_rejects(void **state)
{
    (void)state;
    tess__tile_area a;
    memset(&a, 0x5a, sizeof a);
    tess__tile_area before = a;
    int64_t e[2] = {10, 10}, lo[2] = {1, 1}, hi[2] = {4, 4};
    assert_int_equal(tess__tile_area_init(&a, 0, e, lo, hi), TESS_ERR_INVAL);
    assert_int_equal(tess__tile_area_init(&a, 5, e, lo, hi), TESS_ERR_INVAL);
    int64_t bad_min[2] = {5, 1};
    assert_int_equal(tess__tile_area_init(&a, 2, e, bad_min, hi), TESS_ERR_INVAL);
    int64_t zero[2] = {0, 10};
    assert_int_equal(tess__tile_area_init(&a, 2, zero, lo, hi), TESS_ERR_INVAL);
    assert_memory_equal(&a, &before, sizeof a);
}

/* 2-D, 10 x 10 with tiles up to 4 x 4: columns of width 4, 4 and 2. */
static void test_columns(void **state)
{
    (void)state;
    tess__tile_area a;
    assert_int_equal(
        tess__tile_area_init(&a, 2, (int64_t[]){10, 10}, (int64_t[]){1, 1}, (int64_t[]){4, 4}),
        TESS_OK);
    assert_int_equal(a.ncolumns, 3);
    assert_int_equal(tess__tile_column_cross(&a, 0), 4);
    assert_int_equal(tess__tile_column_cross(&a, 2), 2);
    tess__tile_box b;
    tess__tile_column_box(&a, 2, &b);
    assert_int_equal(b.lo[1], 8);
    assert_int_equal(b.hi[1], 10);
    assert_int_equal(b.hi[0], 10);
    assert_int_equal(tess__tile_area_cells(&a), 100);
}

/* Cut every column into tiles of varying requested sizes: each cell once. */
static void check_cover(int ndims, const int64_t *extent, const int64_t *min, const int64_t *max)
{
    tess__tile_area a;
    assert_int_equal(tess__tile_area_init(&a, ndims, extent, min, max), TESS_OK);
    uint64_t total = tess__tile_area_cells(&a), seen = 0;
    unsigned char *hit = calloc(total, 1);
    uint64_t asks[] = {1, 7, 100, 3, 1000000, 42};
    int k = 0;
    for (int64_t c = 0; c < a.ncolumns; c++) {
        tess__tile_segment s = tess__tile_column_segment(&a, c);
        tess__tile_box b;
        uint64_t got;
        while ((got = tess__tile_cut(&a, &s, asks[k++ % 6], &b)) > 0) {
            assert_int_equal(got, tess__tile_box_cells(&b));
            for (int d = 0; d < ndims; d++) {
                assert_true(b.hi[d] - b.lo[d] <= a.max[d]);
                assert_true(b.lo[d] >= 0 && b.hi[d] <= extent[d]);
            }
            /* rows shorter than the minimum only when the column is */
            assert_true(b.hi[0] - b.lo[0] >= a.min[0] || extent[0] < a.min[0] ||
                        a.max[0] < 2 * a.min[0]);
            int64_t idx[4];
            memcpy(idx, b.lo, sizeof idx);
            for (uint64_t i = 0; i < got; i++) { /* walk the box, row-major */
                uint64_t lin = 0;
                for (int d = 0; d < ndims; d++) lin = lin * (uint64_t)extent[d] + (uint64_t)idx[d];
                assert_int_equal(hit[lin], 0);
                hit[lin] = 1;
                for (int d = ndims - 1; d >= 0; d--) {
                    if (++idx[d] < b.hi[d]) break;
                    idx[d] = b.lo[d];
                }
            }
            seen += got;
        }
    }
    assert_int_equal(seen, total);
    free(hit);
}

static void test_cover(void **state)
{
    (void)state;
    check_cover(1, (int64_t[]){1000}, (int64_t[]){8}, (int64_t[]){64});
    check_cover(2, (int64_t[]){37, 53}, (int64_t[]){3, 2}, (int64_t[]){9, 16});
    check_cover(3, (int64_t[]){7, 9, 11}, (int64_t[]){2, 1, 1}, (int64_t[]){5, 4, 20});
    check_cover(4, (int64_t[]){5, 3, 4, 6}, (int64_t[]){1, 1, 2, 1}, (int64_t[]){2, 2, 3, 4});
}

/* Asking for 150 cells of rows of 10 gives 15 rows; the last 17 rows would
 * leave a sliver of 2 below the minimum of 5: they go in one tile. */
static void test_rows_and_slivers(void **state)
{
    (void)state;
    tess__tile_area a;
    assert_int_equal(
        tess__tile_area_init(&a, 2, (int64_t[]){32, 10}, (int64_t[]){5, 10}, (int64_t[]){20, 10}),
        TESS_OK);
    tess__tile_segment s = tess__tile_column_segment(&a, 0);
    tess__tile_box b;
    assert_int_equal(tess__tile_cut(&a, &s, 150, &b), 150);
    assert_int_equal(s.r0, 15);
    assert_int_equal(tess__tile_cut(&a, &s, 150, &b), 170); /* 17 rows: no sliver of 2 */
    assert_int_equal(s.r0, 32);
    assert_int_equal(tess__tile_cut(&a, &s, 150, &b), 0);
}

static void test_split_tail(void **state)
{
    (void)state;
    tess__tile_area a;
    assert_int_equal(
        tess__tile_area_init(&a, 2, (int64_t[]){100, 8}, (int64_t[]){1, 1}, (int64_t[]){10, 8}),
        TESS_OK);
    tess__tile_segment s = tess__tile_column_segment(&a, 0), given;
    assert_int_equal(tess__tile_split_tail(&a, &s, 200, &given), 200); /* 25 rows of 8 */
    assert_int_equal(given.r0, 75);
    assert_int_equal(given.r1, 100);
    assert_int_equal(s.r1, 75);
    assert_int_equal(tess__tile_split_tail(&a, &s, 1, &given), 8);           /* at least one row */
    assert_int_equal(tess__tile_split_tail(&a, &s, 100000, &given), 74 * 8); /* at most all */
    assert_int_equal(s.r1 - s.r0, 0);
}

static void mark(uint8_t *done, const tess__tile_area *a, int64_t row, int64_t c0, int64_t c1)
{
    for (int64_t c = c0; c < c1; c++) {
        uint64_t i = (uint64_t)(row * a->extent[1] + c);
        done[i / 8] |= (uint8_t)(1u << (i % 8));
    }
}

/* A restored checkpoint's done bitmap: a row of a column is done only when
 * all of its cells are, whatever columns marked it (10 x 10, columns of
 * width 4, 4 and 2). */
static void test_done_rows(void **state)
{
    (void)state;
    tess__tile_area a;
    assert_int_equal(
        tess__tile_area_init(&a, 2, (int64_t[]){10, 10}, (int64_t[]){1, 1}, (int64_t[]){4, 4}),
        TESS_OK);
    uint8_t done[13] = {0};
    assert_int_equal(tess__tile_row_done(&a, NULL, 0, 0), 0);
    mark(done, &a, 3, 0, 2); /* two boxes of another tiling cover column 0's row 3 */
    assert_int_equal(tess__tile_row_done(&a, done, 0, 3), 0);
    mark(done, &a, 3, 2, 4);
    assert_int_equal(tess__tile_row_done(&a, done, 0, 3), 1);
    mark(done, &a, 3, 4, 7); /* column 1's row 3 lacks cell 7 */
    assert_int_equal(tess__tile_row_done(&a, done, 1, 3), 0);
    mark(done, &a, 9, 8, 10);
    assert_int_equal(tess__tile_row_done(&a, done, 2, 9), 1);
    assert_int_equal(tess__tile_area_done_cells(&a, done), 4 + 2);
    assert_int_equal(tess__tile_area_done_cells(&a, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_rejects), cmocka_unit_test(test_columns),
        cmocka_unit_test(test_cover),        cmocka_unit_test(test_rows_and_slivers),
        cmocka_unit_test(test_split_tail),   cmocka_unit_test(test_done_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
