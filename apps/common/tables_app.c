/*
 * tables_app.c — the one main of the tables-face applications (common.h):
 * the application's begin hook parses the command line, then the runtime
 * starts with its configuration, its tables are prepared on every rank, its
 * control function runs, the runtime is finalised, the state freed, and the
 * outcome mapped to an exit status the same way for every application.  Also
 * the options they share.
 */
#include <stdlib.h>
#include <string.h>

#include "ckpt_cli.h"
#include "common.h"

int app_run_options(app_run_opts *r, long max_partitions, app_opt *out)
{
    const app_opt opts[APP_RUN_OPTIONS] = {
        {"workers", APP_OPT_INT, &r->workers, 1, 4096, 0, NULL, NULL},
        {"partitions", APP_OPT_INT, &r->partitions, 1, (double)max_partitions, 0, NULL, NULL},
        {"output", APP_OPT_STRING, &r->output, 0, 0, 0, NULL, NULL},
        {"metrics", APP_OPT_STRING, &r->metrics, 0, 0, 0, NULL, NULL},
        {"progress", APP_OPT_FLAG, &r->progress, 0, 0, APP_PROGRESS_ON, NULL, NULL},
        {"quiet", APP_OPT_FLAG, &r->progress, 0, 0, APP_PROGRESS_OFF, NULL, NULL},
    };
    memcpy(out, opts, sizeof opts);
    return APP_RUN_OPTIONS;
}

int app_run_parse(const char *app, const char *usage, app_run_opts *run, long max_partitions,
                  app_ckpt_cli *ckpt, const app_opt *own, int n, int argc, char **argv)
{
    app_opt shared[APP_RUN_OPTIONS + APP_CKPT_CLI_OPTIONS];
    int m = app_run_options(run, max_partitions, shared);
    if (ckpt == NULL) return app_parse_options_with(app, usage, argc, argv, own, n, shared, m);
    m += app_ckpt_cli_options(ckpt, shared + m);
    static char text[8192];
    snprintf(text, sizeof text, "%s%s", usage, app_ckpt_cli_usage);
    return app_parse_options_with(app, text, argc, argv, own, n, shared, m);
}

int app_control_fail(const char *app, tess_ctx *ctx, const char *what, int rc)
{
    char detail[1024]; /* kernels may still be failing after a barrier ended on a signal */
    tess_last_error_copy(ctx, detail, sizeof detail);
    app_error(app, "%s: %s", what, detail[0] ? detail : tess_strerror(rc));
    return rc;
}

int app_metrics_finish(const char *app, tess_ctx *ctx, app_metrics *m, FILE *fp)
{
    int rc = app_metrics_print(m, fp) == 0 ? 0 : TESS_ERR_NOMEM;
    app_metrics_free(m);
    return rc == 0 ? 0 : app_control_fail(app, ctx, "writing metrics", rc);
}

void app_config(tess_config *cfg, long workers)
{
    tess_config_init(cfg);
    if (workers > 0) cfg->workers = (int)workers;
}

static int tables_main(const app_tables_def *d, void *app, const tess_config *cfg)
{
    tess_ctx *ctx = NULL;
    if (tess_init(cfg, &ctx) != TESS_OK) return 1;
    int rc = d->prepare(ctx, app);
    if (rc == TESS_OK) rc = tess_main(ctx, d->control, app);
    if (d->after != NULL) rc = d->after(ctx, app, rc);
    /* SIGINT/SIGTERM: 130, as a shell reports a process ended by a signal */
    int interrupted = tess_interrupted(ctx);
    tess_finalize(ctx);
    if (rc != TESS_OK && interrupted) return 130;
    return rc == TESS_OK ? 0 : 1;
}

int app_tables_run(const app_tables_def *d, int argc, char **argv)
{
    void *app = calloc(1, d->size);
    if (app == NULL) return 1;
    tess_config cfg;
    int rc = d->begin(app, argc, argv, &cfg);
    if (rc == 0) {
        rc = tables_main(d, app, &cfg);
        if (d->end != NULL) d->end(app);
    } else {
        rc = rc > 0 ? 0 : rc == -2 ? 1 : 2; /* --help, another failure, a usage error */
    }
    free(app);
    return rc;
}
