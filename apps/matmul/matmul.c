/*
 * matmul.c — `tessera run matmul`: C = A * B on the tables face (Piccolo
 * §4.4), the control function and the setup.  The kernels and the table
 * layout are described in matmul_kernels.c.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matmul_app.h"

/* One kernel over the partitions of A (or, with every_worker, once per
 * worker), then the barrier; the time goes to *seconds. */
static int run_phase(tess_ctx *ctx, mm_app *app, const char *kernel, int every_worker,
                     const char *what, double *seconds)
{
    double t0 = tess_now();
    int rc = every_worker ? tess_run(ctx, kernel, TESS_EVERY_WORKER, NULL, NULL, 0)
                          : tess_run(ctx, kernel, app->partitions, app->a, NULL, 0);
    if (rc == 0) rc = tess_barrier(ctx);
    *seconds = tess_now() - t0;
    if (rc != 0) return app_control_fail(MM_APP, ctx, what, rc);
    if (app_progress_enabled(app->opt.run.progress))
        fprintf(stderr, "matmul: %s: %.3f s\n", what, *seconds);
    return 0;
}

/* ---------------------------------------------------------------- output */

/* Partition p of C into the row-major matrix full (n x n). */
static int gather_partition(mm_app *app, int p, double *full)
{
    const mm_geom *g = &app->g;
    size_t bd = (size_t)g->block * (size_t)g->block;
    tess_iter *it = NULL;
    int rc = tess_table_iter(app->c, p, &it);
    const void *key, *value;
    size_t len;
    while (rc == 0 && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        uint64_t k;
        memcpy(&k, key, sizeof k);
        rc = k < (uint64_t)(g->nb * g->nb) && len == bd * sizeof(double) ? 0 : TESS_ERR_FORMAT;
        long bi = (long)k / g->nb, bj = (long)k % g->nb;
        long rows = mm_block_extent(g, bi), cols = mm_block_extent(g, bj);
        for (long r = 0; rc == 0 && r < rows; r++)
            memcpy(full + (size_t)(bi * g->block + r) * (size_t)g->n + (size_t)(bj * g->block),
                   (const char *)value + (size_t)r * (size_t)g->block * sizeof(double),
                   (size_t)cols * sizeof(double));
    }
    tess_iter_free(it);
    return rc;
}

/* All of C on rank 0; a non-finite element (the inputs are finite) is an
 * overflow and fails the run. */
static int gather_c(tess_ctx *ctx, mm_app *app, double **out)
{
    size_t n2 = (size_t)app->g.n * (size_t)app->g.n;
    double *full = malloc(n2 * sizeof *full);
    int rc = full ? 0 : TESS_ERR_NOMEM;
    for (int p = 0; rc == 0 && p < app->partitions; p++) rc = gather_partition(app, p, full);
    if (rc != 0) {
        free(full);
        return app_control_fail(MM_APP, ctx, "collecting C", rc);
    }
    for (size_t i = 0; i < n2; i++)
        if (!isfinite(full[i])) {
            app_error(MM_APP, "C(%zu, %zu) overflowed: the products exceed float64's range",
                      i / (size_t)app->g.n, i % (size_t)app->g.n);
            free(full);
            return TESS_ERR_INVAL;
        }
    *out = full;
    return 0;
}

/* ---------------------------------------------------------------- check */

static int read_whole(const mm_app *app, int which, double *m)
{
    char err[512];
    const char *path = which == 0 ? app->opt.input_a : app->opt.input_b;
    if (mm_read_rows(path, (uint64_t)app->opt.seed, which, app->g.n, 0, app->g.n, m, err,
                     sizeof err) == 0)
        return 0;
    app_error(MM_APP, "%s", err);
    return TESS_ERR_FORMAT;
}

/* |C - dgemm(A, B)| <= 2 n eps (|A| |B|) element by element: both products
 * are within n eps |A||B| of the exact one (the standard bound of a sum of n
 * products), whatever order they add in. */
static int check_against_dgemm(mm_app *app, const double *c)
{
    int n = (int)app->g.n;
    size_t n2 = (size_t)n * (size_t)n;
    double *a = malloc(n2 * sizeof *a), *b = malloc(n2 * sizeof *b);
    double *ref = malloc(n2 * sizeof *ref), *bound = malloc(n2 * sizeof *bound);
    int rc = a && b && ref && bound ? 0 : TESS_ERR_NOMEM;
    if (rc == 0) rc = read_whole(app, 0, a);
    if (rc == 0) rc = read_whole(app, 1, b);
    if (rc == 0) {
        mm_dgemm(n, n, n, 0.0, a, n, b, n, ref, n);
        for (size_t i = 0; i < n2; i++) a[i] = fabs(a[i]), b[i] = fabs(b[i]);
        mm_dgemm(n, n, n, 0.0, a, n, b, n, bound, n);
        double worst = 0.0, used = 0.0;
        size_t at = 0;
        for (size_t i = 0; i < n2; i++) {
            double tol = 2.0 * n * DBL_EPSILON * bound[i] + DBL_MIN;
            double ratio = fabs(c[i] - ref[i]) / tol;
            if (ratio > used) used = ratio, at = i;
            worst = fmax(worst, fabs(c[i] - ref[i]));
        }
        app->check_max_error = worst;
        app->check_tolerance_used = used;
        if (used > 1.0) {
            app_error(MM_APP, "--check: C(%zu, %zu) is %.17g, dgemm gives %.17g: beyond the bound",
                      at / (size_t)n, at % (size_t)n, c[at], ref[at]);
            rc = TESS_ERR_INVAL;
        }
    }
    free(a), free(b), free(ref), free(bound);
    return rc;
}

