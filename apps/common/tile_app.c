/*
 * tile_app.c — the shared main of the tiles-face applications (tile_app.h).
 */
#include <errno.h>
#include <string.h>
#include "tessera/tile_pipe.h"
#include "tile_app.h"
#include "tile_ckpt.h"

typedef struct tile_run {
    const app_tile_spec *spec;
    app_outfile files[APP_TILE_MAX_FILES], stats;
    app_tile_ckpt ckpt;
} tile_run;

/* Write the files asked for that are written `before` the run or not. */
static int write_files(tile_run *r, int before)
{
    const app_tile_spec *s = r->spec;
    for (int i = 0; i < APP_TILE_MAX_FILES; i++) {
        const app_tile_file *f = &s->files[i];
        if (f->path == NULL || f->before != before) continue;
        errno = 0;
        if (f->write(s->app, r->files[i].fp) == 0) continue;
        if (errno != 0) app_error(s->name, "cannot write %s: %s", f->path, strerror(errno));
        else app_error(s->name, "cannot write %s", f->path);
        return -1;
    }
    return 0;
}

/* Opened before the run, so an unwritable path fails before the tiles. */
static int open_outputs(tile_run *r)
{
    const app_tile_spec *s = r->spec;
    for (int i = 0; i < APP_TILE_MAX_FILES; i++) {
        if (s->files[i].path == NULL) continue;
        if (app_outfile_open(&r->files[i], s->files[i].path) != 0) return -1;
        if (s->files[i].opened) s->files[i].opened(s->app, r->files[i].fp);
    }
    if (s->cli->stats_path && app_outfile_open(&r->stats, s->cli->stats_path) != 0) return -1;
    return write_files(r, 1);
}

static void pipeline_line(const app_tile_spec *s, const tess_tile_pipeline_stats *ps)
{
    const tess_tile_stream_stats *w = &ps->stream[0];
    fprintf(stderr,
            "%s: pipeline of %d stages in %.3f s (stage 1 %llu tiles on %d processors, stage 2 "
            "%llu tiles on %d); stream: peak %.1f MiB of a %.1f MiB window, stage 1 held back "
            "%.3f s, stage 2 waited %.3f s\n",
            s->name, ps->nstages, ps->seconds, (unsigned long long)ps->stage[0].tiles,
            ps->stage[0].nprocs, (unsigned long long)ps->stage[1].tiles, ps->stage[1].nprocs,
            (double)w->peak_bytes / 1048576.0, (double)w->window_bytes / 1048576.0, w->write_wait,
            w->read_wait);
}

/* The application's two stages at once; *last: the last stage's statistics. */
static int run_pipeline(const app_tile_spec *s, tess_ctx *ctx, tess_tile_stats *last)
{
    tess_tile_pipeline pl = {.nstages = 2, .window_bytes = s->window_bytes};
    pl.stage[0] = s->first_stage;
    pl.stage[1] = s->job;
    for (int k = 0; k < 2; k++) {
        pl.opt[k] = s->cli->opt;
        pl.opt[k].progress = app_progress_enabled(s->cli->progress);
        pl.opt[k].seed = s->seed;
        if (s->stage_processors[k] != NULL) pl.opt[k].processors = s->stage_processors[k];
    }
    if (s->stage_processors[0] == NULL && s->cli->opt.processors == NULL)
        pl.opt[0].processors = "cpu";
    tess_tile_pipeline_stats ps;
    if (tess_tile_pipeline_run(ctx, &pl, &ps) != TESS_OK) {
        char why[1024];
        app_error(s->name, "%s", tess_last_error_copy(ctx, why, sizeof why));
        return -1;
    }
    if (s->cli->progress != APP_PROGRESS_OFF) pipeline_line(s, &ps);
    *last = ps.stage[1]; /* handed over: not freed with the others */
    memset(&ps.stage[1], 0, sizeof ps.stage[1]);
    tess_tile_pipeline_stats_free(&ps);
    return 0;
}

