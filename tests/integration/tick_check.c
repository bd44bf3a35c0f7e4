/*
 * tick_check.c — the tick face's checking mode (TESS_TICK_CHECK=1, grid
 * class): 2-D heat on a 40 x 40 plate through tess_grid_stencil_app, run by
 * tick_check.sh with and without the mode (tick_check_classes.c does the
 * graph and particles classes).
 *
 *   tick_check ALG [bad-rx]    ALG: local, sched, combined (d=2, k=2, m=3)
 *
 * bad-rx replaces RX by the identity: it claims every cell of a query reads
 * nothing outside it, which is wrong for this stencil, so an algorithm that
 * computes ahead of late messages (sched, combined) steps cells whose
 * neighbours have not arrived.  Prints "center C sum S"; exit 1 with the
 * error on stderr when the run fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tick_grid.h"

#define N 40

typedef struct plate {
    tess_grid_stencil grid; /* first: the stencil's functions get the app's user */
    tess_tick_app app;
    tess_tick_options opt;
} plate;

static double init(void *user, int64_t r, int64_t c)
{
    (void)user, (void)c;
    return r == 0 ? 1.0 : 0.0;
}

static void step_row(void *user, const tess_grid_view *u, int64_t r, int64_t c0, int64_t c1,
                     int64_t tick, double *out)
{
    (void)user, (void)tick;
    for (int64_t c = c0; c < c1; c++) {
        double m = tess_grid_at(u, r, c);
        if (r == 0 || c == 0 || r == N - 1 || c == N - 1) out[c - c0] = m;
        else
            out[c - c0] = m + 0.2 * (((tess_grid_at(u, r - 1, c) + tess_grid_at(u, r + 1, c)) +
                                      (tess_grid_at(u, r, c - 1) + tess_grid_at(u, r, c + 1))) -
                                     4.0 * m);
    }
}

static void same(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    *out = *q;
}

static int control(tess_ctx *ctx, void *arg)
{
    plate *p = arg;
    tess_tick_result res;
    static double u[N * N];
    int rc = tess_tick_run(ctx, &p->app, &p->opt, &res);
    if (rc == TESS_OK) rc = tess_grid_unpack(res.final_state.data, res.final_state.len, N, N, u);
    if (rc != TESS_OK) {
        fprintf(stderr, "tick_check: %s\n", tess_last_error(ctx));
        return rc;
    }
    double sum = 0;
    for (int i = 0; i < N * N; i++) sum += u[i];
    printf("center %.17g sum %.17g\n", u[(N / 2) * N + N / 2], sum);
    tess_tick_result_free(&res);
    return TESS_OK;
}

int main(int argc, char **argv)
{
    plate p = {.grid = {.fns = {.rows = N, .cols = N, .init = init, .step_row = step_row},
                        .radius = 1,
                        .ring = 1}};
    tess_tick_options_init(&p.opt);
    if (argc < 2 || tess_tick_alg_parse(argv[1], &p.opt.alg) != TESS_OK) return 2;
    p.opt.ticks = 30, p.opt.jitter = "cloud", p.opt.seed = 7;
    if (p.opt.alg == TESS_TICK_SCHED || p.opt.alg == TESS_TICK_COMBINED) p.opt.depth = 2;
    if (p.opt.alg == TESS_TICK_COMBINED) p.opt.period = 2, p.opt.layers = 3;
    p.app = (tess_tick_app){.name = "heat"};
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 4;
    tess_ctx *ctx;
    if (tess_init(&cfg, &ctx) != TESS_OK) return 1;
    int rc = tess_grid_stencil_app(ctx, &p.grid, &p.app);
    if (argc > 2 && strcmp(argv[2], "bad-rx") == 0) p.app.rx = same;
    if (rc == TESS_OK) rc = tess_tick_register(ctx, &p.app);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &p);
    tess_finalize(ctx);
    return rc == TESS_OK ? 0 : 1;
}