/* ---------------------------------------------------------------- control */

static int write_metrics(tess_ctx *ctx, const mm_app *app, FILE *fp)
{
    app_metrics *m = app_metrics_new();
    double n = (double)app->g.n;
    app_metrics_standard(m, ctx, MM_APP, tess_now() - app->start);
    app_metrics_int(m, "n", app->g.n);
    app_metrics_int(m, "block", app->g.block);
    app_metrics_int(m, "blocks_per_side", app->g.nb);
    app_metrics_int(m, "partitions", app->partitions);
    app_metrics_num(m, "load_seconds", app->load_seconds);
    app_metrics_num(m, "replicate_seconds", app->replicate_seconds);
    app_metrics_num(m, "multiply_seconds", app->multiply_seconds);
    /* The product's time: copying B and the block products; loading A and
     * B is the input's cost, which a peer such as ScaLAPACK also leaves out. */
    double product = app->replicate_seconds + app->multiply_seconds;
    app_metrics_num(m, "product_seconds", product);
    app_metrics_num(m, "gflops", 2.0 * n * n * n / product / 1e9);
    app_metrics_num(m, "checksum", app->checksum);
    if (app->opt.check) {
        app_metrics_num(m, "check_seconds", app->check_seconds);
        app_metrics_num(m, "check_max_abs_error", app->check_max_error);
        app_metrics_num(m, "check_bound_fraction", app->check_tolerance_used);
    }
    return app_metrics_finish(MM_APP, ctx, m, fp);
}

static int control_finish(tess_ctx *ctx, mm_app *app)
{
    double *c = NULL;
    int rc = gather_c(ctx, app, &c);
    size_t n2 = (size_t)app->g.n * (size_t)app->g.n;
    for (size_t i = 0; rc == 0 && i < n2; i++) app->checksum += c[i];
    if (rc == 0 && app->opt.run.output && app_outfile_open(&app->out_c, app->opt.run.output) != 0)
        rc = TESS_ERR_IO;
    if (rc == 0 && app->opt.run.metrics &&
        app_outfile_open(&app->out_metrics, app->opt.run.metrics) != 0)
        rc = TESS_ERR_IO;
    if (rc == 0 && app->opt.check) {
        /* One BLAS thread: OpenBLAS's own threads synchronise in ways a
         * thread sanitizer cannot see, and a check need not be fast. */
        double t0 = tess_now();
        rc = check_against_dgemm(app, c);
        app->check_seconds = tess_now() - t0;
        /* Asked for, so said unless --quiet. */
        if (rc == 0 && app->opt.run.progress != APP_PROGRESS_OFF)
            fprintf(stderr, "matmul: check: max |C - dgemm| = %g, %.3g of the bound\n",
                    app->check_max_error, app->check_tolerance_used);
    }
    if (rc == 0 && app->out_c.fp && fwrite(c, sizeof *c, n2, app->out_c.fp) != n2)
        rc = app_control_fail(MM_APP, ctx, "writing C", TESS_ERR_IO);
    if (rc == 0 && app->out_metrics.fp) rc = write_metrics(ctx, app, app->out_metrics.fp);
    free(c);
    app_outfile *files[] = {&app->out_c, &app->out_metrics};
    const char *paths[] = {app->opt.run.output, app->opt.run.metrics};
    return app_outfiles_finish(files, paths, 2, rc);
}

static int mm_control(tess_ctx *ctx, void *arg)
{
    mm_app *app = arg;
    int rc = 0; /* a bad output path fails before the work; nothing is created yet */
    if (app->opt.run.output && app_outfile_check(app->opt.run.output) != 0) rc = TESS_ERR_IO;
    if (rc == 0 && app->opt.run.metrics && app_outfile_check(app->opt.run.metrics) != 0)
        rc = TESS_ERR_IO;
    if (rc == 0) rc = run_phase(ctx, app, "matmul_load", 0, "loading A and B", &app->load_seconds);
    if (rc == 0)
        rc = run_phase(ctx, app, "matmul_replicate", 1, "copying B to every rank",
                       &app->replicate_seconds);
    if (rc == 0)
        rc = run_phase(ctx, app, "matmul_multiply", 0, "multiplying", &app->multiply_seconds);
    if (rc == 0) return control_finish(ctx, app);
    app_outfile_abort(&app->out_c);
    app_outfile_abort(&app->out_metrics);
    return rc;
}

