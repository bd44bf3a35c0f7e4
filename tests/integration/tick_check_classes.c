/*
 * tick_check_classes.c — the tick face's checking mode (TESS_TICK_CHECK=1)
 * for the graph and particles classes, run by tick_check_classes.sh with and
 * without the mode (tick_check.c does the grid class).
 *
 *   tick_check_classes graph ALG [bad-rx | bad-rd | bad-step]
 *   tick_check_classes particles ALG [bad-rx | bad-rd | bad-ix]
 *
 * ALG: local, sched, combined (d=2, k=2, m=3); 4 workers, the cloud latency
 * model.  graph: a lazy random walk (PageRank's form) on a 240-vertex ring
 * whose vertex v reads v-1 and v-3, cut into 4 arcs.  particles: 240
 * particles in a 60 x 20 box, each steered by the mean offset of its
 * neighbours within 2, cut into 4 vertical strips.
 *
 * bad-rx: RX is the identity (it claims every tuple of a query reads
 * nothing outside it): sched and combined step tuples whose inputs have not
 * arrived.  bad-rd: RD is the identity (a too-small RD: neighbours are never
 * sent).  bad-ix (particles): IX is the identity (it claims a late
 * neighbour's tuples reach nothing of the next tick outside its own query):
 * sched and combined step tuples next to a late side.  bad-step (graph): STEP also reads v+1, which is not an in-neighbour
 * (what RD and the labels cover), so a vertex at an arc's end reads one this
 * process never receives.  Prints a checksum line; exit 1 with the error on
 * stderr when the run fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tick_graph.h"
#include "tessera/tick_particles.h"

#define NV 240
#define PARTS 4

typedef struct prog {
    int bad_step;
    tess_graph *graph;
    tess_graph_fns gfns;
    tess_particle_fns pfns;
    tess_tick_app app;
    tess_tick_options opt;
    int particles;
} prog;

static void same(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    *out = *q;
}

/* ---- graph ---- */

static uint64_t in_first[NV + 1];
static uint32_t in_src[2 * NV];
static int32_t part_of[NV];

static double g_init(void *user, uint32_t v)
{
    (void)user;
    return v == 0 ? 1.0 : 0.0;
}

static void g_step(void *user, const double *prev, const uint32_t *vs, size_t n, int64_t tick,
                   double *out)
{
    const prog *p = user;
    (void)tick;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = vs[i];
        double s = 0.5 * prev[(v + NV - 1) % NV] + 0.5 * prev[(v + NV - 3) % NV];
        if (p->bad_step) s = 0.9 * s + 0.1 * prev[(v + 1) % NV];
        out[i] = 0.25 / NV + 0.75 * s;
    }
}

static int g_part(tess_ctx *ctx, void *user, const void *snap, int n, tess_query *parts)
{
    (void)snap;
    return tess_graph_part(ctx, ((prog *)user)->graph, n, parts);
}
static void g_rd(void *user, const tess_query *q, tess_query *out)
{
    tess_graph_rd(((prog *)user)->graph, q, out);
}
static void g_rx(void *user, const tess_query *q, tess_query *out)
{
    tess_graph_rx(((prog *)user)->graph, q, out);
}
static int g_disjoint(void *user, const tess_query *a, const tess_query *b)
{
    return tess_graph_disjoint(((prog *)user)->graph, a, b);
}

static int graph_setup(prog *p)
{
    for (uint32_t v = 0; v < NV; v++) {
        in_first[v] = 2 * v;
        in_src[2 * v] = (v + NV - 1) % NV;
        in_src[2 * v + 1] = (v + NV - 3) % NV;
        part_of[v] = (int32_t)(v * PARTS / NV);
    }
    in_first[NV] = 2 * NV;
    int rc = tess_graph_create(NV, in_first, in_src, part_of, PARTS, &p->graph);
    if (rc != TESS_OK) return rc;
    p->gfns = (tess_graph_fns){.graph = p->graph, .init = g_init, .step = g_step};
    p->app = (tess_tick_app){.name = "walk",
                             .state = &tess_graph_class,
                             .user = p,
                             .class_fns = &p->gfns,
                             .universe = tess_graph_query(0, TESS_GRAPH_ALL, 0),
                             .part = g_part,
                             .part_ignores_state = 1,
                             .rd = g_rd,
                             .wd = same,
                             .rx = g_rx,
                             .wx = same,
                             .disjoint = g_disjoint};
    return TESS_OK;
}

static int graph_report(prog *p, const tess_tick_result *res)
{
    static double x[NV];
    int rc = tess_graph_unpack(res->final_state.data, res->final_state.len, NV, x, NULL);
    double sum = 0;
    for (int v = 0; v < NV; v++) sum += x[v] * (v + 1);
    if (rc == TESS_OK) printf("x0 %.17g weighted %.17g\n", x[0], sum);
    (void)p;
    return rc;
}

/* ---- particles ---- */

#define W 60.0
#define H 20.0
#define RADIUS 2.0
#define REACH 0.5 /* the most a particle moves in a tick */

static void p_init(void *user, uint64_t id, tess_particle *out)
{
    (void)user;
    out->x = fmod((double)id * 7.31, W);
    out->y = fmod((double)id * 3.17, H);
    out->vx = 0.3 * cos((double)id);
    out->vy = 0.3 * sin((double)id);
}

static double reflect(double v, double hi, double *vel)
{
    if (v < 0) v = -v, *vel = -*vel;
    if (v >= hi) v = 2 * hi - v - 1e-9, *vel = -*vel;
    return v;
}

