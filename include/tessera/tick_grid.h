/*
 * tick_grid.h — the dense 2-D grid state class of the tick face (a cell per
 * tuple, id = row * cols + col).  Queries are half-open rectangles of global
 * cell coordinates (tess_grid_rect, packed into a tess_query with
 * tess_grid_query).  Each process stores, per version, the cells of its hull
 * rectangle densely, so STEP reads neighbours by index.
 */
#ifndef TESSERA_TICK_GRID_H
#define TESSERA_TICK_GRID_H

#include "tessera/tick.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tess_grid_rect {
    int64_t r0, r1, c0, c1; /* rows [r0, r1), columns [c0, c1) */
} tess_grid_rect;

static inline tess_query tess_grid_query(tess_grid_rect r)
{
    return tess__query_pack(&r, sizeof r);
}

static inline tess_grid_rect tess_grid_rect_of(const tess_query *q)
{
    tess_grid_rect r;
    tess__query_unpack(q, &r, sizeof r);
    return r;
}

/* Read access to a version: cell (r, c) is base[(r - r0) * stride + (c - c0)]. */
typedef struct tess_grid_view {
    const double *base;
    int64_t r0, c0, stride;
} tess_grid_view;

static inline double tess_grid_at(const tess_grid_view *v, int64_t r, int64_t c)
{
    return v->base[(r - v->r0) * v->stride + (c - v->c0)];
}

/* The application's NEW and STEP (tess_tick_app.class_fns). */
typedef struct tess_grid_fns {
    int64_t rows, cols; /* the whole grid */
    /* NEW: the initial value of cell (r, c). */
    double (*init)(void *user, int64_t r, int64_t c);
    /* STEP: out[j - c0] = value at tick+1 of cell (r, j) for c0 <= j < c1,
     * reading the tick's values through prev. */
    void (*step_row)(void *user, const tess_grid_view *prev, int64_t r, int64_t c0, int64_t c1,
                     int64_t tick, double *out);
} tess_grid_fns;

/* The dense grid class.  With TESS_TICK_CHECK=1 in the environment, cells
 * a version does not hold read as NaN, and a STEP that gives NaN ends the
 * run naming the tick (an RD too small, or an RX or WX too large;
 * docs/ticks.md, "Checking mode").  Without it: no checks, no cost. */
TESS_API extern const tess_state_class tess_grid_class;

/* Packed form of a version (tess_tick_result.final_state): records of
 * {int64 r0, r1, c0, c1; double v[(r1-r0)*(c1-c0)]} — the cells of rows
 * [r0, r1) x columns [c0, c1), row-major, native byte order (one machine).
 * Write every cell of `packed` into the row-major rows x cols array out.
 * 0, or TESS_ERR_FORMAT. */
TESS_API int tess_grid_unpack(const void *packed, size_t len, int64_t rows, int64_t cols,
                              double *out);

/* Helpers for applications: the rectangle query functions of a stencil of
 * the given radius, clipped to the grid — grow (RD: the cells a rectangle's
 * cells read) and shrink (RX: the cells of a rectangle whose stencil lies
 * inside it; a side on the grid's edge stays, as nothing lies beyond it; an
 * empty rectangle when nothing is left); DISJOINT of rectangles; and a block
 * PART: the interior (the grid without a fixed ring of `ring` cells) split
 * into a layout of n blocks as square as possible, the ring going to the
 * blocks beside it.  part_blocks returns TESS_ERR_INVAL with ctx's last
 * error when the interior has fewer rows or columns than the layout. */
TESS_API void tess_grid_grow(const tess_grid_fns *g, int64_t radius, const tess_query *q,
                             tess_query *out);
TESS_API void tess_grid_shrink(const tess_grid_fns *g, int64_t radius, const tess_query *q,
                               tess_query *out);
TESS_API int tess_grid_disjoint(const tess_query *a, const tess_query *b);
TESS_API int tess_grid_part_blocks(tess_ctx *ctx, int64_t rows, int64_t cols, int64_t ring, int n,
                                   tess_query *parts);

/*
 * Stencils without wrappers.  A STEP that reads, for cell (r, c), only cells
 * within `radius` rows and columns of it (a 5-point or 9-point stencil:
 * radius 1; a radius-r box: r) and whose cells never move has all of Table
 * 1 given by its radius: RD grows a rectangle by it, RX shrinks one by it,
 * WD and WX are the identity, DISJOINT compares rectangles and PART is
 * tess_grid_part_blocks.  tess_grid_stencil_app fills those into *app with
 * the grid class, class_fns and universe; the application gives only the
 * name, NEW and STEP.
 *
 * The functions it installs find the stencil through app->user, so it sets
 * app->user = s: an application that needs its own data in NEW and STEP
 * makes the stencil the first member of its struct and casts user back
 * (apps/jacobi/jacobi.c).  *s must outlive the app.  TESS_ERR_INVAL when
 * radius < 1, ring < 0 or the grid or its callbacks are missing (ctx may be
 * NULL: the code only).
 */
typedef struct tess_grid_stencil {
    tess_grid_fns fns; /* the whole grid, NEW (init) and STEP (step_row) */
    int64_t radius;    /* >= 1: the cells STEP reads around a cell, each way */
    int64_t ring;      /* PART: a fixed ring of this many cells around the
                          blocks' interior (tess_grid_part_blocks), >= 0 */
} tess_grid_stencil;

TESS_API int tess_grid_stencil_app(tess_ctx *ctx, tess_grid_stencil *s, tess_tick_app *app);

#ifdef __cplusplus
}
#endif

#endif
