/*
 * grid_stencil.c — Table 1 for a stencil on the dense grid (tick_grid.h):
 * a program whose STEP reads within a fixed radius and whose cells stay put
 * names its radius instead of writing RD, WD, RX, WX, DISJOINT, IX and PART as
 * one-line wrappers around the grid helpers (issue 42: five of them per
 * program).  Each function finds the stencil through the app's user
 * pointer, which tess_grid_stencil_app sets.
 */
#include "core/internal.h"
#include "tessera/tick_grid.h"

static void stencil_rd(void *user, const tess_query *q, tess_query *out)
{
    const tess_grid_stencil *s = user;
    tess_grid_grow(&s->fns, s->radius, q, out);
}

static void stencil_rx(void *user, const tess_query *q, tess_query *out)
{
    const tess_grid_stencil *s = user;
    tess_grid_shrink(&s->fns, s->radius, q, out);
}

/* WD and WX: a cell at t+1 comes from the same cell at t. */
static void stencil_same(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    *out = *q;
}

static int stencil_disjoint(void *user, const tess_query *a, const tess_query *b)
{
    (void)user;
    return tess_grid_disjoint(a, b);
}

static int stencil_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts)
{
    (void)snapshot;
    const tess_grid_stencil *s = user;
    return tess_grid_part_blocks(ctx, s->fns.rows, s->fns.cols, s->ring, n, parts);
}

int tess_grid_stencil_app(tess_ctx *ctx, tess_grid_stencil *s, tess_tick_app *app)
{
    TESS_RETURN_IF(ctx, s == NULL || app == NULL, TESS_ERR_INVAL,
                   "tess_grid_stencil_app(): no stencil or no app");
    TESS_RETURN_IF(ctx, s->radius < 1 || s->ring < 0, TESS_ERR_INVAL,
                   "grid stencil: radius must be >= 1 and ring >= 0, got %lld and %lld",
                   (long long)s->radius, (long long)s->ring);
    TESS_RETURN_IF(ctx, s->fns.rows < 1 || s->fns.cols < 1 || !s->fns.init || !s->fns.step_row,
                   TESS_ERR_INVAL, "grid stencil: the grid needs rows, cols, init and step_row");
    app->state = &tess_grid_class;
    app->user = s;
    app->class_fns = &s->fns;
    app->universe = tess_grid_query((tess_grid_rect){0, s->fns.rows, 0, s->fns.cols});
    app->part = stencil_part;
    app->part_ignores_state = 1;
    app->rd = stencil_rd;
    app->wd = stencil_same;
    app->rx = stencil_rx;
    app->wx = stencil_same;
    app->disjoint = stencil_disjoint;
    app->ix = stencil_rd; /* a cell reads within the radius, so it is read from as far */
    return TESS_OK;
}
