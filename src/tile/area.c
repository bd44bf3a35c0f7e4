/*
 * area.c — segments and tiles of a work area (area.h): tiles as square as
 * the bounds allow, cut from the corner of a box; stealing's split; the
 * boxes a restored checkpoint left to do.
 */
#include "tile/area.h"
#include <math.h>
#include "tessera/tessera.h"

int tess__tile_area_init(tess__tile_area *a, int ndims, const int64_t *extent, const int64_t *min,
                         const int64_t *max)
{
    if (ndims < 1 || ndims > TESS__TILE_MAX_DIMS) return TESS_ERR_INVAL;
    tess__tile_area t = {.ndims = ndims};
    for (int d = 0; d < ndims; d++) {
        if (extent[d] < 1 || min[d] < 1 || min[d] > max[d]) return TESS_ERR_INVAL;
        t.extent[d] = extent[d];
        t.max[d] = max[d] < extent[d] ? max[d] : extent[d];
        t.min[d] = min[d] < t.max[d] ? min[d] : t.max[d];
    }
    *a = t;
    return TESS_OK;
}

uint64_t tess__tile_area_cells(const tess__tile_area *a)
{
    uint64_t n = 1;
    for (int d = 0; d < a->ndims; d++) n *= (uint64_t)a->extent[d];
    return n;
}

uint64_t tess__tile_area_max_cross(const tess__tile_area *a)
{
    uint64_t n = 1;
    for (int d = 1; d < a->ndims; d++) n *= (uint64_t)a->max[d];
    return n;
}

void tess__tile_rows_box(const tess__tile_area *a, int64_t lo, int64_t hi, tess__tile_box *out)
{
    *out = (tess__tile_box){.ndims = a->ndims};
    out->lo[0] = lo;
    out->hi[0] = hi;
    for (int d = 1; d < a->ndims; d++) out->hi[d] = a->extent[d];
}

tess__tile_segment tess__tile_rows_segment(const tess__tile_area *a, int64_t lo, int64_t hi,
                                           int owner)
{
    tess__tile_segment s = {.owner = owner};
    tess__tile_rows_box(a, lo, hi, &s.box);
    return s;
}

int tess__tile_box_whole_rows(const tess__tile_area *a, const tess__tile_box *b)
{
    for (int d = 1; d < a->ndims; d++)
        if (b->lo[d] != 0 || b->hi[d] != a->extent[d]) return 0;
    return 1;
}

uint64_t tess__tile_box_cells(const tess__tile_box *b)
{
    uint64_t n = 1;
    for (int d = 0; d < b->ndims; d++)
        n *= b->hi[d] > b->lo[d] ? (uint64_t)(b->hi[d] - b->lo[d]) : 0;
    return n;
}

uint64_t tess__tile_segment_cells(const tess__tile_area *a, const tess__tile_segment *s)
{
    (void)a;
    return tess__tile_box_cells(&s->box);
}

int tess__tile_box_join(const tess__tile_box *a, const tess__tile_box *b, tess__tile_box *out)
{
    if (a->ndims != b->ndims || tess__tile_box_cells(a) == 0 || tess__tile_box_cells(b) == 0)
        return 0;
    int touch = -1;
    for (int d = 0; d < a->ndims; d++) {
        if (a->lo[d] == b->lo[d] && a->hi[d] == b->hi[d]) continue;
        if (touch >= 0 || (a->hi[d] != b->lo[d] && b->hi[d] != a->lo[d])) return 0;
        touch = d;
    }
    if (touch < 0) return 0; /* the same box twice */
    tess__tile_box j = *a;
    j.lo[touch] = a->lo[touch] < b->lo[touch] ? a->lo[touch] : b->lo[touch];
    j.hi[touch] = a->hi[touch] > b->hi[touch] ? a->hi[touch] : b->hi[touch];
    *out = j;
    return 1;
}

/* An extent near `want` within [min, max] and the `left` there is: all of
 * it when less is left, and never a rest thinner than the minimum (take
 * all of it, or leave exactly the minimum). */
