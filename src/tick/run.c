/*
 * run.c — the public entry points of the tick face: registering
 * applications, running one (a kernel instance per worker, each a tick
 * process), and the result that process 0 gathers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sched/sched.h"
#include "tick/tick_internal.h"

#define TICK_KERNEL "tess.tick"

static int tick_kernel(tess_task *task, const void *args, size_t len);

void tess__tick_free(tess_ctx *ctx)
{
    if (ctx->tick == NULL) return;
    free(ctx->tick->apps);
    free(ctx->tick);
    ctx->tick = NULL;
}

static int valid_app(const tess_tick_app *app)
{
    const tess_state_class *c = app->state;
    return app->name && c && c->create && c->destroy && c->clear && c->init && c->pack &&
           c->merge && c->step && c->count && c->snapshot && app->part && app->rd && app->wd &&
           app->rx && app->wx && app->disjoint;
}

int tess_tick_register(tess_ctx *ctx, const tess_tick_app *app)
{
    TESS_RETURN_IF(ctx, ctx->started, TESS_ERR_MISUSE, "tess_tick_register() after tess_main()");
    TESS_RETURN_IF(ctx, app == NULL || !valid_app(app), TESS_ERR_INVAL,
                   "tess_tick_register(): the application lacks a name, state class or "
                   "Table-1 function");
    if (ctx->tick == NULL) {
        ctx->tick = calloc(1, sizeof *ctx->tick);
        TESS_RETURN_IF(ctx, ctx->tick == NULL, TESS_ERR_NOMEM, "out of memory");
        int rc = tess_register_kernel(ctx, TICK_KERNEL, tick_kernel);
        if (rc != TESS_OK) return rc;
    }
    tess__tick_reg *r = ctx->tick;
    for (int i = 0; i < r->napps; i++)
        TESS_RETURN_IF(ctx, strcmp(r->apps[i]->name, app->name) == 0, TESS_ERR_INVAL,
                       "tick application '%s' registered twice", app->name);
    const tess_tick_app **apps = realloc(r->apps, (size_t)(r->napps + 1) * sizeof *apps);
    TESS_RETURN_IF(ctx, apps == NULL, TESS_ERR_NOMEM, "out of memory");
    apps[r->napps++] = app;
    r->apps = apps;
    return TESS_OK;
}

static int tick_kernel(tess_task *task, const void *args, size_t len)
{
    tess_ctx *ctx = tess_task_ctx(task);
    tick_args a;
    if (len != sizeof a || ctx->tick == NULL) return TESS_ERR_INVAL;
    memcpy(&a, args, sizeof a);
    if (a.app < 0 || a.app >= ctx->tick->napps) return TESS_ERR_INVAL;
    int me = tess_task_worker(task);
    tess_tick_result *res = me == 0 ? ctx->tick->result : NULL;
    return tess__tick_process_run(ctx, ctx->tick->apps[a.app], &a, me, res);
}

static int find_app(tess_ctx *ctx, const tess_tick_app *app)
{
    for (int i = 0; ctx->tick && i < ctx->tick->napps; i++)
        if (ctx->tick->apps[i] == app || strcmp(ctx->tick->apps[i]->name, app->name) == 0) return i;
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tess__tick_median(double *v, int n)
{
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of f(process) over the processes (0 without any). */
static double median_of(const tess_tick_result *res, double (*f)(const tess_tick_figures *))
{
    int n = res->processes;
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (v == NULL) return 0.0;
    for (int i = 0; i < n; i++) v[i] = f(&res->per_process[i]);
    double m = tess__tick_median(v, n);
    free(v);
    return m;
}

static double layer_ratio_of(const tess_tick_figures *f) { return f->layer_ratio; }
static double wait_median_of(const tess_tick_figures *f) { return f->wait_median_seconds; }

static void sum_figures(tess_tick_result *res)
{
    tess_tick_figures *t = &res->total;
    memset(t, 0, sizeof *t);
    for (int i = 0; i < res->processes; i++) {
        const tess_tick_figures *f = &res->per_process[i];
        if (f->wall_seconds > t->wall_seconds) t->wall_seconds = f->wall_seconds;
        t->step_seconds += f->step_seconds;
        t->wait_seconds += f->wait_seconds;
        t->runtime_seconds += f->runtime_seconds;
        t->cpu_seconds += f->cpu_seconds;
        t->step_cpu_seconds += f->step_cpu_seconds;
        t->wait_cpu_seconds += f->wait_cpu_seconds;
        t->runtime_cpu_seconds += f->runtime_cpu_seconds;
        t->messages += f->messages;
        t->bytes += f->bytes;
        t->tuple_ticks += f->tuple_ticks;
        t->own_tuple_ticks += f->own_tuple_ticks;
    }
    t->layer_ratio = median_of(res, layer_ratio_of);
    t->wait_median_seconds = median_of(res, wait_median_of);
}

/* What a run holds on rank 0 besides its result. */
static void release_run(tess_ctx *ctx)
{
    tess__tick_vclock_free(ctx->tick->vclock);
    ctx->tick->vclock = NULL;
    tess__tick_ckpt_close(ctx->tick->ckpt);
    ctx->tick->ckpt = NULL;
}

