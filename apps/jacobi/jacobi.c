/*
 * jacobi.c — `tessera run jacobi`: the Jacobi iteration on the tick face
 * (DESIGN §6).  R x C interior cells inside a fixed ring; boundary row 0 is
 * 1.0, every other cell starts at 0.0; each tick
 *     u'[i][j] = 0.25 * ((u[i-1][j] + u[i+1][j]) + (u[i][j-1] + u[i][j+1]))
 * evaluated in exactly that order.  A stencil of radius 1 on the dense grid
 * (tess_grid_stencil_app): PART is a block layout inside the ring, RD/RX
 * grow and shrink a rectangle by one cell, WD/WX are the identity (cells do
 * not move).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tessera/tick_grid.h"
#include "tick_app.h"

#define APP "jacobi"

typedef struct jacobi {
    tess_grid_stencil grid; /* first: the stencil's functions get the app's user */
    long rows, cols;        /* interior */
    const char *dump_path;
    app_tick_cli cli;
    tess_tick_app tick;
} jacobi;

static const char usage[] =
    "usage: tessera run jacobi --rows R --cols C --ticks T [--dump FILE] [OPTIONS]\n"
    "\n"
    "Jacobi iteration on an R x C interior inside a fixed boundary ring (row 0\n"
    "is 1.0, every other cell 0.0), on the tick face.\n"
    "\n"
    "  --rows R, --cols C   interior size\n"
    "  --dump FILE          the final (R+2) x (C+2) grid: float64, little-endian,\n"
    "                       row-major, no header\n"
    "\n";

/* ---- the application's functions ---- */

static double jacobi_init(void *user, int64_t r, int64_t c)
{
    (void)user, (void)c;
    return r == 0 ? 1.0 : 0.0;
}

static void jacobi_step_row(void *user, const tess_grid_view *u, int64_t r, int64_t c0, int64_t c1,
                            int64_t tick, double *out)
{
    (void)tick;
    const jacobi *j = user;
    int64_t last_row = j->rows + 1, last_col = j->cols + 1;
    if (r == 0 || r == last_row) { /* the boundary ring never changes */
        for (int64_t c = c0; c < c1; c++) out[c - c0] = tess_grid_at(u, r, c);
        return;
    }
    const double *up = &u->base[(r - 1 - u->r0) * u->stride - u->c0];
    const double *mid = &u->base[(r - u->r0) * u->stride - u->c0];
    const double *down = &u->base[(r + 1 - u->r0) * u->stride - u->c0];
    for (int64_t c = c0; c < c1; c++) {
        if (c == 0 || c == last_col) out[c - c0] = mid[c];
        else out[c - c0] = 0.25 * ((up[c] + down[c]) + (mid[c - 1] + mid[c + 1]));
    }
}

static int jacobi_setup(tess_ctx *ctx, jacobi *j)
{
    j->grid = (tess_grid_stencil){.fns = {.rows = j->rows + 2,
                                          .cols = j->cols + 2,
                                          .init = jacobi_init,
                                          .step_row = jacobi_step_row},
                                  .radius = 1,
                                  .ring = 1};
    j->tick = (tess_tick_app){.name = APP};
    return tess_grid_stencil_app(ctx, &j->grid, &j->tick);
}

/* ---- options ---- */

static int parse(int argc, char **argv, jacobi *j)
{
    int seen[3] = {0};
    const app_opt opts[] = {
        {"rows", APP_OPT_INT, &j->rows, 1, 1000000, 0, &seen[0], NULL},
        {"cols", APP_OPT_INT, &j->cols, 1, 1000000, 0, &seen[1], NULL},
        {"dump", APP_OPT_TEXT, &j->dump_path, 0, 0, 0, &seen[2], NULL},
    };
    int rc = app_tick_cli_parse(APP, &j->cli, usage, opts, (int)(sizeof opts / sizeof *opts), argc,
                                argv);
    if (rc != 0) return rc;
    if (!seen[0] || !seen[1]) {
        app_error(APP, "option --%s: required", seen[0] ? "cols" : "rows");
        return -1;
    }
    app_tick_cli_set_job(&j->cli, "rows=%ld cols=%ld", j->rows, j->cols);
    return app_tick_cli_check(APP, &j->cli);
}

/* ---- running ---- */

static int write_dump(void *arg, const tess_tick_result *res, FILE *fp)
{
    if (fp == NULL) return 0; /* no --dump */
    jacobi *j = arg;
    size_t cells = (size_t)(j->rows + 2) * (size_t)(j->cols + 2);
    double *u = malloc(cells * sizeof *u);
    if (u == NULL) {
        app_error(APP, "out of memory for the dump");
        return -1;
    }
    int rc =
        tess_grid_unpack(res->final_state.data, res->final_state.len, j->rows + 2, j->cols + 2, u);
    if (rc != 0) app_error(APP, "the final state is malformed (%s)", tess_strerror(rc));
    else if (fwrite(u, sizeof *u, cells, fp) != cells) {
        app_error(APP, "cannot write %s: %s", j->dump_path, strerror(errno ? errno : EIO));
        rc = -1;
    }
    free(u);
    return rc;
}

static void add_metrics(void *arg, app_metrics *m)
{
    const jacobi *j = arg;
    app_metrics_int(m, "rows", j->rows);
    app_metrics_int(m, "cols", j->cols);
}

static int64_t cells(void *arg)
{
    const jacobi *j = arg;
    return (int64_t)(j->rows + 2) * (j->cols + 2);
}

/* The grid must be larger than the layout of the workers' blocks. */
static int prepare(tess_ctx *ctx, void *arg)
{
    jacobi *j = arg;
    int n = tess_workers_total(ctx);
    tess_query *parts = malloc((size_t)n * sizeof *parts);
    if (parts == NULL) tess_set_error(ctx, TESS_ERR_NOMEM, "out of memory");
    int rc = jacobi_setup(ctx, j);
    if (rc == 0) rc = parts ? j->tick.part(ctx, j, NULL, n, parts) : -1;
    free(parts);
    if (rc != 0 && tess_rank(ctx) == 0) app_error(APP, "%s", tess_last_error(ctx));
    return rc;
}

int jacobi_main(int argc, char **argv)
{
    jacobi j;
    memset(&j, 0, sizeof j);
    double start = tess_now();
    int rc = parse(argc, argv, &j);
    if (rc != 0) return rc > 0 ? 0 : 2;
    app_tick_spec spec = {.name = APP,
                          .app = &j,
                          .cli = &j.cli,
                          .tick = &j.tick,
                          .output_path = j.dump_path,
                          .output_option = "dump",
                          .start = start,
                          .prepare = prepare,
                          .write_output = write_dump,
                          .add_metrics = add_metrics,
                          .tuples = cells};
    return app_tick_main(&spec);
}
