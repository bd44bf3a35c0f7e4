/*
 * test_tile_stream.c — the bounded stream between two stages of a tiles
 * pipeline (src/tile/stream.c, tessera/tile_pipe.h): boxes read across the
 * boxes written, each cell let go once read; back-pressure (a writer
 * waits while the window is full, until a reader takes cells); a waiting
 * reader lets the writer past the window (no deadlock); the end of the
 * stream fails a read of cells never written; a failure wakes a waiting
 * writer and a waiting reader with its status; boxes outside the area.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "tessera/tile_pipe.h"
#include "test_main.h"

/* A 4 x 4 area of one-byte cells: cell (r, c) holds 10 r + c. */
static const int64_t extent[2] = {4, 4};

static tess_tile_box rows(int64_t lo, int64_t hi)
{
    return (tess_tile_box){.ndims = 2, .lo = {lo, 0}, .hi = {hi, 4}};
}

static void fill(const tess_tile_box *b, uint8_t *out)
{
    for (int64_t r = b->lo[0]; r < b->hi[0]; r++)
        for (int64_t c = b->lo[1]; c < b->hi[1]; c++) *out++ = (uint8_t)(10 * r + c);
}

static void write_rows(tess_tile_stream *s, int64_t lo, int64_t hi)
{
    tess_tile_box b = rows(lo, hi);
    uint8_t data[16];
    fill(&b, data);
    assert_int_equal(tess_tile_stream_write(&b, data, s), TESS_OK);
}

/* A stream of the area with a window of `window` bytes (0: none) and rows
 * 0-1 written, as most tests begin. */
static tess_tile_stream *open_first_rows(size_t window)
{
    tess_tile_stream *s;
    assert_int_equal(tess_tile_stream_open(NULL, 2, extent, 1, window, &s), TESS_OK);
    write_rows(s, 0, 2);
    return s;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* A thread that reads or writes one box and says when it returned. */
typedef struct side {
    pthread_t thread;
    tess_tile_stream *s;
    tess_tile_box box;
    int write, rc;
    atomic_int done;
    uint8_t data[16];
} side;

static void *side_main(void *arg)
{
    side *d = arg;
    if (d->write) fill(&d->box, d->data);
    d->rc = d->write ? tess_tile_stream_write(&d->box, d->data, d->s)
                     : tess_tile_stream_read(&d->box, d->data, d->s);
    atomic_store(&d->done, 1);
    return NULL;
}

static void start(side *d) { assert_int_equal(pthread_create(&d->thread, NULL, side_main, d), 0); }

/* Starts d and checks, `ms` milliseconds later, that its call still waits. */
static void start_held(side *d, int ms)
{
    start(d);
    sleep_ms(ms);
    assert_int_equal(atomic_load(&d->done), 0);
}

/* Waits for d's thread; its call must have returned `want`. */
static void join(side *d, int want)
{
    pthread_join(d->thread, NULL);
    assert_int_equal(d->rc, want);
}

/* Reads rows [lo, hi) of s (their cells dropped): the status. */
static int read_rows(tess_tile_stream *s, int64_t lo, int64_t hi)
{
    tess_tile_box b = rows(lo, hi);
    uint8_t got[16];
    return tess_tile_stream_read(&b, got, s);
}

static tess_tile_stream_stats stats_of(tess_tile_stream *s)
{
    tess_tile_stream_stats st;
    tess_tile_stream_get_stats(s, &st);
    return st;
}

/* Boxes read need not be the boxes written. */
static void test_read_across_writes(void **state)
{
    (void)state;
    tess_tile_stream *s = open_first_rows(1024);
    write_rows(s, 2, 4);
    tess_tile_box mid = {.ndims = 2, .lo = {1, 1}, .hi = {3, 3}}, want = mid;
    uint8_t got[16], exp[16];
    assert_int_equal(tess_tile_stream_read(&mid, got, s), TESS_OK);
    fill(&want, exp);
    assert_memory_equal(got, exp, 4);
    tess_tile_box rest[4] = {
        {2, {0, 0}, {1, 4}}, {2, {1, 0}, {3, 1}}, {2, {1, 3}, {3, 4}}, {2, {3, 0}, {4, 4}}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tess_tile_stream_read(&rest[i], got, s), TESS_OK);
        fill(&rest[i], exp);
        assert_memory_equal(
            got, exp, (size_t)((rest[i].hi[0] - rest[i].lo[0]) * (rest[i].hi[1] - rest[i].lo[1])));
    }
    tess_tile_stream_stats st = stats_of(s);
    assert_int_equal(st.held_bytes, 0); /* every cell read: every piece let go */
    assert_int_equal(st.peak_bytes, 16);
    assert_int_equal(st.cells_in, 16);
    assert_int_equal(st.cells_out, 16);
    tess_tile_stream_close(s);
}

