/*
 * run.c — the public entry points of the tiles face: registering a job,
 * checking options, and running one (a kernel instance per worker; the
 * first worker of each rank becomes the rank's controller, control.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "comm/comm.h"
#include "sched/sched.h"
#include "tessera/tile_pipe.h"
#include "tile/tile_internal.h"

#define TILE_KERNEL TESS__TILE_KERNEL

void tess__tile_free(tess_ctx *ctx)
{
    if (ctx->tile == NULL) return;
    free(ctx->tile->jobs);
    free(ctx->tile->shared_out);
    free(ctx->tile);
    ctx->tile = NULL;
}

/* One instance per worker: worker w of each rank runs the controller of
 * stage w (a plain run has one stage: the first worker); the others
 * return at once.  args: one tess__tile_args per stage. */
static int tile_kernel(tess_task *task, const void *args, size_t len)
{
    tess_ctx *ctx = tess_task_ctx(task);
    tess__tile_args a;
    size_t stages = len / sizeof a;
    if (len % sizeof a != 0 || stages == 0 || ctx->tile == NULL) return TESS_ERR_INVAL;
    int w = tess_task_worker(task) - ctx->worker_base[ctx->rank];
    if (w < 0 || (size_t)w >= stages) return TESS_OK; /* no stage of its own */
    memcpy(&a, (const uint8_t *)args + (size_t)w * sizeof a, sizeof a);
    if (a.job < 0 || a.job >= ctx->tile->njobs) return TESS_ERR_INVAL;
    const tess_tile_job *job = tess__tile_pipe_job(ctx, &a);
    int rc = tess__tile_control_run(ctx, job ? job : ctx->tile->jobs[a.job], &a);
    tess__tile_pipe_stage_ended(ctx, &a, rc);
    return rc;
}

static int check_job(tess_ctx *ctx, const tess_tile_job *job)
{
    TESS_RETURN_IF(ctx, job == NULL || job->name == NULL, TESS_ERR_INVAL,
                   "tess_tile_register(): the job has no name");
    TESS_RETURN_IF(ctx, job->out_bytes == 0, TESS_ERR_INVAL,
                   "tile job '%s': out_bytes is 0 (a kernel must produce output)", job->name);
    int kernels = 0;
    for (int k = 0; k < TESS_TILE_KINDS; k++) kernels += job->kernel[k] != NULL;
    TESS_RETURN_IF(ctx, kernels == 0, TESS_ERR_INVAL, "tile job '%s' has no kernel", job->name);
    int no_input = job->in_bytes > 0 && job->read == NULL && job->input == NULL;
    TESS_RETURN_IF(ctx, no_input && job->input_hi != job->input_lo, TESS_ERR_INVAL,
                   "tile job '%s': input rows given without the input", job->name);
    /* With more ranks this one may own no rows; the run checks them all. */
    TESS_RETURN_IF(ctx, no_input && ctx->nranks == 1, TESS_ERR_INVAL,
                   "tile job '%s': in_bytes is %zu but there is no input (input with "
                   "input_lo/input_hi, or read)",
                   job->name, job->in_bytes);
    TESS_RETURN_IF(ctx, job->output_rank < 0 || job->output_rank >= ctx->nranks, TESS_ERR_INVAL,
                   "tile job '%s': output rank %d is not one of the %d ranks", job->name,
                   job->output_rank, ctx->nranks);
    tess__tile_policy_spec pol = {.kind = TILE_APC};
    tess__tile_area area;
    return tess__tile_job_area(ctx, job, &pol, &area);
}

#define SHARED_OUTPUT_MAX ((size_t)1 << 30)

/* At tess_main: where this rank writes job i's outputs for the output rank. */
static void attach_output(tess_ctx *ctx, uint8_t *const *ptrs, void *arg)
{
    int i = (int)(intptr_t)arg;
    ctx->tile->shared_out[i] = ptrs[ctx->tile->jobs[i]->output_rank];
}

/*
 * The output rank asks for an image of the job's whole output in its
 * node-shared segment: a rank beside it then writes each tile's output
 * there and sends only the box, instead of the output in messages that
 * move only when both progress threads get a core (2-rank Black-Scholes
 * spent a quarter of its time gathering them).  The output rank copies
 * from the image into the output array or hands it to write().  Outputs
 * over 1 GiB keep to messages: the image doubles the output's memory.
 */
static int request_shared_output(tess_ctx *ctx, const tess_tile_job *job, int i)
{
    tess__tile_reg *r = ctx->tile;
    uint8_t **grown = realloc(r->shared_out, (size_t)(i + 1) * sizeof *grown);
    TESS_RETURN_IF(ctx, grown == NULL, TESS_ERR_NOMEM, "out of memory");
    r->shared_out = grown;
    grown[i] = NULL;
    size_t bytes = job->out_bytes;
    for (int d = 0; d < job->ndims; d++) bytes *= (size_t)job->extent[d];
    int to_stream = job->write == tess_tile_stream_write; /* a pipeline's: this process only */
    int wanted = ctx->rank == job->output_rank && (job->output || (job->write && !to_stream)) &&
                 bytes <= SHARED_OUTPUT_MAX;
    return tess__comm_share_request(ctx, wanted ? bytes : 0, attach_output, (void *)(intptr_t)i);
}

