/*
 * heat.c — the ticks walkthrough (docs/ticks.md): 2-D heat diffusion on an
 * N x N plate whose top edge is held at 1 and other edges at 0, explicit
 * steps of
 *     u' = u + 0.2 ((up + down) + (left + right) - 4 u)
 * on the tick face.  The stencil reads one cell each way, so
 * tess_grid_stencil_app gives all of Table 1 from radius 1; the program
 * writes only NEW (init) and STEP (step_row).  Prints the centre's value
 * and the plate's sum; every algorithm gives the same bits.
 *
 *   heat N TICKS [ALG]     ALG: bsp, local (default), sched, repl, combined, auto
 */
#include <stdio.h>
#include <stdlib.h>
#include <tessera/tick_grid.h>

typedef struct plate {
    tess_grid_stencil grid; /* first: the stencil's functions get the app's user */
    tess_tick_app app;
    tess_tick_options opt;
    int64_t n;
} plate;

static double init(void *user, int64_t r, int64_t c)
{
    (void)user, (void)c;
    return r == 0 ? 1.0 : 0.0;
}

static void step_row(void *user, const tess_grid_view *u, int64_t r, int64_t c0, int64_t c1,
                     int64_t tick, double *out)
{
    const plate *p = user;
    (void)tick;
    for (int64_t c = c0; c < c1; c++) {
        double m = tess_grid_at(u, r, c);
        if (r == 0 || c == 0 || r == p->n - 1 || c == p->n - 1) out[c - c0] = m; /* the edges */
        else
            out[c - c0] = m + 0.2 * (((tess_grid_at(u, r - 1, c) + tess_grid_at(u, r + 1, c)) +
                                      (tess_grid_at(u, r, c - 1) + tess_grid_at(u, r, c + 1))) -
                                     4.0 * m);
    }
}

static int control(tess_ctx *ctx, void *arg)
{
    plate *p = arg;
    tess_tick_result res;
    int rc = tess_tick_run(ctx, &p->app, &p->opt, &res);
    double *u = rc == TESS_OK ? malloc((size_t)(p->n * p->n) * sizeof *u) : NULL;
    if (rc == TESS_OK)
        rc = u ? tess_grid_unpack(res.final_state.data, res.final_state.len, p->n, p->n, u)
               : TESS_ERR_NOMEM;
    if (rc != TESS_OK) fprintf(stderr, "heat: %s\n", tess_last_error(ctx));
    double sum = 0;
    for (int64_t i = 0; rc == TESS_OK && i < p->n * p->n; i++) sum += u[i];
    if (rc == TESS_OK) printf("center %.17g sum %.17g\n", u[(p->n / 2) * p->n + p->n / 2], sum);
    free(u);
    tess_tick_result_free(&res);
    return rc;
}

int main(int argc, char **argv)
{
    plate p = {.n = argc > 2 ? atol(argv[1]) : 0};
    tess_tick_options_init(&p.opt);
    p.opt.ticks = argc > 2 ? atol(argv[2]) : 0;
    if (p.n < 3 || (argc > 3 && tess_tick_alg_parse(argv[3], &p.opt.alg) != TESS_OK)) {
        fprintf(stderr, "usage: heat N TICKS [bsp|local|sched|repl|combined|auto]\n");
        return 2;
    }
    p.grid =
        (tess_grid_stencil){.fns = {.rows = p.n, .cols = p.n, .init = init, .step_row = step_row},
                            .radius = 1,
                            .ring = 1};
    p.app = (tess_tick_app){.name = "heat"};
    tess_ctx *ctx;
    if (tess_init(NULL, &ctx) != TESS_OK) return 1;
    int rc = tess_grid_stencil_app(ctx, &p.grid, &p.app);
    if (rc == TESS_OK) rc = tess_tick_register(ctx, &p.app);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &p);
    else fprintf(stderr, "heat: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    return rc == TESS_OK ? 0 : 1;
}
