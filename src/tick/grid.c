/*
 * grid.c — the dense 2-D grid state class (tick_grid.h).
 *
 * A process stores, per version slot, the cells of its hull rectangle in a
 * dense row-major array and, per row, the sorted list of column intervals
 * the version holds (versions fill in large rectangles, so the lists stay
 * short and clearing a version costs a store per row, not per cell).  A
 * region (rectangles to intersect, rectangles to subtract) is walked row by
 * row: the intersection gives one rectangle, the subtracted rectangles cut
 * each row into spans, and the presence intervals cut a span into runs of
 * cells still to compute (or present, to pack), each handed over whole — to
 * the application's step_row() in one call.  The bookkeeping is per row,
 * not per cell, and cheap where the runtime calls it most (issue 40): a
 * region is decoded once per call (a merge's too, not once per received
 * run), a span's runs are marked present in one step after they are
 * filled, a span that no interval meets (STEP's rows of a cleared version,
 * a received halo cell) is filled and marked without the general walk, and
 * a rectangle that is wholly held packs as one block of row copies.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/internal.h"
#include "tick/tick_internal.h"
#include "tessera/tick_grid.h"

/* The column intervals [iv[2i], iv[2i+1]) a version holds in one row. */
typedef struct rowset {
    int n, cap;
    int64_t *iv;
} rowset;

typedef struct grid {
    const tess_tick_app *app;
    const tess_grid_fns *fns;
    tess_grid_rect hull;
    int64_t stride, area, nrows;
    int nslots;
    double **val;
    rowset **have;        /* per slot, per hull row */
    int64_t *cut;         /* scratch: spans, then a row's subtracted intervals */
    tess_grid_rect *negs; /* scratch: subtracted rectangles clipped to a walk's box */
    int ncut_cap;
    int check; /* TESS_TICK_CHECK=1: cells a version does not hold are NaN (poison) */
} grid;

/* TESS_TICK_CHECK=1: every cell a version does not hold reads as NaN, and a
 * STEP that gives NaN read one (tick.h's checking mode).  Without it those
 * cells hold stale values and a STEP reading one — RD too small, RX or WX
 * too large — gives a wrong state silently, and only under the algorithms
 * that reach that cell unreceived. */
static void poison(grid *g, int slot)
{
    if (!g->check) return;
    for (int64_t i = 0; i < g->area; i++) g->val[slot][i] = NAN;
}

/*
 * Write every page of a new slot once, on the process's own thread during
 * set-up: its pages are then mapped before the first tick (not faulted in
 * by the first merges and STEPs, a fifth of the runtime's and of STEP's
 * samples in a 100-tick Jacobi run at the paper's scale) and, on a NUMA
 * machine, placed on this thread's node.
 */
static void first_touch(grid *g, int slot)
{
    if (g->check) {
        poison(g, slot);
        return;
    }
    /* Through a volatile pointer: a memset of 0 right after malloc may be
     * turned into calloc, which maps no page. */
    volatile unsigned char *b = (volatile unsigned char *)g->val[slot];
    size_t bytes = (size_t)g->area * sizeof(double);
    for (size_t i = 0; i < bytes; i += 4096) b[i] = 0;
}