int tess_tile_register(tess_ctx *ctx, const tess_tile_job *job)
{
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE, "tess_tile_register() after tess_main()");
    int rc = check_job(ctx, job);
    if (rc != TESS_OK) return rc;
    if (ctx->tile == NULL) {
        ctx->tile = calloc(1, sizeof *ctx->tile);
        TESS_RETURN_IF(ctx, ctx->tile == NULL, TESS_ERR_NOMEM, "out of memory");
        rc = tess_register_kernel(ctx, TILE_KERNEL, tile_kernel);
        if (rc != TESS_OK) return rc;
    }
    tess__tile_reg *r = ctx->tile;
    for (int i = 0; i < r->njobs; i++)
        TESS_RETURN_IF(ctx, strcmp(r->jobs[i]->name, job->name) == 0, TESS_ERR_INVAL,
                       "tile job '%s' registered twice", job->name);
    const tess_tile_job **jobs = realloc(r->jobs, (size_t)(r->njobs + 1) * sizeof *jobs);
    TESS_RETURN_IF(ctx, jobs == NULL, TESS_ERR_NOMEM, "out of memory");
    r->jobs = jobs;
    rc = request_shared_output(ctx, job, r->njobs);
    if (rc == TESS_OK) jobs[r->njobs++] = job;
    return rc;
}

int tess_tile_options_check(tess_ctx *ctx, const tess_tile_job *job, const tess_tile_options *o)
{
    tess__tile_proc_spec specs[TILE_MAX_PROCS];
    int n;
    tess__tile_policy_spec pol;
    tess__tile_area area;
    int rc = tess__tile_parse_processors(ctx, o->processors, specs, &n);
    if (rc == TESS_OK) rc = tess__tile_parse_policy(ctx, o->policy, job->ndims, &pol);
    if (rc == TESS_OK && tess__tile_policy_fit(job, &pol))
        tess__log(ctx,
                  "policy '%s': tiles of tile job '%s' kept within its smallest and largest "
                  "tile (%llu cells each)",
                  o->policy, job->name, (unsigned long long)pol.cells);
    if (rc == TESS_OK) rc = tess__tile_job_area(ctx, job, &pol, &area);
    for (int i = 0; rc == TESS_OK && i < n; i++)
        TESS_RETURN_IF(ctx, job->kernel[specs[i].kind] == NULL, TESS_ERR_INVAL,
                       "processor '%s': tile job '%s' has no kernel for it", specs[i].text,
                       job->name);
    TESS_RETURN_IF(ctx, o->queue_ms < 0 || o->boot_ms < 0, TESS_ERR_INVAL,
                   "tile options: negative queue or bootstrap time");
    return rc;
}

int tess__tile_find_job(tess_ctx *ctx, const tess_tile_job *job)
{
    for (int i = 0; ctx->tile && job && i < ctx->tile->njobs; i++)
        if (ctx->tile->jobs[i] == job || strcmp(ctx->tile->jobs[i]->name, job->name) == 0) return i;
    return -1;
}

int tess__tile_args_from_options(tess_ctx *ctx, const tess_tile_options *o, tess__tile_args *a)
{
    const char *procs = o->processors ? o->processors : "";
    const char *policy = o->policy ? o->policy : "apc";
    TESS_RETURN_IF(ctx, strlen(procs) >= sizeof a->processors, TESS_ERR_INVAL,
                   "processors '%s': longer than %zu characters", procs, sizeof a->processors - 1);
    TESS_RETURN_IF(ctx, strlen(policy) >= sizeof a->policy, TESS_ERR_INVAL, "policy '%s': too long",
                   policy);
    snprintf(a->processors, sizeof a->processors, "%s", procs);
    snprintf(a->policy, sizeof a->policy, "%s", policy);
    a->queue_s = (o->queue_ms > 0 ? o->queue_ms : 100.0) / 1e3;
    a->boot_s = (o->boot_ms > 0 ? o->boot_ms : 10.0) / 1e3;
    a->chunk = o->chunk_bytes > 0 ? o->chunk_bytes : (size_t)1 << 20;
    a->seed = o->seed;
    a->progress = o->progress;
    a->nstages = 1;
    return TESS_OK;
}

int tess_tile_run(tess_ctx *ctx, const tess_tile_job *job, const tess_tile_options *o,
                  tess_tile_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    /* first: from a kernel, the run's state below belongs to a run going on */
    int rc = tess__check_control(ctx, "tess_tile_run()");
    if (rc != TESS_OK) return rc;
    int idx = tess__tile_find_job(ctx, job);
    TESS_RETURN_IF(ctx, idx < 0, TESS_ERR_NOTFOUND, "tile job '%s' is not registered",
                   job && job->name ? job->name : "(null)");
    int streamed = (job->read == tess_tile_stream_read && job->read_arg == NULL) ||
                   (job->write == tess_tile_stream_write && job->write_arg == NULL);
    TESS_RETURN_IF(ctx, streamed, TESS_ERR_INVAL,
                   "tile job '%s' is a pipeline's stage (its input or output is a stream): run "
                   "it with tess_tile_pipeline_run",
                   job->name);
    tess_tile_options none = {0};
    if (o == NULL) o = &none;
    rc = tess_tile_options_check(ctx, job, o);
    if (rc != TESS_OK) return rc;
    tess__tile_args a = {.job = idx, .run_id = ++ctx->tile->runs};
    rc = tess__tile_args_from_options(ctx, o, &a);
    if (rc != TESS_OK) return rc;
    tess__tile_stats_begin(stats, ctx->nranks, a.policy);
    TESS_RETURN_IF(ctx, stats->ranks == NULL, TESS_ERR_NOMEM, "out of memory");
    ctx->tile->result = stats;
    a.t0 = tess_now();
    rc = tess__sched_run_job(ctx, TILE_KERNEL, &a, sizeof a);
    ctx->tile->result = NULL;
    if (rc != TESS_OK) {
        tess_tile_stats_free(stats);
        return rc;
    }
    tess__tile_stats_finish(stats);
    return TESS_OK;
}