static int64_t extent_for(int64_t want, int64_t left, int64_t min, int64_t max)
{
    if (want < min) want = min;
    if (want > max) want = max;
    if (want >= left) return left;
    if (left - want >= min) return want;
    if (left <= max) return left;
    return left - min >= min ? left - min : want;
}

/* Every dimension but the first of a tile of about `cells` cells: the side
 * of a cube of that many cells, where the bounds (min..max, and what is
 * left) allow; a dimension held at a bound leaves the others the rest of
 * the cells (water-filling, at most one round per dimension). */
static void square_cross(const tess__tile_area *a, const int64_t *left, uint64_t cells,
                         int64_t *extent)
{
    int nd = a->ndims, nfree = nd, held[TESS__TILE_MAX_DIMS] = {0};
    double side[TESS__TILE_MAX_DIMS], rest = (double)(cells > 0 ? cells : 1);
    for (int round = 0; round < nd && nfree > 0; round++) {
        double s = pow(rest, 1.0 / nfree);
        int moved = 0;
        for (int d = 0; d < nd; d++) {
            if (held[d]) continue;
            double lo = (double)(a->min[d] < left[d] ? a->min[d] : left[d]);
            double hi = (double)(a->max[d] < left[d] ? a->max[d] : left[d]);
            side[d] = s < lo ? lo : s > hi ? hi : s;
            if (side[d] == s) continue;
            held[d] = moved = 1;
            rest /= side[d];
            nfree--;
        }
        if (!moved) break;
    }
    for (int d = 1; d < nd; d++)
        extent[d] = extent_for((int64_t)llround(side[d]), left[d], a->min[d], a->max[d]);
}

void tess__tile_shape(const tess__tile_area *a, const tess__tile_segment *s, uint64_t cells,
                      int64_t *extent)
{
    int64_t left[TESS__TILE_MAX_DIMS];
    for (int d = 0; d < a->ndims; d++) left[d] = s->box.hi[d] - s->box.lo[d];
    if (s->chunk == NULL) square_cross(a, left, cells, extent);
    else /* a fetched chunk's tiles are its rows: their input is contiguous */
        for (int d = 1; d < a->ndims; d++) extent[d] = left[d];
    uint64_t cross = 1;
    for (int d = 1; d < a->ndims; d++) cross *= (uint64_t)extent[d];
    int64_t rows = (int64_t)((cells + cross / 2) / cross);
    extent[0] = extent_for(rows, left[0], a->min[0], a->max[0]);
}

uint64_t tess__tile_cut(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                        tess__tile_box *box, tess__tile_segment *rest, int *nrest)
{
    *nrest = 0;
    if (tess__tile_box_cells(&s->box) == 0) return 0;
    int64_t e[TESS__TILE_MAX_DIMS];
    tess__tile_shape(a, s, cells, e);
    tess__tile_box t = s->box;
    for (int d = 0; d < a->ndims; d++) t.hi[d] = t.lo[d] + e[d];
    /* the guillotine cut: beside the tile in dimension d, its extents
     * before d and the segment's after */
    for (int d = a->ndims - 1; d >= 1; d--) {
        if (t.hi[d] >= s->box.hi[d]) continue;
        tess__tile_segment p = *s;
        for (int j = 0; j < d; j++) p.box.lo[j] = t.lo[j], p.box.hi[j] = t.hi[j];
        p.box.lo[d] = t.hi[d];
        rest[(*nrest)++] = p;
    }
    s->box.lo[0] = t.hi[0];
    *box = t;
    return tess__tile_box_cells(&t);
}

uint64_t tess__tile_split_tail(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                               tess__tile_segment *given)
{
    int64_t left = s->box.hi[0] - s->box.lo[0];
    uint64_t cross = 1;
    for (int d = 1; d < a->ndims; d++) cross *= (uint64_t)(s->box.hi[d] - s->box.lo[d]);
    int64_t rows = (int64_t)((cells + cross / 2) / (cross ? cross : 1));
    if (rows < 1) rows = 1;
    if (rows > left) rows = left;
    if (rows < 0) rows = 0;
    *given = *s;
    given->box.lo[0] = s->box.hi[0] - rows;
    s->box.hi[0] -= rows;
    return (uint64_t)rows * cross;
}

/* ---- a restored checkpoint's work ---- */