/* The first NaN of out[0 .. n), or -1. */
static int64_t first_nan(const double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (isnan(out[i])) return i;
    return -1;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static tess_grid_rect clip(tess_grid_rect a, tess_grid_rect b)
{
    tess_grid_rect r = {max64(a.r0, b.r0), min64(a.r1, b.r1), max64(a.c0, b.c0), min64(a.c1, b.c1)};
    if (r.r1 < r.r0) r.r1 = r.r0;
    if (r.c1 < r.c0) r.c1 = r.c0;
    return r;
}

static void grid_destroy(void *st)
{
    grid *g = st;
    if (g == NULL) return;
    for (int s = 0; s < g->nslots; s++) {
        if (g->val) free(g->val[s]);
        if (g->have && g->have[s]) {
            for (int64_t r = 0; r < g->nrows; r++) free(g->have[s][r].iv);
            free(g->have[s]);
        }
    }
    TESS_FREE_ALL(g->val, g->have, g->cut, g->negs, g);
}

static void *grid_create(const tess_tick_app *app, int nslots, const tess_query *own,
                         const tess_query *hull)
{
    (void)own;
    grid *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->app = app;
    g->fns = app->class_fns;
    tess_grid_rect all = {0, g->fns->rows, 0, g->fns->cols};
    g->hull = clip(tess_grid_rect_of(hull), all);
    g->stride = g->hull.c1 - g->hull.c0;
    g->nrows = g->hull.r1 - g->hull.r0;
    g->area = g->nrows * g->stride;
    g->nslots = nslots;
    g->check = tess__tick_check_on();
    g->val = calloc((size_t)nslots, sizeof *g->val);
    g->have = calloc((size_t)nslots, sizeof *g->have);
    if (g->val == NULL || g->have == NULL) goto fail;
    for (int s = 0; s < nslots; s++) {
        g->val[s] = malloc((size_t)(g->area ? g->area : 1) * sizeof(double));
        g->have[s] = calloc((size_t)(g->nrows ? g->nrows : 1), sizeof **g->have);
        if (g->val[s] == NULL || g->have[s] == NULL) goto fail;
        first_touch(g, s);
    }
    return g;
fail:
    grid_destroy(g);
    return NULL;
}

static void grid_clear(void *st, int slot)
{
    grid *g = st;
    for (int64_t r = 0; r < g->nrows; r++) g->have[slot][r].n = 0;
    poison(g, slot);
}

/* The rectangle of r's pos queries within the hull. */
static tess_grid_rect region_box(const grid *g, const tess_region *r)
{
    tess_grid_rect box = g->hull;
    for (int i = 0; i < r->npos; i++) box = clip(box, tess_grid_rect_of(&r->pos[i]));
    return box;
}

static int box_empty(tess_grid_rect b) { return b.r1 <= b.r0 || b.c1 <= b.c0; }

/*
 * The subtracted rectangles that meet box, clipped to it, into g->negs
 * (once per call, so a row looks only at the few that matter).  Returns
 * their number or -1.
 */
static int clip_negs(grid *g, const tess_region *r, tess_grid_rect box)
{
    int need = 2 * r->nneg + 2;
    if (need > g->ncut_cap) {
        int64_t *p = realloc(g->cut, (size_t)need * 2 * sizeof *p);
        tess_grid_rect *q = realloc(g->negs, (size_t)need * sizeof *q);
        if (p) g->cut = p;
        if (q) g->negs = q;
        if (p == NULL || q == NULL) return -1;
        g->ncut_cap = need;
    }
    int n = 0;
    for (int i = 0; i < r->nneg; i++) {
        tess_grid_rect q = clip(tess_grid_rect_of(&r->neg[i]), box);
        if (q.r1 > q.r0 && q.c1 > q.c0) g->negs[n++] = q;
    }
    return n;
}

/*
 * The spans of [c0, c1) in row `row` that none of the nneg clipped
 * subtracted rectangles covers, as pairs in g->cut; returns their number.
 */
static int row_spans(grid *g, int nneg, int64_t row, int64_t c0, int64_t c1)
{
    int64_t *iv = g->cut + g->ncut_cap; /* second half: this row's intervals */
    int n = 0;
    for (int i = 0; i < nneg; i++) {
        const tess_grid_rect *q = &g->negs[i];
        if (row < q->r0 || row >= q->r1) continue;
        int j = n++; /* insertion sort by start: a handful of intervals */
        while (j > 0 && iv[2 * (j - 1)] > q->c0) {
            iv[2 * j] = iv[2 * (j - 1)];
            iv[2 * j + 1] = iv[2 * (j - 1) + 1];
            j--;
        }
        iv[2 * j] = q->c0;
        iv[2 * j + 1] = q->c1;
    }
    int spans = 0;
    int64_t at = c0;
    for (int i = 0; i < n && at < c1; i++) {
        int64_t lo = min64(iv[2 * i], c1); /* a rectangle may reach past [c0, c1) */
        if (lo > at) {
            g->cut[2 * spans] = at;
            g->cut[2 * spans + 1] = lo;
            spans++;
        }
        at = max64(at, iv[2 * i + 1]);
    }
    if (at < c1) {
        g->cut[2 * spans] = at;
        g->cut[2 * spans + 1] = c1;
        spans++;
    }
    return spans;
}

/* Room for n intervals in a row's list. */
static int reserve_iv(rowset *rs, int n)
{
    if (n <= rs->cap) return TESS_OK;
    int cap = rs->cap ? 2 * rs->cap : 4;
    while (cap < n) cap *= 2;
    int64_t *iv = realloc(rs->iv, (size_t)cap * 2 * sizeof *iv);
    if (iv == NULL) return TESS_ERR_NOMEM;
    rs->iv = iv;
    rs->cap = cap;
    return TESS_OK;
}

/* Add [c0, c1) to the row's presence intervals, merging neighbours. */
static int mark(grid *g, int slot, int64_t row, int64_t c0, int64_t c1)
{
    rowset *rs = &g->have[slot][row - g->hull.r0];
    int n = rs->n;
    if (n == 0 || rs->iv[2 * n - 1] < c0) { /* an empty row, or past the last: append */
        if (reserve_iv(rs, n + 1) != TESS_OK) return TESS_ERR_NOMEM;
        rs->iv[2 * n] = c0;
        rs->iv[2 * n + 1] = c1;
        rs->n = n + 1;
        return TESS_OK;
    }
    int i = 0;
    while (i < n && rs->iv[2 * i + 1] < c0) i++; /* intervals wholly before */
    int j = i;
    while (j < n && rs->iv[2 * j] <= c1) { /* overlapping or touching: absorb */
        c0 = min64(c0, rs->iv[2 * j]);
        c1 = max64(c1, rs->iv[2 * j + 1]);
        j++;
    }
    int after = n - j;
    if (j != i + 1) { /* not one interval widened in place: shift the rest */
        if (reserve_iv(rs, i + 1 + after) != TESS_OK) return TESS_ERR_NOMEM;
        memmove(rs->iv + 2 * (i + 1), rs->iv + 2 * j, (size_t)after * 2 * sizeof *rs->iv);
    }
    rs->iv[2 * i] = c0;
    rs->iv[2 * i + 1] = c1;
    rs->n = i + 1 + after;
    return TESS_OK;
}

/* mark_gap()'s rarer cases: it closes a gap, or goes in as an interval of its own. */
static int mark_gap_slow(rowset *rs, int i, int64_t c0, int64_t c1)
{
    int n = rs->n;
    if (i > 0 && rs->iv[2 * i - 1] == c0) { /* touches both: closes the gap between i - 1 and i */
        rs->iv[2 * i - 1] = rs->iv[2 * i + 1];
        memmove(rs->iv + 2 * i, rs->iv + 2 * (i + 1), (size_t)(n - i - 1) * 2 * sizeof *rs->iv);
        rs->n = n - 1;
        return TESS_OK;
    }
    if (reserve_iv(rs, n + 1) != TESS_OK) return TESS_ERR_NOMEM;
    memmove(rs->iv + 2 * (i + 1), rs->iv + 2 * i, (size_t)(n - i) * 2 * sizeof *rs->iv);
    rs->iv[2 * i] = c0;
    rs->iv[2 * i + 1] = c1;
    rs->n = n + 1;
    return TESS_OK;
}

/*
 * Add [c0, c1) to the row's intervals where it meets none of them and i is
 * the first interval ending after c0: it widens the one neighbour it
 * touches (a halo cell next to the own block), or starts a cleared row,
 * here; the rest in mark_gap_slow().
 */
static inline int mark_gap(rowset *rs, int i, int64_t c0, int64_t c1)
{
    int n = rs->n;
    int left = i > 0 && rs->iv[2 * i - 1] == c0, right = i < n && rs->iv[2 * i] == c1;
    if (left && !right) {
        rs->iv[2 * i - 1] = c1;
    } else if (right && !left) {
        rs->iv[2 * i] = c0;
    } else if (n == 0 && rs->cap > 0) {
        rs->iv[0] = c0;
        rs->iv[1] = c1;
        rs->n = 1;
    } else {
        return mark_gap_slow(rs, i, c0, c1);
    }
    return TESS_OK;
}

/* fn fills or reads cells only: the walk marks what it filled. */
typedef int (*run_fn)(grid *g, int slot, int64_t row, int64_t c0, int64_t c1, void *arg);

/* How a span [c, end) lies against a row's intervals. */
enum { SPAN_ABSENT, SPAN_HELD, SPAN_MIXED };

/* SPAN_ABSENT: no interval meets the span; SPAN_HELD: interval *at holds
 * it whole; else SPAN_MIXED.  *at: the first interval ending after c. */
static inline int span_state(const rowset *rs, int64_t c, int64_t end, int *at)
{
    const int64_t *iv = rs->iv;
    int n = rs->n, i = 0;
    while (i < n && iv[2 * i + 1] <= c) i++; /* intervals wholly before the span */
    *at = i;
    if (i == n || iv[2 * i] >= end) return SPAN_ABSENT;
    return iv[2 * i] <= c && iv[2 * i + 1] >= end ? SPAN_HELD : SPAN_MIXED;
}

/*
 * Call fn (NULL: only count) on the runs of [c, end) that are (want = 1) or
 * are not (want = 0) in the row's presence intervals.  With want = 0 the
 * span is marked present once afterwards — the same set as marking each
 * run — so the walk reads the intervals in place, uncopied.  Returns cells
 * visited or < 0.
 */
static int64_t walk_span(grid *g, int slot, int64_t row, int64_t c, int64_t end, int want,
                         run_fn fn, void *arg)
{
    rowset *rs = &g->have[slot][row - g->hull.r0];
    int i = 0, state = c < end ? span_state(rs, c, end, &i) : SPAN_MIXED;
    if (state != SPAN_MIXED) { /* the usual cases: one run or none */
        if (want != (state == SPAN_HELD)) return 0;
        int rc = fn ? fn(g, slot, row, c, end, arg) : TESS_OK;
        if (rc >= 0 && !want) rc = mark_gap(rs, i, c, end);
        return rc < 0 ? rc : end - c;
    }
    const int64_t *iv = rs->iv;
    int n = rs->n;
    int64_t cells = 0, from = c;
    for (; c < end; i++) {
        int64_t lo = i < n ? iv[2 * i] : end, hi = i < n ? iv[2 * i + 1] : end;
        int64_t a = want ? max64(c, lo) : c, b = want ? min64(end, hi) : min64(end, lo);
        if (b > a) {
            int rc = fn ? fn(g, slot, row, a, b, arg) : TESS_OK;
            if (rc < 0) return rc;
            cells += b - a;
        }
        c = max64(c, hi);
    }
    if (!want && cells > 0) {
        int rc = mark(g, slot, row, from, end);
        if (rc < 0) return rc;
    }
    return cells;
}

/* walk() on a decoded region: box, and nneg clipped rectangles in g->negs. */
static int64_t walk_box(grid *g, int slot, tess_grid_rect box, int nneg, int want, run_fn fn,
                        void *arg)
{
    int64_t cells = 0;
    for (int64_t row = box.r0; row < box.r1; row++) {
        if (nneg == 0) { /* no cuts: the row is one span */
            int64_t n = walk_span(g, slot, row, box.c0, box.c1, want, fn, arg);
            if (n < 0) return n;
            cells += n;
            continue;
        }
        int spans = row_spans(g, nneg, row, box.c0, box.c1);
        for (int s = 0; s < spans; s++) {
            int64_t n = walk_span(g, slot, row, g->cut[2 * s], g->cut[2 * s + 1], want, fn, arg);
            if (n < 0) return n;
            cells += n;
        }
    }
    return cells;
}

/* Call fn on every run of cells of region r whose presence in slot is `want`. */
static int64_t walk(grid *g, int slot, const tess_region *r, int want, run_fn fn, void *arg)
{
    tess_grid_rect box = region_box(g, r);
    if (box_empty(box)) return 0;
    int nneg = clip_negs(g, r, box);
    if (nneg < 0) return TESS_ERR_NOMEM;
    return walk_box(g, slot, box, nneg, want, fn, arg);
}

static double *cell(grid *g, int slot, int64_t row, int64_t col)
{
    return g->val[slot] + (row - g->hull.r0) * g->stride + (col - g->hull.c0);
}

static int init_run(grid *g, int slot, int64_t row, int64_t c0, int64_t c1, void *arg)
{
    (void)arg;
    double *v = cell(g, slot, row, c0);
    for (int64_t c = c0; c < c1; c++) v[c - c0] = g->fns->init(g->app->user, row, c);
    return TESS_OK;
}

static int grid_init(void *st, int slot, const tess_region *r)
{
    int64_t n = walk(st, slot, r, 0, init_run, NULL);
    return n < 0 ? (int)n : TESS_OK;
}

typedef struct step_arg {
    int from;
    int64_t tick;
    tess_grid_view prev;
} step_arg;

static inline int step_run(grid *g, int slot, int64_t row, int64_t c0, int64_t c1, void *arg)
{
    step_arg *a = arg;
    double *out = cell(g, slot, row, c0);
    g->fns->step_row(g->app->user, &a->prev, row, c0, c1, a->tick, out);
    int64_t bad = g->check ? first_nan(out, c1 - c0) : -1;
    if (bad >= 0) { /* process.c says why */
        tess__tick_check_note("cell (%lld, %lld) came out NaN (a cell not held reads as NaN)",
                              (long long)row, (long long)(c0 + bad));
        return TESS_ERR_MISUSE;
    }
    return TESS_OK;
}

static int64_t grid_step(void *st, int from, int to, const tess_region *r, int64_t tick)
{
    grid *g = st;
    step_arg a = {.from = from, .tick = tick};
    a.prev = (tess_grid_view){g->val[from], g->hull.r0, g->hull.c0, g->stride};
    tess_grid_rect box = region_box(g, r);
    if (box_empty(box)) return 0;
    int nneg = clip_negs(g, r, box);
    if (nneg < 0) return TESS_ERR_NOMEM;
    if (nneg > 0) return walk_box(g, to, box, nneg, 0, step_run, &a);
    int64_t cells = 0;
    for (int64_t row = box.r0; row < box.r1; row++) {
        rowset *rs = &g->have[to][row - g->hull.r0];
        int i, rc;
        if (span_state(rs, box.c0, box.c1, &i) == SPAN_ABSENT) { /* the usual row: all to compute */
            rc = step_run(g, to, row, box.c0, box.c1, &a);
            if (rc == TESS_OK) rc = mark_gap(rs, i, box.c0, box.c1);
            cells += box.c1 - box.c0;
        } else {
            int64_t n = walk_span(g, to, row, box.c0, box.c1, 0, step_run, &a);
            rc = n < 0 ? (int)n : TESS_OK;
            cells += n;
        }
        if (rc != TESS_OK) return rc;
    }
    return cells;
}

static int64_t grid_count(void *st, int slot, const tess_region *r)
{
    return walk(st, slot, r, 1, NULL, NULL);
}

/* Consecutive rows holding the same columns become one block record, so a
 * column of cells (the halo of a left or right neighbour) is one header and
 * one run of values, not a record per row. */
typedef struct pack_arg {
    tess_buf *out;
    size_t last;        /* offset of the last record's header */
    int64_t r1, c0, c1; /* its rows' end and its columns; r1 = -1: none yet */
} pack_arg;

static int pack_run(grid *g, int slot, int64_t row, int64_t c0, int64_t c1, void *arg)
{
    pack_arg *a = arg;
    tess_buf *out = a->out;
    size_t bytes = (size_t)(c1 - c0) * sizeof(double);
    int grow = row == a->r1 && c0 == a->c0 && c1 == a->c1; /* the last record, one row more */
    int64_t head[4] = {row, row + 1, c0, c1};
    unsigned char *dst = tess_buf_reserve(out, bytes + (grow ? 0 : sizeof head));
    if (dst == NULL) return TESS_ERR_NOMEM;
    if (grow) {
        memcpy(out->data + a->last + sizeof(int64_t), &head[1], sizeof head[1]);
    } else {
        a->last = out->len;
        a->c0 = c0;
        a->c1 = c1;
        memcpy(dst, head, sizeof head);
        dst += sizeof head;
        out->len += sizeof head;
    }
    a->r1 = row + 1;
    memcpy(dst, cell(g, slot, row, c0), bytes);
    out->len += bytes;
    return TESS_OK;
}

/* Whether every row of box holds all of the box's columns. */
static int box_held(const grid *g, int slot, tess_grid_rect box)
{
    const rowset *rows = g->have[slot] - g->hull.r0;
    for (int64_t row = box.r0; row < box.r1; row++) {
        const rowset *rs = &rows[row];
        int i = 0;
        while (i < rs->n && rs->iv[2 * i + 1] <= box.c0) i++;
        if (i == rs->n || rs->iv[2 * i] > box.c0 || rs->iv[2 * i + 1] < box.c1) return 0;
    }
    return 1;
}

/* A wholly held box: the one block record the walk would give, written at once. */
static int pack_box(grid *g, int slot, tess_grid_rect box, tess_buf *out)
{
    int64_t head[4] = {box.r0, box.r1, box.c0, box.c1};
    size_t row_bytes = (size_t)(box.c1 - box.c0) * sizeof(double);
    size_t bytes = sizeof head + (size_t)(box.r1 - box.r0) * row_bytes;
    unsigned char *dst = tess_buf_reserve(out, bytes);
    if (dst == NULL) return TESS_ERR_NOMEM;
    memcpy(dst, head, sizeof head);
    dst += sizeof head;
    for (int64_t row = box.r0; row < box.r1; row++, dst += row_bytes) {
        const double *src = cell(g, slot, row, box.c0);
        if (row_bytes == sizeof(double)) memcpy(dst, src, sizeof(double)); /* a halo column */
        else memcpy(dst, src, row_bytes);
    }
    out->len += bytes;
    return TESS_OK;
}

static int grid_pack(void *st, int slot, const tess_region *r, tess_buf *out)
{
    grid *g = st;
    tess_grid_rect box = region_box(g, r);
    if (box_empty(box)) return TESS_OK;
    int nneg = clip_negs(g, r, box);
    if (nneg < 0) return TESS_ERR_NOMEM;
    if (nneg == 0 && box_held(g, slot, box)) return pack_box(g, slot, box, out);
    pack_arg a = {out, 0, -1, 0, 0};
    int64_t n = walk_box(g, slot, box, nneg, 1, pack_run, &a);
    return n < 0 ? (int)n : TESS_OK;
}

/* A block record of the packed form: rows [r0, r1), columns [c0, c1), and
 * its values row-major at v — possibly unaligned: read them with memcpy
 * only. */
typedef struct block {
    int64_t r0, r1, c0, c1;
    const unsigned char *v;
} block;

static int parse_blocks(const void *data, size_t len, int (*fn)(void *arg, const block *b),
                        void *arg)
{
    const unsigned char *p = data;
    while (len > 0) {
        int64_t head[4]; /* rows [r0, r1), columns [c0, c1), values row-major */
        if (len < sizeof head) return TESS_ERR_FORMAT;
        memcpy(head, p, sizeof head);
        p += sizeof head;
        len -= sizeof head;
        /* Both ends checked before subtracting: no overflow on any input. */
        if (head[0] < 0 || head[2] < 0 || head[1] <= head[0] || head[3] <= head[2])
            return TESS_ERR_FORMAT;
        int64_t rows = head[1] - head[0], cols = head[3] - head[2];
        if ((uint64_t)cols > len / sizeof(double) / (uint64_t)rows) return TESS_ERR_FORMAT;
        block b = {head[0], head[1], head[2], head[3], p};
        int rc = fn(arg, &b);
        if (rc != TESS_OK) return rc;
        p += (size_t)(rows * cols) * sizeof(double);
        len -= (size_t)(rows * cols) * sizeof(double);
    }
    return TESS_OK;
}

/* The region a merge keeps, decoded once per merge, not once per run. */
typedef struct merge_arg {
    grid *g;
    int slot;
    tess_grid_rect box;     /* the hull, within r's pos queries if r was given */
    int nneg;               /* r's subtracted rectangles, clipped to box, in g->negs */
    const unsigned char *v; /* the row being merged (unaligned doubles) */
    int64_t c0;             /* its first column */
} merge_arg;

static inline int copy_run(grid *g, int slot, int64_t row, int64_t c0, int64_t c1, void *arg)
{
    const merge_arg *m = arg;
    const unsigned char *src = m->v + (size_t)(c0 - m->c0) * sizeof(double);
    if (c1 - c0 == 1) memcpy(cell(g, slot, row, c0), src, sizeof(double)); /* a halo column */
    else memcpy(cell(g, slot, row, c0), src, (size_t)(c1 - c0) * sizeof(double));
    return TESS_OK;
}

/* A received block: the part inside the box and outside the subtracted
 * rectangles is stored.  A cell the version holds already has this value
 * (bitwise): skip it. */
static int merge_block(void *arg, const block *b)
{
    merge_arg *m = arg;
    grid *g = m->g;
    int64_t r0 = max64(b->r0, m->box.r0), r1 = min64(b->r1, m->box.r1);
    int64_t a = max64(b->c0, m->box.c0), e = min64(b->c1, m->box.c1);
    size_t row_bytes = (size_t)(b->c1 - b->c0) * sizeof(double);
    m->c0 = b->c0;
    for (int64_t row = r0; row < r1 && a < e; row++) {
        m->v = b->v + (size_t)(row - b->r0) * row_bytes;
        if (m->nneg == 0) { /* the common case: no cuts */
            rowset *rs = &g->have[m->slot][row - g->hull.r0];
            int i, rc;
            if (span_state(rs, a, e, &i) == SPAN_ABSENT) { /* the usual row: all new */
                copy_run(g, m->slot, row, a, e, m);
                rc = mark_gap(rs, i, a, e);
            } else {
                int64_t done = walk_span(g, m->slot, row, a, e, 0, copy_run, m);
                rc = done < 0 ? (int)done : TESS_OK;
            }
            if (rc != TESS_OK) return rc;
            continue;
        }
        int spans = row_spans(g, m->nneg, row, a, e);
        for (int s = 0; s < spans; s++) {
            int64_t done =
                walk_span(g, m->slot, row, g->cut[2 * s], g->cut[2 * s + 1], 0, copy_run, m);
            if (done < 0) return (int)done;
        }
    }
    return TESS_OK;
}

static int grid_merge(void *st, int slot, const void *data, size_t len, const tess_region *r)
{
    grid *g = st;
    merge_arg m = {g, slot, g->hull, 0, NULL, 0};
    if (r != NULL) {
        m.box = region_box(g, r);
        if (box_empty(m.box)) m.box = (tess_grid_rect){0, 0, 0, 0};
        else m.nneg = clip_negs(g, r, m.box);
        if (m.nneg < 0) return TESS_ERR_NOMEM;
    }
    return parse_blocks(data, len, merge_block, &m);
}

static const void *grid_snapshot(void *st, int slot)
{
    (void)st, (void)slot;
    return NULL; /* block partitioning does not look at the values */
}

const tess_state_class tess_grid_class = {
    .name = "grid",
    .create = grid_create,
    .destroy = grid_destroy,
    .clear = grid_clear,
    .init = grid_init,
    .pack = grid_pack,
    .merge = grid_merge,
    .step = grid_step,
    .count = grid_count,
    .snapshot = grid_snapshot,
    /* Checkpoints: the packed form is already global (runs of cells with their global row and column), so
     * any partition of a restoring run loads it. */
    .save = grid_pack,
    .load = grid_merge,
};

/* ---- unpacking a result ---- */

typedef struct unpack_arg {
    int64_t rows, cols;
    double *out;
} unpack_arg;

/* Row by row, each checked before it is copied. */
static int unpack_block(void *arg, const block *b)
{
    unpack_arg *u = arg;
    int64_t n = b->c1 - b->c0;
    for (int64_t row = b->r0; row < b->r1; row++) {
        if (row >= u->rows || n > u->cols - b->c0) return TESS_ERR_FORMAT;
        memcpy(u->out + row * u->cols + b->c0, b->v + (size_t)((row - b->r0) * n) * sizeof(double),
               (size_t)n * sizeof(double));
    }
    return TESS_OK;
}

int tess_grid_unpack(const void *packed, size_t len, int64_t rows, int64_t cols, double *out)
{
    unpack_arg u = {rows, cols, out};
    return parse_blocks(packed, len, unpack_block, &u);
}

/* ---- helpers for applications ---- */

void tess_grid_grow(const tess_grid_fns *g, int64_t radius, const tess_query *q, tess_query *out)
{
    tess_grid_rect r = tess_grid_rect_of(q);
    if (r.r1 > r.r0 && r.c1 > r.c0) {
        r.r0 -= radius, r.r1 += radius, r.c0 -= radius, r.c1 += radius;
        tess_grid_rect all = {0, g->rows, 0, g->cols};
        r = clip(r, all);
    }
    *out = tess_grid_query(r);
}

void tess_grid_shrink(const tess_grid_fns *g, int64_t radius, const tess_query *q, tess_query *out)
{
    tess_grid_rect r = clip(tess_grid_rect_of(q), (tess_grid_rect){0, g->rows, 0, g->cols});
    if (r.r0 > 0) r.r0 += radius;
    if (r.r1 < g->rows) r.r1 -= radius;
    if (r.c0 > 0) r.c0 += radius;
    if (r.c1 < g->cols) r.c1 -= radius;
    if (r.r1 <= r.r0 || r.c1 <= r.c0) r = (tess_grid_rect){0, 0, 0, 0};
    *out = tess_grid_query(r);
}

int tess_grid_disjoint(const tess_query *a, const tess_query *b)
{
    tess_grid_rect x = tess_grid_rect_of(a), y = tess_grid_rect_of(b);
    tess_grid_rect i = clip(x, y);
    return i.r1 <= i.r0 || i.c1 <= i.c0;
}

/* The layout px x py = n whose blocks are closest to square, among those
 * that fit (every block at least one cell) if any does. */
static void choose_layout(int64_t rows, int64_t cols, int n, int *px_out, int *py_out)
{
    double best = -1;
    int best_fits = 0;
    for (int px = 1; px <= n; px++) {
        if (n % px) continue;
        int py = n / px;
        int fits = rows >= px && cols >= py;
        double h = (double)rows / px, w = (double)cols / py;
        double score = h > w ? h / w : w / h;
        if (best < 0 || fits > best_fits || (fits == best_fits && score < best)) {
            best = score;
            best_fits = fits;
            *px_out = px;
            *py_out = py;
        }
    }
}

static int64_t split_at(int64_t lo, int64_t len, int parts, int i) { return lo + len * i / parts; }

int tess_grid_part_blocks(tess_ctx *ctx, int64_t rows, int64_t cols, int64_t ring, int n,
                          tess_query *parts)
{
    int64_t ir = rows - 2 * ring, ic = cols - 2 * ring;
    int px = 1, py = 1;
    choose_layout(ir, ic, n, &px, &py);
    TESS_RETURN_IF(ctx, n < 1 || ir < px || ic < py, TESS_ERR_INVAL,
                   "the %lldx%lld grid is smaller than the %dx%d layout of %d workers",
                   (long long)ir, (long long)ic, px, py, n);
    for (int i = 0; i < px; i++)
        for (int j = 0; j < py; j++) {
            tess_grid_rect r = {split_at(ring, ir, px, i), split_at(ring, ir, px, i + 1),
                                split_at(ring, ic, py, j), split_at(ring, ic, py, j + 1)};
            if (i == 0) r.r0 = 0;
            if (i == px - 1) r.r1 = rows;
            if (j == 0) r.c0 = 0;
            if (j == py - 1) r.c1 = cols;
            parts[i * py + j] = tess_grid_query(r);
        }
    return 0;
}