static void p_step(void *user, const tess_particle *self, const tess_particle *nbrs, size_t n,
                   int64_t tick, tess_particle *out)
{
    (void)user, (void)tick;
    double dx = 0, dy = 0;
    for (size_t i = 0; i < n; i++) dx += nbrs[i].x - self->x, dy += nbrs[i].y - self->y;
    double vx = self->vx, vy = self->vy;
    if (n > 0) vx += 0.05 * dx / (double)n, vy += 0.05 * dy / (double)n;
    double s = sqrt(vx * vx + vy * vy);
    if (s > REACH) vx *= REACH / s, vy *= REACH / s;
    out->vx = vx, out->vy = vy;
    out->x = reflect(self->x + vx, W, &out->vx);
    out->y = reflect(self->y + vy, H, &out->vy);
}

/* Grow by d with a margin, shrink by d with a larger one (tick.h: safe). */
static void rect_by(const tess_query *q, double d, tess_query *out)
{
    tess_particle_rect r = tess_particle_rect_of(q);
    r.x0 -= d, r.x1 += d, r.y0 -= d, r.y1 += d;
    if (!(r.x0 < r.x1) || !(r.y0 < r.y1)) r = (tess_particle_rect){0, 0, 0, 0};
    *out = tess_particle_query(r);
}
static void p_rd(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    rect_by(q, RADIUS + 0.01, out);
}
static void p_wd(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    rect_by(q, REACH + 0.01, out);
}
static void p_rx(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    rect_by(q, -(RADIUS + 0.02), out);
}
static void p_wx(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    rect_by(q, -(REACH + 0.02), out);
}
static void p_ix(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    rect_by(q, REACH + RADIUS + 0.02, out);
}
static int p_disjoint(void *user, const tess_query *qa, const tess_query *qb)
{
    (void)user;
    tess_particle_rect a = tess_particle_rect_of(qa), b = tess_particle_rect_of(qb);
    return !(a.x0 < a.x1 && a.y0 < a.y1) || !(b.x0 < b.x1 && b.y0 < b.y1) || a.x1 <= b.x0 ||
           b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0;
}
/* Vertical strips of the box; the outer ones reach to infinity. */
static int p_part(tess_ctx *ctx, void *user, const void *snap, int n, tess_query *parts)
{
    (void)ctx, (void)user, (void)snap;
    for (int i = 0; i < n; i++) {
        tess_particle_rect r = {i == 0 ? -INFINITY : W * i / n,
                                i == n - 1 ? INFINITY : W * (i + 1) / n, -INFINITY, INFINITY};
        parts[i] = tess_particle_query(r);
    }
    return TESS_OK;
}

static int particles_setup(prog *p)
{
    p->pfns = (tess_particle_fns){.count = NV, .radius = RADIUS, .init = p_init, .step = p_step};
    p->app = (tess_tick_app){.name = "flock",
                             .state = &tess_particles_class,
                             .user = p,
                             .class_fns = &p->pfns,
                             .universe = tess_particle_query(
                                 (tess_particle_rect){-INFINITY, INFINITY, -INFINITY, INFINITY}),
                             .part = p_part,
                             .part_ignores_state = 1,
                             .rd = p_rd,
                             .wd = p_wd,
                             .rx = p_rx,
                             .wx = p_wx,
                             .disjoint = p_disjoint,
                             .ix = p_ix};
    return TESS_OK;
}

static int particles_report(const tess_tick_result *res)
{
    static tess_particle q[NV];
    int rc = tess_particles_unpack(res->final_state.data, res->final_state.len, NV, q);
    double sx = 0, sy = 0;
    for (int i = 0; i < NV; i++) sx += q[i].x * (i + 1), sy += q[i].y * (i + 1);
    if (rc == TESS_OK) printf("x %.17g y %.17g\n", sx, sy);
    return rc;
}

/* ---- running ---- */

static int control(tess_ctx *ctx, void *arg)
{
    prog *p = arg;
    tess_tick_result res;
    int rc = tess_tick_run(ctx, &p->app, &p->opt, &res);
    if (rc != TESS_OK) {
        fprintf(stderr, "tick_check_classes: %s\n", tess_last_error(ctx));
        return rc;
    }
    rc = p->particles ? particles_report(&res) : graph_report(p, &res);
    if (rc != TESS_OK) fprintf(stderr, "tick_check_classes: the final state does not unpack\n");
    tess_tick_result_free(&res);
    return rc;
}

int main(int argc, char **argv)
{
    static prog p;
    if (argc < 3) return 2;
    p.particles = strcmp(argv[1], "particles") == 0;
    if (!p.particles && strcmp(argv[1], "graph") != 0) return 2;
    const char *bad = argc > 3 ? argv[3] : "";
    tess_tick_options_init(&p.opt);
    if (tess_tick_alg_parse(argv[2], &p.opt.alg) != TESS_OK) return 2;
    p.opt.ticks = 30, p.opt.jitter = "cloud", p.opt.seed = 7;
    if (p.opt.alg == TESS_TICK_SCHED || p.opt.alg == TESS_TICK_COMBINED) p.opt.depth = 2;
    if (p.opt.alg == TESS_TICK_COMBINED) p.opt.period = 2, p.opt.layers = 3;
    p.bad_step = strcmp(bad, "bad-step") == 0;
    int rc = p.particles ? particles_setup(&p) : graph_setup(&p);
    if (rc != TESS_OK) return 1;
    if (strcmp(bad, "bad-rx") == 0) p.app.rx = same;
    if (strcmp(bad, "bad-rd") == 0) p.app.rd = same;
    if (strcmp(bad, "bad-ix") == 0) p.app.ix = same;
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = PARTS;
    tess_ctx *ctx;
    if (tess_init(&cfg, &ctx) != TESS_OK) return 1;
    rc = tess_tick_register(ctx, &p.app);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &p);
    tess_finalize(ctx);
    tess_graph_destroy(p.graph);
    return rc == TESS_OK ? 0 : 1;
}