static int control(tess_ctx *ctx, void *arg)
{
    tile_run *r = arg;
    const app_tile_spec *s = r->spec;
    if (open_outputs(r) != 0 || app_tile_ckpt_open(&r->ckpt) != 0) return -1;
    tess_tile_stats st;
    if (s->stages > 1 ? run_pipeline(s, ctx, &st) != 0
                      : app_tile_cli_run(s->cli, ctx, s->job, s->seed, s->name, &st) != 0)
        return -1;
    int rc = app_tile_ckpt_finish(&r->ckpt);
    if (rc == 0) rc = write_files(r, 0);
    if (rc == 0)
        rc = app_tile_cli_report(s->cli, ctx, &st, r->stats.fp, s->name, s->what, s->units(s->app));
    if (rc == 0 && s->after && s->cli->progress != APP_PROGRESS_OFF) s->after(s->app);
    tess_tile_stats_free(&st);
    return rc;
}

/* The statistics first: if they fail, no output appears. */
static int finish_outputs(tile_run *r, int rc)
{
    const app_tile_spec *s = r->spec;
    app_outfile *files[APP_TILE_MAX_FILES + 1] = {&r->stats};
    const char *paths[APP_TILE_MAX_FILES + 1] = {s->cli->stats_path};
    for (int i = 0, last = APP_TILE_MAX_FILES - 1; i < APP_TILE_MAX_FILES; i++) {
        files[1 + i] = &r->files[last - i];
        paths[1 + i] = s->files[last - i].path;
    }
    return app_outfiles_finish(files, paths, APP_TILE_MAX_FILES + 1, rc);
}

static int finish(tile_run *r, tess_ctx *ctx, int rc)
{
    if (tess_rank(ctx) == 0) rc = finish_outputs(r, rc);
    int interrupted = tess_interrupted(ctx);
    tess_finalize(ctx);
    app_tile_ckpt_free(&r->ckpt);
    r->spec->release(r->spec->app);
    if (rc != 0 && interrupted) return 130;
    return rc == 0 ? 0 : 1;
}

/* Two options naming one file would leave only the last written (the
 * statistics over the output, say).  Every rank decides alike; rank 0
 * says why. */
static int outputs_distinct(const app_tile_spec *s, tess_ctx *ctx)
{
    const char *names[APP_TILE_MAX_FILES + 1] = {"stats"};
    const char *paths[APP_TILE_MAX_FILES + 1] = {s->cli->stats_path};
    int n = 1;
    for (int i = 0; i < APP_TILE_MAX_FILES; i++)
        if (s->files[i].path != NULL) {
            names[n] = s->files[i].option ? s->files[i].option : "output";
            paths[n++] = s->files[i].path;
        }
    const char *app = tess_rank(ctx) == 0 ? s->name : NULL;
    if (app_outputs_distinct(app, names, paths, n) != 0) return -1;
    return app_outputs_spare_inputs(app, s->input_options, s->inputs, 2, names, paths, n);
}

int app_tile_main(const app_tile_spec *spec)
{
    tile_run r = {.spec = spec};
    tess_config cfg;
    tess_config_init(&cfg);
    /* the controller (one per stage); processors are threads of their own */
    cfg.workers = spec->stages > 1 ? spec->stages : 1;
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != 0) {
        spec->release(spec->app);
        return 1;
    }
    if (outputs_distinct(spec, ctx) != 0) {
        tess_finalize(ctx);
        spec->release(spec->app);
        return 2; /* a usage error, as those found while parsing */
    }
    int rc = spec->prepare(ctx, spec->app);
    if (rc == 0 && app_tile_cli_check(spec->cli, ctx, spec->job, spec->name) != 0) {
        tess_finalize(ctx);
        spec->release(spec->app);
        return 2; /* options that do not fit the job, as those found while parsing */
    }
    if (rc == 0) rc = app_tile_ckpt_prepare(&r.ckpt, ctx, spec);
    if (rc == 0) rc = tess_main(ctx, control, &r);
    return finish(&r, ctx, rc);
}
