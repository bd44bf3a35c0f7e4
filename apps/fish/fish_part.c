/*
 * fish_part.c — the fish school's Table-1 functions over rectangles
 * (tess_particle_rect), as the SoCC 2011 paper's Figure 2 defines them: RD
 * grows a rectangle by the visibility rho (the fish a fish in it sees), WD
 * by the reach R = speed * dt (the fish that can swim into it); RX shrinks
 * it by rho (the fish in it that see only fish in it), WX by R (where only
 * fish from it can be next tick); IX, not in the table, grows it by both
 * (the fish that next tick see, or are, a fish of it now).  DISJOINT says whether two rectangles
 * cannot share a fish; PART splits the plane into n rectangles by a
 * quadtree over the fish positions.  fish_tick_app puts them together with
 * NEW and STEP into the school's tick description.
 *
 * Growing adds a small margin (relative to the coordinates, plus a tiny
 * absolute one) so that rounding in STEP can never move a fish, or let it
 * see, further than the grown rectangle says; shrinking takes off twice
 * that margin, so that growing a shrunk rectangle by the same distance
 * stays inside the original.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fish.h"

/* ---------------------------------------------------------------- RD, WD, RX, WX, DISJOINT */

static double margin(double v, double d) { return (fabs(v) + d) * 0x1p-40 + 0x1p-40; }

static double grow_low(double v, double d)
{
    if (!isfinite(v)) return v;
    return v - d - margin(v, d);
}

static double grow_high(double v, double d)
{
    if (!isfinite(v)) return v;
    return v + d + margin(v, d);
}

static double shrink_low(double v, double d)
{
    if (!isfinite(v)) return v;
    return v + d + 2 * margin(v, d);
}

static double shrink_high(double v, double d)
{
    if (!isfinite(v)) return v;
    return v - d - 2 * margin(v, d);
}

/* An empty rectangle when nothing is left (rect_empty below). */
void fish_shrink(const tess_query *q, double d, tess_query *out)
{
    tess_particle_rect r = tess_particle_rect_of(q);
    tess_particle_rect s = {shrink_low(r.x0, d), shrink_high(r.x1, d), shrink_low(r.y0, d),
                            shrink_high(r.y1, d)};
    if (!(s.x0 < s.x1) || !(s.y0 < s.y1)) s = (tess_particle_rect){0, 0, 0, 0};
    *out = tess_particle_query(s);
}

void fish_grow(const tess_query *q, double d, tess_query *out)
{
    tess_particle_rect r = tess_particle_rect_of(q);
    tess_particle_rect g = {grow_low(r.x0, d), grow_high(r.x1, d), grow_low(r.y0, d),
                            grow_high(r.y1, d)};
    *out = tess_particle_query(g);
}

void fish_rd(void *user, const tess_query *q, tess_query *out)
{
    fish_grow(q, ((const fish_model *)user)->p.rho, out);
}

void fish_wd(void *user, const tess_query *q, tess_query *out)
{
    fish_grow(q, ((const fish_model *)user)->reach, out);
}

void fish_rx(void *user, const tess_query *q, tess_query *out)
{
    fish_shrink(q, ((const fish_model *)user)->p.rho, out);
}

void fish_wx(void *user, const tess_query *q, tess_query *out)
{
    fish_shrink(q, ((const fish_model *)user)->reach, out);
}

void fish_ix(void *user, const tess_query *q, tess_query *out)
{
    tess_query swum;
    fish_wd(user, q, &swum);
    fish_rd(user, &swum, out);
}

static int rect_empty(const tess_particle_rect *r) { return !(r->x0 < r->x1) || !(r->y0 < r->y1); }

int fish_disjoint(void *user, const tess_query *qa, const tess_query *qb)
{
    (void)user;
    tess_particle_rect a = tess_particle_rect_of(qa), b = tess_particle_rect_of(qb);
    return rect_empty(&a) || rect_empty(&b) || a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 ||
           b.y1 <= a.y0;
}

