/*
 * test_tile_area.c — segments and tiles of a tiles work area: tiles are as
 * square as the bounds allow (a 2-D area asked for 4096 cells gives 64 x
 * 64), every cell is cut exactly once in 1-D to 4-D whatever the sizes
 * asked for and however stealing splits the work (through the plan, as the
 * controller cuts it), tiles stay within the extents and leave no sliver,
 * and a restored checkpoint's finished boxes are left out, the same for
 * every rank's rows.
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
#include "tile/plan.h"

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

static void init(tess__tile_area *a, int nd, const int64_t *e, const int64_t *min,
                 const int64_t *max)
{
    assert_int_equal(tess__tile_area_init(a, nd, e, min, max), TESS_OK);
}

/* The extents of the tile cut from the whole area for `cells`. */
static void shape_of(const tess__tile_area *a, uint64_t cells, int64_t *e)
{
    tess__tile_segment s = tess__tile_rows_segment(a, 0, a->extent[0], 0);
    tess__tile_shape(a, &s, cells, e);
}

static void test_square_shapes(void **state)
{
    (void)state;
    tess__tile_area a;
    int64_t e[4];
    init(&a, 2, (int64_t[]){1024, 1024}, (int64_t[]){1, 1}, (int64_t[]){256, 256});
    shape_of(&a, 4096, e);
    assert_true(e[0] == 64 && e[1] == 64);
    shape_of(&a, 1024, e);
    assert_true(e[0] == 32 && e[1] == 32);
    shape_of(&a, 1000, e); /* not a square number: the rows take the rounding */
    assert_true(e[1] == 32 && e[0] == 31);
    shape_of(&a, 1 << 20, e); /* beyond the maximum in both */
    assert_true(e[0] == 256 && e[1] == 256);
    /* a maximum of 16 in one dimension: the other takes the rest */
    init(&a, 2, (int64_t[]){1024, 1024}, (int64_t[]){1, 1}, (int64_t[]){1024, 16});
    shape_of(&a, 4096, e);
    assert_true(e[0] == 256 && e[1] == 16);
    /* a minimum of 128 in the last */
    init(&a, 2, (int64_t[]){1024, 1024}, (int64_t[]){1, 128}, (int64_t[]){1024, 1024});
    shape_of(&a, 4096, e);
    assert_true(e[0] == 32 && e[1] == 128);
    /* 3-D and 4-D cubes */
    init(&a, 3, (int64_t[]){64, 64, 64}, (int64_t[]){1, 1, 1}, (int64_t[]){64, 64, 64});
    shape_of(&a, 4096, e);
    assert_true(e[0] == 16 && e[1] == 16 && e[2] == 16);
    init(&a, 4, (int64_t[]){32, 32, 32, 32}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){9, 32, 32, 32});
    shape_of(&a, 65536, e);
    /* the first held at 9, the others share the rest: 19^3 */
    assert_true(e[0] == 9 && e[1] == 19 && e[2] == 19 && e[3] == 19);
    /* 1-D: rows, as before */
    init(&a, 1, (int64_t[]){1000}, (int64_t[]){8}, (int64_t[]){64});
    shape_of(&a, 40, e);
    assert_int_equal(e[0], 40);
}

/* A band of 8 rows asked for 4096 cells: 8 x 512.  A fetched chunk's
 * tiles keep its cross-section (rows of it). */
static void test_shape_in_segments(void **state)
{
    (void)state;
    tess__tile_area a;
    int64_t e[4];
    init(&a, 2, (int64_t[]){1024, 1024}, (int64_t[]){1, 1}, (int64_t[]){1024, 1024});
    tess__tile_segment s = tess__tile_rows_segment(&a, 0, 8, 0);
    tess__tile_shape(&a, &s, 4096, e);
    assert_true(e[0] == 8 && e[1] == 512);
    s = tess__tile_rows_segment(&a, 0, 1024, 0);
    s.box.lo[1] = 100;
    s.box.hi[1] = 300;
    s.chunk = &s;
    tess__tile_shape(&a, &s, 4096, e);
    assert_true(e[1] == 200 && e[0] == 20);
}

/* Cuts tiles off segments of one area, as the plan does: the last tile cut
 * (b) and the pieces (rest[0..n)) the cut left beside it. */
