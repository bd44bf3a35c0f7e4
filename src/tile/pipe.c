/*
 * pipe.c — pipelines of tile jobs (tessera/tile_pipe.h, docs/tiles.md
 * "Pipelines").  The stages run at once in one launch of the tiles kernel:
 * worker k of the rank runs stage k's controller (run.c), with processors
 * of its own, and its link talks to worker k of the other ranks, so the
 * stages' messages never meet.  Each stage runs a copy of its job whose
 * stream callbacks are given the bounded stream (stream.c) between it and
 * its neighbour.  When a stage ends well its output stream ends; when one
 * fails (its link's abort), every stream fails, which wakes a writer held
 * by the window and readers waiting for cells, so the other stages stop
 * with the first failure's message instead of waiting for ever.
 *
 * Embedded mode only for now: a stream lives in one process, and under
 * mpirun stage k+1's tiles may run on a rank that is not stage k's output
 * rank.
 */
#include <stdlib.h>
#include <string.h>
#include "tessera/tile_pipe.h"
#include "sched/sched.h"
#include "tile/tile_internal.h"

typedef struct tess__tile_pipe {
    int n;
    tess_tile_job jobs[TESS_TILE_MAX_STAGES]; /* the stages' jobs, streams attached */
    tess_tile_stream *streams[TESS_TILE_MAX_STAGES - 1];
} tess__tile_pipe;

static tess__tile_pipe *running(tess_ctx *ctx) { return ctx->tile ? ctx->tile->pipe : NULL; }

const tess_tile_job *tess__tile_pipe_job(tess_ctx *ctx, const tess__tile_args *a)
{
    tess__tile_pipe *p = running(ctx);
    return p != NULL && a->stage < p->n ? &p->jobs[a->stage] : NULL;
}

void tess__tile_pipe_fail(tess_ctx *ctx, int status)
{
    tess__tile_pipe *p = running(ctx);
    for (int k = 0; p != NULL && k < p->n - 1; k++) tess_tile_stream_fail(p->streams[k], status);
}

void tess__tile_pipe_stage_ended(tess_ctx *ctx, const tess__tile_args *a, int rc)
{
    tess__tile_pipe *p = running(ctx);
    if (p == NULL) return;
    if (rc != TESS_OK) tess__tile_pipe_fail(ctx, rc);
    else if (a->stage < p->n - 1) tess_tile_stream_end(p->streams[a->stage]);
}

/* Stage k's job fits its place: streams where it meets a neighbour, the
 * area and cell size of the one before. */
static int check_stage(tess_ctx *ctx, const tess_tile_pipeline *pl, int k)
{
    const tess_tile_job *j = pl->stage[k], *prev = k > 0 ? pl->stage[k - 1] : NULL;
    int last = k == pl->nstages - 1;
    TESS_RETURN_IF(ctx, j == NULL, TESS_ERR_INVAL, "pipeline: stage %d has no job", k + 1);
    const char *name = j->name ? j->name : "(null)";
    TESS_RETURN_IF(ctx, tess__tile_find_job(ctx, j) < 0, TESS_ERR_NOTFOUND,
                   "pipeline stage %d: tile job '%s' is not registered", k + 1, name);
    TESS_RETURN_IF(ctx, (k > 0) != (j->read == tess_tile_stream_read), TESS_ERR_INVAL,
                   "pipeline stage %d ('%s'): %s", k + 1, name,
                   k > 0 ? "its read must be tess_tile_stream_read (its input is the stage before)"
                         : "the first stage reads no stream");
    TESS_RETURN_IF(ctx, !last != (j->write == tess_tile_stream_write), TESS_ERR_INVAL,
                   "pipeline stage %d ('%s'): %s", k + 1, name,
                   last
                       ? "the last stage writes no stream"
                       : "its write must be tess_tile_stream_write (its output is the next stage)");
    TESS_RETURN_IF(ctx, j->done != NULL, TESS_ERR_INVAL,
                   "pipeline stage %d ('%s'): checkpoints (done) are not supported in a pipeline "
                   "yet",
                   k + 1, name);
    if (prev == NULL) return TESS_OK;
    int same = j->ndims == prev->ndims && j->in_bytes == prev->out_bytes && j->input == NULL;
    for (int d = 0; same && d < j->ndims; d++) same = j->extent[d] == prev->extent[d];
    TESS_RETURN_IF(ctx, !same, TESS_ERR_INVAL,
                   "pipeline stage %d ('%s'): its area and in_bytes must be the area and out_bytes "
                   "of stage %d ('%s'), and it has no input slab",
                   k + 1, name, k, prev->name ? prev->name : "(null)");
    return TESS_OK;
}

