/*
 * tick_app.c — the shared main of the tick-face applications (tick_app.h).
 */
#include "tick_app.h"

typedef struct tick_run {
    const app_tick_spec *spec;
    app_outfile output, metrics;
} tick_run;

/* Opened before the run, so an unwritable path fails before the ticks. */
static int open_outputs(tick_run *r)
{
    const app_tick_spec *s = r->spec;
    if (s->output_path && app_outfile_open(&r->output, s->output_path) != 0) return -1;
    if (s->cli->metrics_path && app_outfile_open(&r->metrics, s->cli->metrics_path) != 0) return -1;
    return 0;
}

/* All or nothing: a failure in either leaves neither. */
static int commit_outputs(tick_run *r)
{
    app_outfile *const files[] = {&r->output, &r->metrics};
    const char *const paths[] = {r->spec->output_path, r->spec->cli->metrics_path};
    return app_outfiles_finish(files, paths, 2, 0);
}

/* Every rank decides alike; rank 0 says why. */
static int outputs_distinct(const app_tick_spec *s, tess_ctx *ctx)
{
    const char *const names[] = {s->output_option ? s->output_option : "output", "metrics"};
    const char *const paths[] = {s->output_path, s->cli->metrics_path};
    const char *app = tess_rank(ctx) == 0 ? s->name : NULL;
    const char *const in_o[] = {s->input_option}, *const in_p[] = {s->input_path};
    if (app_outputs_distinct(app, names, paths, 2) != 0) return -1;
    return app_outputs_spare_inputs(app, in_o, in_p, 1, names, paths, 2);
}

static void abort_outputs(tick_run *r)
{
    app_outfile_abort(&r->output);
    app_outfile_abort(&r->metrics);
}

static int write_metrics(tick_run *r, tess_ctx *ctx, const tess_tick_result *res)
{
    const app_tick_spec *s = r->spec;
    app_metrics *m = app_metrics_new();
    if (m == NULL) {
        app_error(s->name, "out of memory for the metrics");
        return -1;
    }
    app_tick_metrics(m, ctx, s->name, s->cli, res, tess_now() - s->start, s->tuples(s->app));
    if (s->add_metrics) s->add_metrics(s->app, m);
    int rc = app_metrics_print(m, r->metrics.fp);
    if (rc != 0) app_error(s->name, "cannot write %s", s->cli->metrics_path);
    app_metrics_free(m);
    return rc;
}

static int control(tess_ctx *ctx, void *arg)
{
    tick_run *r = arg;
    const app_tick_spec *s = r->spec;
    if (open_outputs(r) != 0) return -1;
    tess_tick_result res;
    int rc = tess_tick_run(ctx, s->tick, &s->cli->opt, &res);
    if (rc != 0) {
        char why[1024]; /* a signal ends the run while tick processes may still fail */
        app_error(s->name, "%s", tess_last_error_copy(ctx, why, sizeof why));
        return rc;
    }
    app_tick_restored_line(s->name, s->cli, &res);
    rc = s->write_output(s->app, &res, s->output_path ? r->output.fp : NULL);
    if (rc == 0 && s->cli->metrics_path) rc = write_metrics(r, ctx, &res);
    if (rc == 0) app_tick_summary(s->name, s->cli, &res, s->tuples(s->app));
    tess_tick_result_free(&res);
    return rc;
}

int app_tick_main(const app_tick_spec *spec)
{
    tess_config cfg;
    app_tick_cli_config(spec->cli, &cfg);
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != 0) return 1;
    tick_run r = {.spec = spec};
    if (app_tick_cli_validate(spec->name, spec->cli, ctx) != 0 ||
        outputs_distinct(spec, ctx) != 0) {
        tess_finalize(ctx);
        return 2; /* a usage error, as those found while parsing */
    }
    int rc = spec->prepare(ctx, spec->app);
    if (rc == 0) {
        rc = tess_tick_register(ctx, spec->tick);
        if (rc != 0 && tess_rank(ctx) == 0) app_error(spec->name, "%s", tess_last_error(ctx));
    }
    if (rc == 0) rc = tess_main(ctx, control, &r);
    if (tess_rank(ctx) == 0) {
        if (rc == 0) rc = commit_outputs(&r);
        if (rc != 0) abort_outputs(&r);
    }
    int interrupted = tess_interrupted(ctx);
    tess_finalize(ctx);
    if (rc != 0 && interrupted) return 130;
    return rc == 0 ? 0 : 1;
}