typedef struct cutter {
    tess__tile_area a;
    tess__tile_box b;
    tess__tile_segment rest[4];
    int n;
} cutter;

/* Cuts about `cells` off *s: the cells of the tile cut (0: none left). */
static uint64_t cut(cutter *c, tess__tile_segment *s, uint64_t cells)
{
    return tess__tile_cut(&c->a, s, cells, &c->b, c->rest, &c->n);
}

/* A fixed box policy (dd:AxB) sets min = max = B in the last dimension
 * and max A in the first: its tiles are A x B, narrower at the edge only. */
static void test_box_policy_shape(void **state)
{
    (void)state;
    cutter c;
    init(&c.a, 2, (int64_t[]){100, 70}, (int64_t[]){1, 32}, (int64_t[]){16, 32});
    tess__tile_segment s = tess__tile_rows_segment(&c.a, 0, 100, 0);
    assert_int_equal(cut(&c, &s, 16 * 32), 512);
    assert_true(c.b.lo[0] == 0 && c.b.hi[0] == 16 && c.b.lo[1] == 0 && c.b.hi[1] == 32);
    assert_int_equal(c.n, 1); /* the band beside it */
    assert_true(c.rest[0].box.lo[0] == 0 && c.rest[0].box.hi[0] == 16);
    assert_true(c.rest[0].box.lo[1] == 32 && c.rest[0].box.hi[1] == 70);
    assert_true(s.box.lo[0] == 16 && s.box.hi[0] == 100 && s.box.hi[1] == 70); /* below it */
    tess__tile_segment band = c.rest[0];
    assert_int_equal(cut(&c, &band, 512), 512);
    assert_true(c.b.lo[1] == 32 && c.b.hi[1] == 64 && c.n == 1);
    band = c.rest[0];
    assert_int_equal(cut(&c, &band, 512), 16 * 6); /* the edge */
    assert_int_equal(c.n, 0);
}

/* Asking for 150 cells of rows of 10 gives 15 rows; the last 17 rows would
 * leave a sliver of 2 below the minimum of 5: they go in one tile. */
static void test_rows_and_slivers(void **state)
{
    (void)state;
    cutter c;
    init(&c.a, 2, (int64_t[]){32, 10}, (int64_t[]){5, 10}, (int64_t[]){20, 10});
    tess__tile_segment s = tess__tile_rows_segment(&c.a, 0, 32, 0);
    assert_int_equal(cut(&c, &s, 150), 150);
    assert_int_equal(s.box.lo[0], 15);
    assert_int_equal(cut(&c, &s, 150), 170); /* 17 rows: no sliver */
    assert_int_equal(s.box.lo[0], 32);
    assert_int_equal(cut(&c, &s, 150), 0);
    /* the same in the last dimension: 23 wide, tiles of about 10, min 4 */
    init(&c.a, 2, (int64_t[]){10, 23}, (int64_t[]){10, 4}, (int64_t[]){10, 23});
    s = tess__tile_rows_segment(&c.a, 0, 10, 0);
    assert_int_equal(cut(&c, &s, 100), 100);
    tess__tile_segment band = c.rest[0];
    assert_int_equal(cut(&c, &band, 100), 130); /* 13: no sliver of 3 */
    assert_int_equal(c.n, 0);
}

static void test_split_tail(void **state)
{
    (void)state;
    tess__tile_area a;
    init(&a, 2, (int64_t[]){100, 8}, (int64_t[]){1, 1}, (int64_t[]){10, 8});
    tess__tile_segment s = tess__tile_rows_segment(&a, 0, 100, 0), given;
    assert_int_equal(tess__tile_split_tail(&a, &s, 200, &given), 200); /* 25 rows of 8 */
    assert_int_equal(given.box.lo[0], 75);
    assert_int_equal(given.box.hi[0], 100);
    assert_int_equal(s.box.hi[0], 75);
    assert_int_equal(tess__tile_split_tail(&a, &s, 1, &given), 8);           /* at least one row */
    assert_int_equal(tess__tile_split_tail(&a, &s, 100000, &given), 74 * 8); /* at most all */
    assert_int_equal(tess__tile_segment_cells(&a, &s), 0);
    /* a band keeps its cross-section */
    s = tess__tile_rows_segment(&a, 0, 10, 0);
    s.box.lo[1] = 3;
    assert_int_equal(tess__tile_split_tail(&a, &s, 10, &given), 10); /* 2 rows of 5 */
    assert_true(given.box.lo[0] == 8 && given.box.lo[1] == 3 && given.box.hi[1] == 8);
}