/* ---------------------------------------------------------------- setup */

/* Block rows cut into P ranges as evenly as they go. */
static int plan_partitions(tess_ctx *ctx, mm_app *app)
{
    long want = app->opt.run.partitions ? app->opt.run.partitions : app->g.nb;
    if (want > app->g.nb) {
        if (tess_rank(ctx) == 0)
            app_error(MM_APP, "option --partitions: %ld is more than the %ld block rows", want,
                      app->g.nb);
        return TESS_ERR_INVAL;
    }
    app->partitions = (int)want;
    app->row_bounds = malloc((size_t)(want + 1) * sizeof *app->row_bounds);
    if (!app->row_bounds) return TESS_ERR_NOMEM;
    for (long p = 0; p <= want; p++) app->row_bounds[p] = p * app->g.nb / want;
    return 0;
}

static int create_blocks(tess_ctx *ctx, mm_app *app, const char *name, tess_table *group,
                         tess_table **out)
{
    uint64_t *bounds = malloc((size_t)(app->partitions + 1) * sizeof *bounds);
    if (!bounds) return TESS_ERR_NOMEM;
    for (int p = 0; p <= app->partitions; p++)
        bounds[p] = (uint64_t)(app->row_bounds[p] * app->g.nb);
    tess_table_spec spec;
    tess_table_spec_init(&spec);
    spec.name = name;
    spec.key_size = sizeof(uint64_t);
    spec.value_size = (size_t)app->g.block * (size_t)app->g.block * sizeof(double);
    spec.partitions = app->partitions;
    spec.dense = 1;
    spec.key_count = (uint64_t)(app->g.nb * app->g.nb);
    spec.range_bounds = bounds;
    spec.elem = TESS_F64;
    spec.group_with = group;
    int rc = tess_table_create(ctx, &spec, out);
    free(bounds);
    return rc;
}

/* Input files are checked on every rank before any kernel runs, so a bad
 * file is one message from rank 0 and no work. */
static int check_inputs(tess_ctx *ctx, const mm_app *app)
{
    char err[512];
    const char *files[2] = {app->opt.input_a, app->opt.input_b};
    for (int i = 0; i < 2; i++)
        if (files[i] && mm_check_file(files[i], app->g.n, err, sizeof err) != 0) {
            if (tess_rank(ctx) == 0) app_error(MM_APP, "%s", err);
            return TESS_ERR_FORMAT;
        }
    return 0;
}

static int prepare(tess_ctx *ctx, void *arg)
{
    mm_app *app = arg;
    int rc = check_inputs(ctx, app);
    if (rc == 0) rc = plan_partitions(ctx, app);
    if (rc != 0) return rc;
    rc = create_blocks(ctx, app, "A", NULL, &app->a);
    if (rc == 0) rc = create_blocks(ctx, app, "B", app->a, &app->b);
    if (rc == 0) rc = create_blocks(ctx, app, "C", app->a, &app->c);
    if (rc == 0) rc = tess_register_kernel(ctx, "matmul_load", mm_load_kernel);
    if (rc == 0) rc = tess_register_kernel(ctx, "matmul_multiply", mm_multiply_kernel);
    if (rc == 0) rc = tess_register_kernel(ctx, "matmul_replicate", mm_replicate_kernel);
    if (rc != 0 && tess_rank(ctx) == 0) app_control_fail(MM_APP, ctx, "setting up tables", rc);
    if (rc == 0) rc = mm_bcache_init(&app->bcache, app);
    return rc;
}

static int begin(void *arg, int argc, char **argv, tess_config *cfg)
{
    mm_app *app = arg;
    app->start = tess_now();
    int rc = mm_opts_parse(argc, argv, &app->opt);
    if (rc != 0) return rc;
    mm_geom_init(&app->g, app->opt.n, app->opt.block);
    /* The workers are the parallelism: each dgemm runs on one thread, which
     * also makes every block the same bits whoever computes it. */
    if (mm_blas_load() != 0) return -2;
    app_config(cfg, app->opt.run.workers);
    /* No work stealing unless TESS_STEAL=1 asks for it: the partitions are
     * equal by construction, and a task stolen in the short load phase
     * takes its partitions along for good, so the multiply ran 5 block rows
     * on one rank and 3 on the other, then stole again with 32 MB per move:
     * N = 4000 on 2 ranks took 2.2-2.4 s instead of 1.6 in 3 runs of 5. */
    const char *steal = getenv("TESS_STEAL");
    if (steal == NULL || strcmp(steal, "1") != 0) cfg->steal = 0;
    return 0;
}

static void end(void *arg)
{
    mm_app *app = arg;
    mm_bcache_free(&app->bcache, app->partitions);
    free(app->row_bounds);
}

/* For app_tables_run: the state's size, begin, prepare, control, after, end. */
static const app_tables_def def = {sizeof(mm_app), begin, prepare, mm_control, NULL, end};

int matmul_main(int argc, char **argv) { return app_tables_run(&def, argc, argv); }