tess_tick_app fish_tick_app(fish_model *m, tess_particle_fns *fns,
                            int (*part)(tess_ctx *, void *, const void *, int, tess_query *))
{
    *fns = (tess_particle_fns){
        .count = m->count, .radius = m->p.rho, .init = fish_new, .step = fish_step};
    tess_tick_app app = {.name = "fish",
                         .state = &tess_particles_class,
                         .user = m,
                         .class_fns = fns,
                         .part = part,
                         .rd = fish_rd,
                         .wd = fish_wd,
                         .rx = fish_rx,
                         .wx = fish_wx,
                         .disjoint = fish_disjoint,
                         .ix = fish_ix};
    app.universe =
        tess_particle_query((tess_particle_rect){-INFINITY, INFINITY, -INFINITY, INFINITY});
    return app;
}

/* ---------------------------------------------------------------- PART */

/* A fish position; the id breaks ties, so (coordinate, id) orders the
 * points totally and the point of each rank is unique. */
typedef struct part_point {
    double c[2]; /* x, y */
    uint64_t id;
} part_point;

static int point_less(const part_point *p, const part_point *q, int axis)
{
    return p->c[axis] < q->c[axis] || (p->c[axis] == q->c[axis] && p->id < q->id);
}

static void swap_points(part_point *a, part_point *b)
{
    part_point t = *a;
    *a = *b;
    *b = t;
}

/* Quickselect (Hoare): reorder p[0 .. m-1] so that p[k] is the point of rank
 * k along `axis`, with smaller points before it and larger after.  The
 * result at p[k] does not depend on the pivots, so PART stays deterministic
 * while costing O(m) per split instead of a sort. */