static int check_pipeline(tess_ctx *ctx, const tess_tile_pipeline *pl)
{
    int n = pl->nstages;
    TESS_RETURN_IF(ctx, n < 1 || n > TESS_TILE_MAX_STAGES, TESS_ERR_INVAL,
                   "pipeline: %d stages (1 to %d)", n, TESS_TILE_MAX_STAGES);
    TESS_RETURN_IF(ctx, ctx->nranks > 1, TESS_ERR_UNSUPPORTED,
                   "pipelines run in embedded mode only for now (this job has %d ranks)",
                   ctx->nranks);
    TESS_RETURN_IF(ctx, tess_workers(ctx) < n, TESS_ERR_INVAL,
                   "pipeline: %d stages need %d workers (tess_config.workers), the context has %d",
                   n, n, tess_workers(ctx));
    for (int k = 0; k < n; k++) {
        int rc = check_stage(ctx, pl, k);
        if (rc == TESS_OK) rc = tess_tile_options_check(ctx, pl->stage[k], &pl->opt[k]);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static void pipe_free(tess__tile_pipe *p)
{
    if (p == NULL) return;
    for (int k = 0; k < p->n - 1; k++) tess_tile_stream_close(p->streams[k]);
    free(p);
}

/*
 * A tile on either side of a stream holds its cells there whole (the
 * writer's output, the cells a reader waits for): keep it to a quarter of
 * the window by the rows of the first dimension (never below the job's
 * smallest tile), so that the window bounds what the stream holds.  The
 * output does not depend on the tiling.
 */
static void fit_window(tess_tile_job *j, size_t cell_bytes, size_t window)
{
    uint64_t row = cell_bytes;
    for (int d = 1; d < j->ndims; d++) row *= (uint64_t)j->max_tile[d];
    int64_t rows = (int64_t)(window / 4 / (row > 0 ? row : 1));
    if (rows < j->min_tile[0]) rows = j->min_tile[0];
    if (rows < j->max_tile[0]) j->max_tile[0] = rows;
}

/* The stages' job copies with the streams between them. */
static int pipe_make(tess_ctx *ctx, const tess_tile_pipeline *pl, tess__tile_pipe **out)
{
    tess__tile_pipe *p = calloc(1, sizeof *p);
    TESS_RETURN_IF(ctx, p == NULL, TESS_ERR_NOMEM, "out of memory");
    p->n = pl->nstages;
    int rc = TESS_OK;
    for (int k = 0; k < p->n; k++) p->jobs[k] = *pl->stage[k];
    for (int k = 0; rc == TESS_OK && k < p->n - 1; k++) {
        const tess_tile_job *j = pl->stage[k];
        rc = tess_tile_stream_open(ctx, j->ndims, j->extent, j->out_bytes, pl->window_bytes,
                                   &p->streams[k]);
        p->jobs[k].write_arg = p->streams[k];
        p->jobs[k + 1].read_arg = p->streams[k];
        if (rc != TESS_OK) break;
        tess_tile_stream_stats ws;
        tess_tile_stream_get_stats(p->streams[k], &ws);
        fit_window(&p->jobs[k], j->out_bytes, ws.window_bytes);
        fit_window(&p->jobs[k + 1], j->out_bytes, ws.window_bytes);
    }
    if (rc != TESS_OK) {
        pipe_free(p); /* the streams not opened are NULL */
        return rc;
    }
    *out = p;
    return TESS_OK;
}

static int stage_args(tess_ctx *ctx, const tess_tile_pipeline *pl, tess__tile_args *a)
{
    for (int k = 0; k < pl->nstages; k++) {
        int rc = tess__tile_args_from_options(ctx, &pl->opt[k], &a[k]);
        if (rc != TESS_OK) return rc;
        a[k].job = tess__tile_find_job(ctx, pl->stage[k]);
        a[k].run_id = ++ctx->tile->runs;
        a[k].stage = k;
        a[k].nstages = pl->nstages;
    }
    return TESS_OK;
}

/* Launch every stage's controller and wait for them all. */
static int launch(tess_ctx *ctx, tess__tile_pipe *p, tess__tile_args *a,
                  tess_tile_pipeline_stats *st)
{
    for (int k = 0; k < p->n; k++) {
        tess__tile_stats_begin(&st->stage[k], ctx->nranks, a[k].policy);
        TESS_RETURN_IF(ctx, st->stage[k].ranks == NULL, TESS_ERR_NOMEM, "out of memory");
    }
    ctx->tile->result = st->stage;
    ctx->tile->pipe = p;
    double t0 = tess_now();
    for (int k = 0; k < p->n; k++) a[k].t0 = t0;
    int rc = tess__sched_run_job(ctx, TESS__TILE_KERNEL, a, (size_t)p->n * sizeof *a);
    ctx->tile->result = NULL;
    ctx->tile->pipe = NULL;
    return rc;
}

int tess_tile_pipeline_run(tess_ctx *ctx, const tess_tile_pipeline *pl,
                           tess_tile_pipeline_stats *st)
{
    memset(st, 0, sizeof *st);
    int rc = tess__check_control(ctx, "tess_tile_pipeline_run()");
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(ctx, pl == NULL || ctx->tile == NULL, TESS_ERR_NOTFOUND,
                   "pipeline: no tile job is registered");
    rc = check_pipeline(ctx, pl);
    tess__tile_args a[TESS_TILE_MAX_STAGES];
    memset(a, 0, sizeof a);
    if (rc == TESS_OK) rc = stage_args(ctx, pl, a);
    tess__tile_pipe *p = NULL;
    if (rc == TESS_OK) rc = pipe_make(ctx, pl, &p);
    st->nstages = pl->nstages;
    if (rc == TESS_OK) rc = launch(ctx, p, a, st);
    for (int k = 0; rc == TESS_OK && k < p->n - 1; k++)
        tess_tile_stream_get_stats(p->streams[k], &st->stream[k]);
    pipe_free(p);
    if (rc != TESS_OK) {
        tess_tile_pipeline_stats_free(st);
        return rc;
    }
    for (int k = 0; k < st->nstages; k++) {
        tess__tile_stats_finish(&st->stage[k]);
        if (st->stage[k].seconds > st->seconds) st->seconds = st->stage[k].seconds;
    }
    return TESS_OK;
}

void tess_tile_pipeline_stats_free(tess_tile_pipeline_stats *st)
{
    if (st == NULL) return;
    for (int k = 0; k < TESS_TILE_MAX_STAGES; k++) tess_tile_stats_free(&st->stage[k]);
    memset(st, 0, sizeof *st);
}