/* Mark every cell of box b in hit (each once). */
static void hit_box(unsigned char *hit, const tess__tile_area *a, const tess__tile_box *b)
{
    int nd = a->ndims;
    int64_t idx[4];
    memcpy(idx, b->lo, sizeof idx);
    for (uint64_t i = 0; i < tess__tile_box_cells(b); i++) { /* walk the box, row-major */
        uint64_t lin = 0;
        for (int d = 0; d < nd; d++) lin = lin * (uint64_t)a->extent[d] + (uint64_t)idx[d];
        assert_int_equal(hit[lin], 0);
        hit[lin] = 1;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < b->hi[d]) break;
            idx[d] = b->lo[d];
        }
    }
}

static void check_tile(const tess__tile_area *a, const tess__tile_box *b)
{
    for (int d = 0; d < a->ndims; d++) {
        assert_true(b->hi[d] - b->lo[d] <= a->max[d]);
        assert_true(b->lo[d] >= 0 && b->lo[d] < b->hi[d] && b->hi[d] <= a->extent[d]);
    }
}

/* A thief's stolen segment: fetched in chunks of about `cells` cut as the
 * storage layer cuts them (store.c), each then work with its chunk. */
static void fetch(const tess__tile_area *a, tess__tile_segment seg, uint64_t cells,
                  tess__tile_plan *thief, void *tag)
{
    tess__tile_segment stack[64], rest[4];
    int n = 0, nrest;
    stack[n++] = seg;
    while (n > 0) {
        tess__tile_box b;
        if (tess__tile_cut(a, &stack[n - 1], cells, &b, rest, &nrest) == 0) {
            n--;
            continue;
        }
        check_tile(a, &b);
        tess__tile_segment got = {.box = b, .owner = seg.owner, .chunk = tag};
        assert_int_equal(tess__tile_plan_push(thief, &got), TESS_OK);
        for (int k = nrest - 1; k >= 0; k--) stack[n++] = rest[k];
        assert_true(n < 60);
    }
}

/* Cut the whole area through a plan with varying sizes, a thief taking the
 * tail now and then (cut again from a segment with a fetched chunk, as a
 * thief does), tiles given back and joined: every cell exactly once. */
static void check_cover(int ndims, const int64_t *extent, const int64_t *min, const int64_t *max)
{
    tess__tile_area a;
    init(&a, ndims, extent, min, max);
    tess__tile_plan p, thief;
    assert_int_equal(tess__tile_plan_init(&p, &a, 1, 0.1, 0.01), TESS_OK);
    assert_int_equal(tess__tile_plan_init_empty(&thief, &a, 1, 0.1, 0.01), TESS_OK);
    uint64_t total = tess__tile_area_cells(&a), seen = 0;
    unsigned char *hit = calloc(total, 1);
    uint64_t asks[] = {1, 7, 100, 3, 1000000, 42, 64, 4096};
    int chunk_tag;
    for (int k = 0;; k++) {
        tess__tile_box b;
        uint64_t got;
        if (k % 5 == 4) { /* steal: the thief's input comes as a chunk */
            tess__tile_segment out[8];
            int n = 0;
            tess__tile_plan_take_tail(&p, asks[k % 8], -1, out, 8, &n);
            for (int i = 0; i < n; i++) fetch(&a, out[i], asks[(k + 1) % 8], &thief, &chunk_tag);
        }
        if (k % 7 == 6 && (got = tess__tile_plan_cut(&p, asks[k % 8], &b)) > 0) {
            tess__tile_segment back = p.last; /* recalled: back to the work */
            assert_true(back.box.lo[0] == b.lo[0]);
            assert_int_equal(tess__tile_plan_give_back(&p, &back), TESS_OK);
        }
        if ((got = tess__tile_plan_cut(&p, asks[k % 8], &b)) == 0 &&
            (got = tess__tile_plan_cut(&thief, asks[(k + 3) % 8], &b)) == 0)
            break;
        assert_int_equal(got, tess__tile_box_cells(&b));
        check_tile(&a, &b);
        hit_box(hit, &a, &b);
        seen += got;
    }
    assert_int_equal(seen, total);
    assert_int_equal(p.remaining + thief.remaining, 0);
    tess__tile_plan_free(&p);
    tess__tile_plan_free(&thief);
    free(hit);
}