static void select_rank(part_point *p, int64_t m, int64_t k, int axis)
{
    int64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (point_less(&p[mid], &p[lo], axis)) swap_points(&p[mid], &p[lo]);
        if (point_less(&p[hi], &p[lo], axis)) swap_points(&p[hi], &p[lo]);
        if (point_less(&p[hi], &p[mid], axis)) swap_points(&p[hi], &p[mid]);
        part_point pivot = p[mid];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (point_less(&p[i], &pivot, axis)) i++;
            while (point_less(&pivot, &p[j], axis)) j--;
            if (i <= j) swap_points(&p[i++], &p[j--]);
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* Move the points with coordinate below s to the front; their number. */
static int64_t partition_below(part_point *p, int64_t m, int axis, double s)
{
    int64_t below = 0;
    for (int64_t i = 0; i < m; i++)
        if (p[i].c[axis] < s) swap_points(&p[i], &p[below++]);
    return below;
}

static double max_coord(const part_point *p, int64_t m, int axis)
{
    double v = p[0].c[axis];
    for (int64_t i = 1; i < m; i++)
        if (p[i].c[axis] > v) v = p[i].c[axis];
    return v;
}

static double *rect_low(tess_particle_rect *r, int axis) { return axis == 0 ? &r->x0 : &r->y0; }

static double *rect_high(tess_particle_rect *r, int axis) { return axis == 0 ? &r->x1 : &r->y1; }

/* A split value in [lo, hi] for a cell without points. */
static double empty_split(double lo, double hi)
{
    if (isfinite(lo) && isfinite(hi)) return lo + (hi - lo) / 2;
    if (isfinite(lo)) return lo + fmax(1.0, fabs(lo));
    if (isfinite(hi)) return hi - fmax(1.0, fabs(hi));
    return 0.0;
}

/* Where to split m >= 1 points along `axis` so that the k lowest, in
 * (coordinate, id) order, go low: halfway between the points of ranks k-1
 * and k (the lowest coordinate for k = 0, just above the highest for k = m).
 * Reorders p. */
static double split_value(part_point *p, int64_t m, int64_t k, int axis)
{
    if (k == m) return nextafter(max_coord(p, m, axis), INFINITY);
    select_rank(p, m, k, axis);
    double b = p[k].c[axis];
    if (k == 0) return b;
    double a = max_coord(p, k, axis); /* rank k-1: the largest below p[k] */
    return a + (b - a) / 2;
}

/*
 * Split cell `r` holding p[0 .. m-1] along `axis` so that about
 * m * low_parts / parts points go to the low side; reorders p so the points
 * below the split value come first and returns their number; *lo_out and
 * *hi_out get the two half-open halves.
 */
static int64_t bisect(part_point *p, int64_t m, tess_particle_rect r, int axis, int low_parts,
                      int parts, tess_particle_rect *lo_out, tess_particle_rect *hi_out)
{
    int64_t k = (m * low_parts + parts / 2) / parts;
    double s = m == 0 ? empty_split(*rect_low(&r, axis), *rect_high(&r, axis))
                      : split_value(p, m, k, axis);
    *lo_out = r, *hi_out = r;
    *rect_high(lo_out, axis) = s;
    *rect_low(hi_out, axis) = s;
    return partition_below(p, m, axis, s);
}

static int is_power_of_4(int n)
{
    while (n > 1 && n % 4 == 0) n /= 4;
    return n == 1;
}

/* The longer side of the points' bounding box (x on a tie or without points). */
static int longer_axis(const part_point *p, int64_t m)
{
    if (m == 0) return 0;
    double x0 = p[0].c[0], x1 = x0, y0 = p[0].c[1], y1 = y0;
    for (int64_t i = 1; i < m; i++) {
        if (p[i].c[0] < x0) x0 = p[i].c[0];
        if (p[i].c[0] > x1) x1 = p[i].c[0];
        if (p[i].c[1] < y0) y0 = p[i].c[1];
        if (p[i].c[1] > y1) y1 = p[i].c[1];
    }
    return y1 - y0 > x1 - x0 ? 1 : 0;
}

/* Write the n rectangles of cell r (points p[0 .. m-1]) to out[0 .. n-1]. */
static void split_cell(part_point *p, int64_t m, tess_particle_rect r, int n,
                       tess_particle_rect *out)
{
    if (n == 1) {
        out[0] = r;
        return;
    }
    tess_particle_rect lo, hi;
    if (is_power_of_4(n)) {
        /* Quadtree: median x, then the median y of each half. */
        int64_t nl = bisect(p, m, r, 0, 1, 2, &lo, &hi);
        tess_particle_rect q[4];
        int64_t nll = bisect(p, nl, lo, 1, 1, 2, &q[0], &q[1]);
        int64_t nhl = bisect(p + nl, m - nl, hi, 1, 1, 2, &q[2], &q[3]);
        int64_t first[4] = {0, nll, nl, nl + nhl}, count[4] = {nll, nl - nll, nhl, m - nl - nhl};
        for (int i = 0; i < 4; i++)
            split_cell(p + first[i], count[i], q[i], n / 4, out + i * (n / 4));
        return;
    }
    int nlow = n / 2;
    int64_t below = bisect(p, m, r, longer_axis(p, m), nlow, n, &lo, &hi);
    split_cell(p, below, lo, nlow, out);
    split_cell(p + below, m - below, hi, n - nlow, out + nlow);
}

int fish_part_points(const tess_particle *fish, int64_t count, int n, tess_query *parts, char *err,
                     size_t errlen)
{
    if (n < 1 || count < 0) {
        snprintf(err, errlen, "cannot split %lld fish into %d parts", (long long)count, n);
        return -1;
    }
    part_point *p = malloc((size_t)(count ? count : 1) * sizeof *p);
    tess_particle_rect *rects = malloc((size_t)n * sizeof *rects);
    if (!p || !rects) {
        free(p);
        free(rects);
        snprintf(err, errlen, "out of memory partitioning %lld fish", (long long)count);
        return -1;
    }
    for (int64_t i = 0; i < count; i++) p[i] = (part_point){{fish[i].x, fish[i].y}, fish[i].id};
    tess_particle_rect plane = {-INFINITY, INFINITY, -INFINITY, INFINITY};
    split_cell(p, count, plane, n, rects);
    for (int i = 0; i < n; i++) parts[i] = tess_particle_query(rects[i]);
    free(p);
    free(rects);
    return 0;
}

int fish_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts)
{
    const fish_model *m = user;
    char err[300] = "";
    int rc;
    if (snapshot) {
        const tess_particles_view *v = snapshot;
        rc = fish_part_points(v->p, v->count, n, parts, err, sizeof err);
    } else { /* no state given: partition the initial state */
        tess_particle *fish = malloc((size_t)(m->count ? m->count : 1) * sizeof *fish);
        if (!fish)
            return tess_set_error(ctx, TESS_ERR_NOMEM, "out of memory partitioning %llu fish",
                                  (unsigned long long)m->count);
        for (uint64_t id = 0; id < m->count; id++) fish_new(user, id, &fish[id]);
        rc = fish_part_points(fish, (int64_t)m->count, n, parts, err, sizeof err);
        free(fish);
    }
    return rc == 0 ? 0 : tess_set_error(ctx, TESS_ERR_INVAL, "%s", err);
}