static int cell_marked(const uint8_t *done, uint64_t i) { return done[i / 8] >> (i % 8) & 1; }

/* 0: no cell of b is marked, 2: every cell, 1: some. */
static int marks(const tess__tile_area *a, const uint8_t *done, const tess__tile_box *b)
{
    int nd = a->ndims, seen[2] = {0, 0};
    int64_t idx[TESS__TILE_MAX_DIMS];
    for (int d = 0; d < nd; d++) idx[d] = b->lo[d];
    for (;;) { /* odometer over the box */
        uint64_t i = 0;
        for (int d = 0; d < nd; d++) i = i * (uint64_t)a->extent[d] + (uint64_t)idx[d];
        seen[cell_marked(done, i)] = 1;
        if (seen[0] && seen[1]) return 1;
        int d = nd - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < b->hi[d]) break;
            idx[d] = b->lo[d];
        }
        if (d < 0) return seen[1] ? 2 : 0;
    }
}

/* Halve b in its longest dimension that can be (the first down to one
 * row, the others not below their minimum tile extent): 0 when none. */
static int halve(const tess__tile_area *a, const tess__tile_box *b, tess__tile_box *x,
                 tess__tile_box *y)
{
    int best = -1;
    int64_t longest = 0;
    for (int d = 0; d < a->ndims; d++) {
        int64_t n = b->hi[d] - b->lo[d];
        if (n >= (d == 0 ? 2 : 2 * a->min[d]) && n > longest) longest = n, best = d;
    }
    if (best < 0) return 0;
    *x = *y = *b;
    x->hi[best] = y->lo[best] = b->lo[best] + longest / 2;
    return 1;
}

typedef struct undone_walk {
    const tess__tile_area *a;
    const uint8_t *done;
    int64_t lo, hi; /* the rows wanted */
    tess__tile_box_fn *fn;
    void *arg;
    tess__tile_box pending; /* boxes found are joined while they can be */
    int have, rc;
} undone_walk;

static void emit(undone_walk *w, const tess__tile_box *b)
{
    tess__tile_box c = *b;
    if (c.lo[0] < w->lo) c.lo[0] = w->lo;
    if (c.hi[0] > w->hi) c.hi[0] = w->hi;
    if (w->have && tess__tile_box_join(&w->pending, &c, &w->pending)) return;
    if (w->have && w->rc == TESS_OK) w->rc = w->fn(w->arg, &w->pending);
    w->pending = c;
    w->have = 1;
}

static void visit(undone_walk *w, const tess__tile_box *b)
{
    if (w->rc != TESS_OK || b->hi[0] <= w->lo || b->lo[0] >= w->hi) return;
    int m = marks(w->a, w->done, b);
    tess__tile_box x, y;
    if (m == 2) return;
    if (m == 0 || !halve(w->a, b, &x, &y)) {
        emit(w, b);
        return;
    }
    visit(w, &x);
    visit(w, &y);
}

int tess__tile_undone_boxes(const tess__tile_area *a, const uint8_t *done, int64_t lo, int64_t hi,
                            tess__tile_box_fn *fn, void *arg)
{
    tess__tile_box whole;
    if (lo >= hi) return TESS_OK;
    if (done == NULL) {
        tess__tile_rows_box(a, lo, hi, &whole);
        return fn(arg, &whole);
    }
    undone_walk w = {.a = a, .done = done, .lo = lo, .hi = hi, .fn = fn, .arg = arg};
    tess__tile_rows_box(a, 0, a->extent[0], &whole);
    visit(&w, &whole);
    if (w.have && w.rc == TESS_OK) w.rc = fn(arg, &w.pending);
    return w.rc;
}

static int count_cells(void *arg, const tess__tile_box *box)
{
    *(uint64_t *)arg += tess__tile_box_cells(box);
    return TESS_OK;
}

uint64_t tess__tile_area_done_cells(const tess__tile_area *a, const uint8_t *done)
{
    uint64_t undone = 0;
    if (done == NULL) return 0;
    tess__tile_undone_boxes(a, done, 0, a->extent[0], count_cells, &undone);
    return tess__tile_area_cells(a) - undone;
}