static int run_once(tess_ctx *ctx, const tess_tick_app *app, const tess_tick_options *o,
                    tess_tick_result *res)
{
    memset(res, 0, sizeof *res);
    int idx = app ? find_app(ctx, app) : -1;
    TESS_RETURN_IF(ctx, idx < 0, TESS_ERR_NOTFOUND, "tick application '%s' is not registered",
                   app && app->name ? app->name : "(null)");
    tick_args a;
    int rc = tess__tick_args_from_options(ctx, o, &a);
    if (rc != TESS_OK) return rc;
    a.app = idx;
    a.run_id = ++ctx->tick->runs;
    rc = tess__tick_ckpt_open(ctx, app, o, &ctx->tick->ckpt);
    if (rc != TESS_OK) return rc;
    a.restore_tick = tess__tick_ckpt_restored_tick(ctx->tick->ckpt);
    a.t0_us = tess__tick_now_us();
    if (a.virtual_clock) ctx->tick->vclock = tess__tick_vclock_new(ctx->workers_total);
    res->processes = ctx->workers_total;
    res->per_process = calloc((size_t)res->processes, sizeof *res->per_process);
    if (res->per_process == NULL || (a.virtual_clock && ctx->tick->vclock == NULL)) {
        release_run(ctx);
        tess_tick_result_free(res);
        return tess__fail(ctx, TESS_ERR_NOMEM, "out of memory");
    }
    ctx->tick->result = res;
    rc = tess__sched_run_job(ctx, TICK_KERNEL, &a, sizeof a);
    ctx->tick->result = NULL;
    if (rc == TESS_OK) tess__tick_ckpt_report(ctx->tick->ckpt, res);
    release_run(ctx);
    if (rc != TESS_OK) {
        tess_tick_result_free(res);
        return rc;
    }
    sum_figures(res);
    res->alg = o->alg;
    res->depth = a.depth > 0 ? a.depth : 1;
    res->period = a.period;
    res->layers = a.layers;
    return TESS_OK;
}

/*
 * TESS_TICK_AUTO: a calibration run of local synchronisation over the first
 * ticks (from the initial state, then discarded), then the whole run with
 * what tess__tick_auto_choose makes of its step time, wait and layer cost.  The
 * state is the one every algorithm gives; only time differs.
 */
static int run_auto(tess_ctx *ctx, const tess_tick_app *app, const tess_tick_options *o,
                    tess_tick_result *res)
{
    tess_tick_options c = *o;
    c.alg = TESS_TICK_LOCAL;
    c.ticks = o->ticks < TICK_AUTO_CALIBRATION ? o->ticks : TICK_AUTO_CALIBRATION;
    c.repart_every = 0;
    c.progress_every = 0;
    c.checkpoint_dir = NULL; /* timing only: the run below checkpoints and restores */
    c.restore = c.checkpoint_overwrite = 0;
    tess_tick_calibration cal = {.ticks = c.ticks};
    if (c.ticks > 0) {
        tess_tick_result r;
        int rc = run_once(ctx, app, &c, &r);
        if (rc != TESS_OK) return rc;
        double n = (double)r.processes * (double)c.ticks;
        cal.seconds = r.total.wall_seconds;
        cal.step_s = r.total.step_seconds / n;
        cal.wait_s = r.total.wait_seconds / n;
        cal.layer_ratio = r.total.layer_ratio;
        cal.wait_median_s = r.total.wait_median_seconds;
        /* Cores the processes could use: one each, at most the machine's per rank
         * (assumed alike across ranks). */
        double cores = (double)tess__usable_cores() * ctx->nranks;
        if (cores > r.processes) cores = r.processes;
        /* With an emulated step cost the waits' CPU counts as busy, as it did
         * when it was measured for real compute only (the thresholds of
         * auto.c were set so). */
        double busy_cpu =
            r.total.cpu_seconds - (o->step_cost_us > 0 ? 0 : r.total.wait_cpu_seconds);
        /* On the virtual clock each process has a core of its own and is busy
         * exactly its modelled compute; this machine's CPU time means nothing. */
        if (o->clock == TESS_TICK_CLOCK_VIRTUAL) {
            cores = r.processes;
            busy_cpu = r.total.step_seconds;
        }
        cal.busy = cal.seconds > 0 ? busy_cpu / (cal.seconds * cores) : 0;
        /* an emulated step cost sleeps or is modelled: its core is free */
        cal.step_cpu_share = o->step_cost_us > 0 ? 0
                             : r.total.step_seconds > 0
                                 ? r.total.step_cpu_seconds / r.total.step_seconds
                                 : 1;
        tess_tick_result_free(&r);
    }
    tess_tick_options run = *o;
    tess__tick_auto_choose(&cal, o->repart_every, &run.alg, &run.depth, &run.period, &run.layers);
    int rc = run_once(ctx, app, &run, res);
    if (rc == TESS_OK) res->calibration = cal;
    return rc;
}

int tess_tick_run(tess_ctx *ctx, const tess_tick_app *app, const tess_tick_options *o,
                  tess_tick_result *res)
{
    memset(res, 0, sizeof *res);
    int rc = tess_tick_options_check(ctx, o);
    if (rc != TESS_OK) return rc;
    return o->alg == TESS_TICK_AUTO ? run_auto(ctx, app, o, res) : run_once(ctx, app, o, res);
}

void tess_tick_result_free(tess_tick_result *res)
{
    if (res == NULL) return;
    free(res->per_process);
    tess_buf_free(&res->final_state);
    memset(res, 0, sizeof *res);
}