static void test_cover(void **state)
{
    (void)state;
    check_cover(1, (int64_t[]){1000}, (int64_t[]){8}, (int64_t[]){64});
    check_cover(1, (int64_t[]){777}, (int64_t[]){1}, (int64_t[]){777});
    check_cover(2, (int64_t[]){37, 53}, (int64_t[]){3, 2}, (int64_t[]){9, 16});
    check_cover(2, (int64_t[]){200, 300}, (int64_t[]){1, 1}, (int64_t[]){200, 300});
    check_cover(2, (int64_t[]){64, 70}, (int64_t[]){1, 32}, (int64_t[]){16, 32});
    check_cover(3, (int64_t[]){7, 9, 11}, (int64_t[]){2, 1, 1}, (int64_t[]){5, 4, 20});
    check_cover(3, (int64_t[]){40, 40, 40}, (int64_t[]){1, 1, 1}, (int64_t[]){40, 40, 40});
    check_cover(4, (int64_t[]){5, 3, 4, 6}, (int64_t[]){1, 1, 2, 1}, (int64_t[]){2, 2, 3, 4});
    check_cover(4, (int64_t[]){12, 11, 10, 9}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){12, 11, 10, 9});
}

/* Cutting a 2-D area in bands of square tiles, sizes going up and down:
 * the plan's list stays a few boxes long (pieces beside a tile replace the
 * segment it emptied); asked for 4096 cells each time, every tile is
 * 64 x 64. */
static int cut_all(const tess__tile_area *a, const uint64_t *asks, int nasks)
{
    tess__tile_plan p;
    assert_int_equal(tess__tile_plan_init(&p, a, 1, 0.1, 0.01), TESS_OK);
    uint64_t seen = 0, got;
    int square = 0;
    tess__tile_box b;
    for (int k = 0; (got = tess__tile_plan_cut(&p, asks[k % nasks], &b)) > 0; k++) {
        seen += got;
        square += b.hi[0] - b.lo[0] == 64 && b.hi[1] - b.lo[1] == 64;
        assert_true(p.nsegs - p.first <= 8);
        assert_true(p.cap <= 64);
    }
    assert_int_equal(seen, tess__tile_area_cells(a));
    tess__tile_plan_free(&p);
    return square;
}

static void test_plan_list_short(void **state)
{
    (void)state;
    tess__tile_area a;
    init(&a, 2, (int64_t[]){2048, 2048}, (int64_t[]){1, 1}, (int64_t[]){2048, 2048});
    cut_all(&a, (uint64_t[]){4096, 4096, 4096, 1024, 16384, 4096, 300, 70000}, 8);
    assert_int_equal(cut_all(&a, (uint64_t[]){4096}, 1), 1024);
}

static void mark_box(uint8_t *done, const tess__tile_area *a, const tess__tile_box *b)
{
    unsigned char *hit = calloc(tess__tile_area_cells(a), 1);
    hit_box(hit, a, b);
    for (uint64_t i = 0; i < tess__tile_area_cells(a); i++)
        if (hit[i]) done[i / 8] |= (uint8_t)(1u << (i % 8));
    free(hit);
}

typedef struct collect {
    const tess__tile_area *a;
    unsigned char *hit;
    uint64_t cells;
    int boxes;
} collect;

static int collect_box(void *arg, const tess__tile_box *b)
{
    collect *c = arg;
    for (int d = 0; d < c->a->ndims; d++)
        assert_true(b->lo[d] >= 0 && b->lo[d] < b->hi[d] && b->hi[d] <= c->a->extent[d]);
    hit_box(c->hit, c->a, b);
    c->cells += tess__tile_box_cells(b);
    c->boxes++;
    return TESS_OK;
}

/* What a restored checkpoint left: the boxes cover every unmarked cell
 * once, no wholly marked box of the halving, and the same cells for rows
 * split among ranks as for the whole area. */