/* A full window holds the writer until a reader takes cells. */
static void test_back_pressure(void **state)
{
    (void)state;
    tess_tile_stream *s = open_first_rows(8); /* 8 bytes: the window is full */
    side w = {.s = s, .box = rows(2, 4), .write = 1};
    start_held(&w, 100); /* by the window */
    assert_int_equal(read_rows(s, 0, 2), TESS_OK);
    join(&w, TESS_OK);
    tess_tile_stream_stats st = stats_of(s);
    assert_true(st.write_wait >= 0.05);
    assert_true(st.peak_bytes <= 8);
    tess_tile_stream_close(s);
}

/* A reader waiting for cells not written lets the writer past the
 * window: holding the writer would deadlock. */
static void test_waiting_reader_opens_window(void **state)
{
    (void)state;
    tess_tile_stream *s = open_first_rows(8);
    side r = {.s = s, .box = rows(2, 4)};
    start_held(&r, 50);  /* its cells are not there */
    write_rows(s, 2, 4); /* past the window, without waiting */
    join(&r, TESS_OK);
    uint8_t exp[16];
    fill(&r.box, exp);
    assert_memory_equal(r.data, exp, 8);
    assert_int_equal(stats_of(s).peak_bytes, 16);
    tess_tile_stream_close(s);
}

/* After the end, a read of cells never written fails at once; one of
 * cells written still succeeds. */
static void test_end_of_stream(void **state)
{
    (void)state;
    tess_tile_stream *s = open_first_rows(0);
    side r = {.s = s, .box = rows(1, 3)};
    start_held(&r, 20);      /* waiting for row 2 */
    tess_tile_stream_end(s); /* wakes it */
    join(&r, TESS_ERR_FORMAT);
    assert_int_equal(read_rows(s, 0, 1), TESS_OK);
    tess_tile_stream_close(s);
}

/* A failure wakes a writer held by the window and a waiting reader with
 * its status; later calls return it too. */
static void test_failure_wakes_everyone(void **state)
{
    (void)state;
    tess_tile_stream *s = open_first_rows(8), *s2;
    side w = {.s = s, .box = rows(2, 4), .write = 1};
    start(&w);
    assert_int_equal(tess_tile_stream_open(NULL, 2, extent, 1, 8, &s2), TESS_OK);
    side r = {.s = s2, .box = rows(0, 1)};
    start_held(&r, 50);
    assert_int_equal(atomic_load(&w.done), 0);
    tess_tile_stream_fail(s, TESS_ERR_IO);
    tess_tile_stream_fail(s2, TESS_ERR_IO);
    join(&w, TESS_ERR_IO);
    join(&r, TESS_ERR_IO);
    assert_int_equal(read_rows(s, 0, 2), TESS_ERR_IO);
    tess_tile_box first = rows(0, 2);
    uint8_t got[16] = {0};
    assert_int_equal(tess_tile_stream_write(&first, got, s2), TESS_ERR_IO);
    tess_tile_stream_close(s);
    tess_tile_stream_close(s2);
}

static void test_bad_boxes(void **state)
{
    (void)state;
    tess_tile_stream *s;
    assert_int_equal(tess_tile_stream_open(NULL, 0, extent, 1, 0, &s), TESS_ERR_INVAL);
    assert_int_equal(tess_tile_stream_open(NULL, 2, extent, 0, 0, &s), TESS_ERR_INVAL);
    assert_int_equal(tess_tile_stream_open(NULL, 2, extent, 1, 0, &s), TESS_OK);
    tess_tile_box out = {.ndims = 2, .lo = {3, 0}, .hi = {5, 4}}, flat = {.ndims = 1, .hi = {2}};
    uint8_t buf[64] = {0};
    assert_int_equal(tess_tile_stream_write(&out, buf, s), TESS_ERR_INVAL);
    assert_int_equal(tess_tile_stream_read(&flat, buf, s), TESS_ERR_INVAL);
    tess_tile_stream_close(s);
}

TEST_MAIN(cmocka_unit_test(test_read_across_writes), cmocka_unit_test(test_back_pressure),
          cmocka_unit_test(test_waiting_reader_opens_window), cmocka_unit_test(test_end_of_stream),
          cmocka_unit_test(test_failure_wakes_everyone), cmocka_unit_test(test_bad_boxes))
