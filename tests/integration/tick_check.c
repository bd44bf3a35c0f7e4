/*
 * tick_check.c — the tick face's checking mode (TESS_TICK_CHECK=1, grid
 * class): the walkthrough's 2-D heat (examples/heat.c) on a 40 x 40 plate
 * through tess_grid_stencil_app, with jitter and 4 workers, run by
 * tick_check.sh with and without the mode (tick_check_classes.c does the
 * graph and particles classes).
 *
 *   tick_check ALG [bad-rx | bad-ix]    ALG: local, sched, combined (d=2, k=2, m=3)
 *
 * bad-rx replaces RX by the identity: it claims every cell of a query reads
 * nothing outside it, which is wrong for this stencil, so an algorithm that
 * computes ahead of late messages (sched, combined) steps cells whose
 * neighbours have not arrived (with TESS_TICK_SIDES=off; by default the
 * stencil's IX decides instead).  bad-ix replaces IX by the identity: it claims a late
 * neighbour's cells reach nothing outside its own block, the same mistake
 * from the other side.  Prints "center C sum S"; exit 1 with the
 * error on stderr when the run fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tick_grid.h"

/* The walkthrough's plate itself (init, step_row, control), so that the
 * checked program is the documented one; its main becomes heat_main. */
#define main heat_main
#include "../../examples/heat.c"
#undef main

#define N 40

static void same(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    *out = *q;
}

int main(int argc, char **argv)
{
    plate p = {.grid = {.fns = {.rows = N, .cols = N, .init = init, .step_row = step_row},
                        .radius = 1,
                        .ring = 1},
               .n = N};
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
    if (argc > 2 && strcmp(argv[2], "bad-ix") == 0) p.app.ix = same;
    if (rc == TESS_OK) rc = tess_tick_register(ctx, &p.app);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &p);
    tess_finalize(ctx);
    return rc == TESS_OK ? 0 : 1;
}