static void check_undone(const tess__tile_area *a, const uint8_t *done, uint64_t want_done)
{
    uint64_t total = tess__tile_area_cells(a);
    assert_int_equal(tess__tile_area_done_cells(a, done), want_done);
    for (int ranks = 1; ranks <= 3; ranks++) {
        collect c = {.a = a, .hit = calloc(total, 1)};
        for (int r = 0; r < ranks; r++) {
            int64_t lo = a->extent[0] * r / ranks, hi = a->extent[0] * (r + 1) / ranks;
            assert_int_equal(tess__tile_undone_boxes(a, done, lo, hi, collect_box, &c), TESS_OK);
        }
        assert_int_equal(c.cells, total - want_done);
        for (uint64_t i = 0; i < total; i++) /* every unmarked cell is work */
            assert_true(c.hit[i] || (done[i / 8] >> (i % 8) & 1));
        free(c.hit);
    }
}

static void test_done_boxes(void **state)
{
    (void)state;
    tess__tile_area a;
    init(&a, 2, (int64_t[]){64, 64}, (int64_t[]){1, 1}, (int64_t[]){64, 64});
    uint8_t done[64 * 64 / 8] = {0};
    check_undone(&a, done, 0);
    collect c = {.a = &a, .hit = calloc(64 * 64, 1)};
    assert_int_equal(tess__tile_undone_boxes(&a, NULL, 0, 64, collect_box, &c), TESS_OK);
    assert_true(c.boxes == 1 && c.cells == 64 * 64);
    free(c.hit);
    /* square tiles of an earlier run: 16 x 16 at (0,0), (0,16), (16,0) */
    tess__tile_box t = {.ndims = 2, .lo = {0, 0}, .hi = {16, 16}};
    mark_box(done, &a, &t);
    t.lo[1] = 16, t.hi[1] = 32;
    mark_box(done, &a, &t);
    t = (tess__tile_box){.ndims = 2, .lo = {16, 0}, .hi = {32, 16}};
    mark_box(done, &a, &t);
    check_undone(&a, done, 3 * 256);
    /* a tile at an odd place: 5 x 7 at (40, 21) */
    t = (tess__tile_box){.ndims = 2, .lo = {40, 21}, .hi = {45, 28}};
    mark_box(done, &a, &t);
    check_undone(&a, done, 3 * 256 + 35);
    c = (collect){.a = &a, .hit = calloc(64 * 64, 1)};
    tess__tile_undone_boxes(&a, done, 0, 64, collect_box, &c);
    assert_true(c.boxes < 40); /* joined, not a box per row */
    free(c.hit);
    /* a minimum of 8 in the last dimension: the odd tile is done again
     * where the halving cannot go below 8 */
    init(&a, 2, (int64_t[]){64, 64}, (int64_t[]){1, 8}, (int64_t[]){64, 64});
    uint64_t skipped = tess__tile_area_done_cells(&a, done);
    assert_true(skipped >= 3 * 256 && skipped < 3 * 256 + 35);
    check_undone(&a, done, skipped);
    /* 3-D and 1-D */
    init(&a, 3, (int64_t[]){8, 8, 8}, (int64_t[]){1, 1, 1}, (int64_t[]){8, 8, 8});
    memset(done, 0, sizeof done);
    t = (tess__tile_box){.ndims = 3, .lo = {2, 1, 3}, .hi = {5, 6, 8}};
    mark_box(done, &a, &t);
    check_undone(&a, done, 3 * 5 * 5);
    init(&a, 1, (int64_t[]){1000}, (int64_t[]){64}, (int64_t[]){1000});
    memset(done, 0, sizeof done);
    t = (tess__tile_box){.ndims = 1, .lo = {3}, .hi = {700}};
    mark_box(done, &a, &t);
    check_undone(&a, done, 697);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_rejects),
        cmocka_unit_test(test_square_shapes),
        cmocka_unit_test(test_shape_in_segments),
        cmocka_unit_test(test_box_policy_shape),
        cmocka_unit_test(test_rows_and_slivers),
        cmocka_unit_test(test_split_tail),
        cmocka_unit_test(test_cover),
        cmocka_unit_test(test_plan_list_short),
        cmocka_unit_test(test_done_boxes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
