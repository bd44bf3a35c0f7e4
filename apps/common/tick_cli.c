/*
 * tick_cli.c — options and metrics shared by the tick-face applications.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tick_cli.h"

const char app_tick_cli_usage[] =
    "tick options:\n"
    "  --ticks T            ticks to run (required)\n"
    "  --alg A              bsp | local | sched | repl | combined | auto (default\n"
    "                       local; auto times 20 ticks of local first, then runs\n"
    "                       the algorithm, D, K and M its figures call for)\n"
    "  --depth D            dependency-scheduling depth for sched/combined (default 1)\n"
    "  --period K           ticks between exchanges for repl/combined (default 1)\n"
    "  --layers M           replica layers for repl/combined, K <= M+1 (default 0)\n"
    "  --workers W          tick processes (worker threads) per rank\n"
    "  --jitter SPEC        latency model: none | fixed:US | cloud | ec2-2011 | modern |\n"
    "                       trace:FILE (measured: tessera bench latency --profile) |\n"
    "                       lognormal:median=US,sigma=S[,spike_p=P,spike_xm=US,\n"
    "                       spike_alpha=A,spike_cap=US][,bw=MBPS][,stall_rate=R,\n"
    "                       stall_mean=US]   (docs/latency.md; default none)\n"
    "  --seed S             seed of the latency model only (default 0)\n"
    "  --step-cost US       emulate US microseconds of compute per tick (runs are\n"
    "                       then labelled emulated)\n"
    "  --clock C            real (default) | virtual: simulated time, moved only by\n"
    "                       the --step-cost model and the latency model, so more\n"
    "                       workers than cores report what one core each would\n"
    "                       give (needs --step-cost; one process, no MPI ranks)\n"
    "  --repart-every N     call PART again every N ticks (multiple of --period)\n"
    "  --progress-every N   progress line every N ticks (default: about every second)\n"
    "  --quiet              no progress or summary lines\n"
    "  --metrics FILE       write run metrics as JSON\n";

enum {
    SEEN_TICKS,
    SEEN_ALG,
    SEEN_DEPTH,
    SEEN_PERIOD,
    SEEN_LAYERS,
    SEEN_WORKERS,
    SEEN_JITTER,
    SEEN_SEED,
    SEEN_COST,
    SEEN_REPART,
    SEEN_PROGRESS,
    SEEN_QUIET,
    SEEN_METRICS,
    SEEN_CLOCK,
    SEEN_COUNT
};

void app_tick_cli_init(app_tick_cli *c)
{
    memset(c, 0, sizeof *c);
    tess_tick_options_init(&c->opt);
    c->opt.ticks = -1;
    c->opt.jitter = "none";
    c->opt.progress_every = -1;
}

static int parse_alg(const char *app, const app_opt *o, const char *v)
{
    if (tess_tick_alg_parse(v, o->dest) == 0) return 0;
    app_error(app, "option --alg: unknown algorithm '%s' (bsp, local, sched, repl, combined, auto)",
              v);
    return -1;
}

static int parse_clock(const char *app, const app_opt *o, const char *v)
{
    if (tess_tick_clock_parse(v, o->dest) == 0) return 0;
    app_error(app, "option --clock: unknown clock '%s' (real, virtual)", v);
    return -1;
}

/* The shared options, each given at most once.  The int64_t and uint64_t
 * fields take APP_OPT_INT's long (the same width on the LP64 targets). */
static int tick_options(app_tick_cli *c, app_opt *out)
{
    tess_tick_options *t = &c->opt;
    int *s = c->seen;
    const app_opt opts[SEEN_COUNT] = {
        {"ticks", APP_OPT_INT, &t->ticks, 0, 1e9, 0, &s[SEEN_TICKS], NULL},
        {"alg", APP_OPT_CUSTOM, &t->alg, 0, 0, 0, &s[SEEN_ALG], parse_alg},
        {"depth", APP_OPT_INT32, &t->depth, 1, 1000, 0, &s[SEEN_DEPTH], NULL},
        {"period", APP_OPT_INT32, &t->period, 1, 1000, 0, &s[SEEN_PERIOD], NULL},
        {"layers", APP_OPT_INT32, &t->layers, 0, 1000, 0, &s[SEEN_LAYERS], NULL},
        {"workers", APP_OPT_INT, &c->workers, 1, 4096, 0, &s[SEEN_WORKERS], NULL},
        {"jitter", APP_OPT_TEXT, &t->jitter, 0, 0, 0, &s[SEEN_JITTER], NULL},
        {"seed", APP_OPT_INT, &t->seed, 0, 2147483647L, 0, &s[SEEN_SEED], NULL},
        {"step-cost", APP_OPT_DOUBLE, &t->step_cost_us, 0, 1e9, 0, &s[SEEN_COST], NULL},
        {"repart-every", APP_OPT_INT, &t->repart_every, 1, 1e9, 0, &s[SEEN_REPART], NULL},
        {"progress-every", APP_OPT_INT, &t->progress_every, 0, 1e9, 0, &s[SEEN_PROGRESS], NULL},
        {"quiet", APP_OPT_FLAG, &c->quiet, 0, 0, 1, &s[SEEN_QUIET], NULL},
        {"metrics", APP_OPT_TEXT, &c->metrics_path, 0, 0, 0, &s[SEEN_METRICS], NULL},
        {"clock", APP_OPT_CUSTOM, &t->clock, 0, 0, 0, &s[SEEN_CLOCK], parse_clock},
    };
    memcpy(out, opts, sizeof opts);
    return SEEN_COUNT;
}

int app_tick_cli_parse(const char *app, app_tick_cli *c, const char *usage, const app_opt *own,
                       int n, int argc, char **argv)
{
    app_opt shared[SEEN_COUNT + APP_CKPT_CLI_OPTIONS];
    static char text[10000];
    app_tick_cli_init(c);
    snprintf(text, sizeof text, "%s%scheckpoint options (docs/checkpoints.md, \"Ticks\"):\n%s",
             usage, app_tick_cli_usage, app_ckpt_cli_usage);
    int m = tick_options(c, shared);
    m += app_ckpt_cli_options(&c->ckpt, shared + m);
    return app_parse_options_with(app, text, argc, argv, own, n, shared, m);
}

void app_tick_cli_set_job(app_tick_cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->job, sizeof c->job, fmt, ap);
    va_end(ap);
    c->opt.checkpoint_job = c->job;
}

/* The checkpoint options into the run's: the same parser and checks as the
 * tables face's (ckpt_cli.c); the interval counts ticks. */
static int take_checkpoint_options(const char *app, app_tick_cli *c)
{
    if (app_ckpt_cli_check(app, &c->ckpt) != 0) return -1;
    c->opt.checkpoint_dir = c->ckpt.dir;
    c->opt.checkpoint_every = c->ckpt.every;
    c->opt.restore = c->ckpt.restore;
    c->opt.checkpoint_overwrite = c->ckpt.overwrite;
    return 0;
}

int app_tick_cli_check(const char *app, app_tick_cli *c)
{
    if (c->opt.ticks < 0) {
        app_error(app, "option --ticks: required");
        return -1;
    }
    /* Parameters an algorithm does not use are an error, not silently ignored. */
    int sched = c->opt.alg == TESS_TICK_SCHED || c->opt.alg == TESS_TICK_COMBINED;
    int repl = c->opt.alg == TESS_TICK_REPL || c->opt.alg == TESS_TICK_COMBINED;
    if (c->seen[SEEN_DEPTH] && !sched) {
        app_error(app, "option --depth: only for --alg sched or combined");
        return -1;
    }
    if ((c->seen[SEEN_PERIOD] || c->seen[SEEN_LAYERS]) && !repl) {
        app_error(app, "option --%s: only for --alg repl or combined",
                  c->seen[SEEN_PERIOD] ? "period" : "layers");
        return -1;
    }
    if (c->quiet) c->opt.progress_every = 0;
    return take_checkpoint_options(app, c);
}

/* The flag of each tess_tick_options field the library names in its errors. */
static const char *const field_flags[][2] = {{"alg", "alg"},
                                             {"ticks", "ticks"},
                                             {"depth", "depth"},
                                             {"period", "period"},
                                             {"layers", "layers"},
                                             {"progress_every", "progress-every"},
                                             {"repart_every", "repart-every"},
                                             {"step_cost_us", "step-cost"},
                                             {"clock", "clock"},
                                             {"checkpoint_dir", "checkpoint-dir"},
                                             {"checkpoint_every", "checkpoint-every"},
                                             {"jitter", "jitter"}};

/* "FIELD: REASON" from the library becomes "option --FLAG: REASON". */
static void report_options_error(const char *app, const char *msg)
{
    const char *colon = strchr(msg, ':');
    size_t len = colon ? (size_t)(colon - msg) : 0;
    for (size_t i = 0; i < sizeof field_flags / sizeof *field_flags; i++)
        if (len == strlen(field_flags[i][0]) && strncmp(msg, field_flags[i][0], len) == 0) {
            app_error(app, "option --%s:%s", field_flags[i][1], colon + 1);
            return;
        }
    app_error(app, "%s", msg);
}

int app_tick_cli_validate(const char *app, const app_tick_cli *c, tess_ctx *ctx)
{
    if (tess_tick_options_check(ctx, &c->opt) == 0) return 0;
    if (tess_rank(ctx) == 0) report_options_error(app, tess_last_error(ctx));
    return -1;
}

void app_tick_cli_config(const app_tick_cli *c, tess_config *cfg) { app_config(cfg, c->workers); }

/* One process's figures, as an entry of per_worker. */
static app_metrics *figures_object(const tess_tick_figures *f, int64_t ticks)
{
    app_metrics *o = app_metrics_new();
    double wall = f->wall_seconds;
    app_metrics_num(o, "wall_seconds", wall);
    app_metrics_num(o, "ticks_per_second", wall > 0 ? (double)ticks / wall : 0);
    app_metrics_num(o, "tuple_ticks_per_second", wall > 0 ? (double)f->own_tuple_ticks / wall : 0);
    app_metrics_num(o, "step_seconds", f->step_seconds);
    app_metrics_num(o, "wait_seconds", f->wait_seconds);
    app_metrics_num(o, "runtime_seconds", f->runtime_seconds);
    app_metrics_num(o, "cpu_seconds", f->cpu_seconds);
    app_metrics_num(o, "runtime_cpu_seconds", f->runtime_cpu_seconds);
    app_metrics_int(o, "messages", (int64_t)f->messages);
    app_metrics_int(o, "bytes", (int64_t)f->bytes);
    return o;
}

void app_tick_metrics(app_metrics *m, tess_ctx *ctx, const char *app, const app_tick_cli *c,
                      const tess_tick_result *res, double wall_seconds, int64_t tuples)
{
    (void)tuples;
    const tess_tick_figures *t = &res->total;
    double secs = t->wall_seconds;
    app_metrics_standard(m, ctx, app, wall_seconds);
    app_metrics_str(m, "jitter", c->opt.jitter ? c->opt.jitter : "none");
    app_metrics_int(m, "seed", (int64_t)c->opt.seed);
    app_metrics_bool(m, "emulated", c->opt.step_cost_us > 0);
    app_metrics_num(m, "step_cost_us", c->opt.step_cost_us);
    /* Virtual: every time below is simulated, not measured on this machine. */
    app_metrics_str(m, "clock", tess_tick_clock_name(c->opt.clock));
    /* What ran: with --alg auto, what it chose (alg_requested says auto). */
    app_metrics_str(m, "alg_requested", tess_tick_alg_name(c->opt.alg));
    app_metrics_str(m, "alg", tess_tick_alg_name(res->alg));
    app_metrics_int(m, "depth", res->depth);
    app_metrics_int(m, "period", res->period);
    app_metrics_int(m, "layers", res->layers);
    if (c->opt.alg == TESS_TICK_AUTO) {
        const tess_tick_calibration *k = &res->calibration;
        app_metrics_int(m, "calibration_ticks", k->ticks);
        app_metrics_num(m, "calibration_seconds", k->seconds);
        app_metrics_num(m, "calibration_step_seconds", k->step_s);
        app_metrics_num(m, "calibration_wait_seconds", k->wait_s);
        app_metrics_num(m, "calibration_wait_median_seconds", k->wait_median_s);
        app_metrics_num(m, "calibration_layer_ratio", k->layer_ratio);
        app_metrics_num(m, "calibration_busy", k->busy);
        app_metrics_num(m, "calibration_step_cpu_share", k->step_cpu_share);
    }
    app_metrics_int(m, "repart_every", c->opt.repart_every);
    app_metrics_int(m, "ticks", c->opt.ticks);
    app_metrics_num(m, "tick_seconds", secs);
    app_metrics_num(m, "ticks_per_second", secs > 0 ? (double)c->opt.ticks / secs : 0);
    app_metrics_num(m, "tuple_ticks_per_second", secs > 0 ? (double)t->own_tuple_ticks / secs : 0);
    app_metrics_num(m, "step_seconds", t->step_seconds);
    app_metrics_num(m, "wait_seconds", t->wait_seconds);
    app_metrics_num(m, "runtime_seconds", t->runtime_seconds);
    app_metrics_num(m, "cpu_seconds", t->cpu_seconds);
    app_metrics_num(m, "step_cpu_seconds", t->step_cpu_seconds);
    app_metrics_num(m, "wait_cpu_seconds", t->wait_cpu_seconds);
    app_metrics_num(m, "runtime_cpu_seconds", t->runtime_cpu_seconds);
    /* The runtime's own CPU share of the run: its CPU over the processes' time. */
    app_metrics_num(m, "runtime_cpu_fraction",
                    secs > 0 ? t->runtime_cpu_seconds / (secs * res->processes) : 0);
    app_metrics_int(m, "messages", (int64_t)t->messages);
    app_metrics_int(m, "bytes", (int64_t)t->bytes);
    app_metrics_int(m, "tuple_ticks", t->tuple_ticks);
    if (c->opt.checkpoint_dir) {
        app_metrics_int(m, "checkpoint_every", c->opt.checkpoint_every);
        app_metrics_int(m, "checkpoints", res->checkpoints);
        app_metrics_int(m, "restored_epoch", (int64_t)res->restored_epoch);
        app_metrics_int(m, "restored_tick", res->restored_tick);
        app_metrics_num(m, "restore_seconds", res->restore_seconds);
    }
    app_metrics **per = calloc((size_t)res->processes + 1, sizeof *per);
    for (int i = 0; per != NULL && i < res->processes; i++)
        per[i] = figures_object(&res->per_process[i], c->opt.ticks);
    if (per == NULL) app_metrics_objects(m, "per_worker", NULL, -1); /* flags the OOM */
    else app_metrics_objects(m, "per_worker", per, res->processes);
    free(per);
}

void app_tick_restored_line(const char *app, const app_tick_cli *c, const tess_tick_result *res)
{
    if (res->restored_tick <= 0) return;
    fprintf(stderr, "%s: restored checkpoint epoch %llu (tick %lld of %lld) from %s in %.3f s\n",
            app, (unsigned long long)res->restored_epoch, (long long)res->restored_tick,
            (long long)c->opt.ticks, c->opt.checkpoint_dir, res->restore_seconds);
}

void app_tick_summary(const char *app, const app_tick_cli *c, const tess_tick_result *res,
                      int64_t tuples)
{
    if (c->quiet) return;
    const tess_tick_figures *t = &res->total;
    double secs = t->wall_seconds, n = res->processes > 0 ? res->processes : 1;
    if (c->opt.alg == TESS_TICK_AUTO) {
        const tess_tick_calibration *k = &res->calibration;
        fprintf(stderr,
                "tessera %s: auto: %lld ticks of local took %.3f ms of STEP and waited %.3f ms "
                "per tick (median tick %.3f ms), kept %.0f%% of the cores busy, a ghost layer "
                "adds %.1f%% to a partition: %s d=%d k=%d m=%d\n",
                app, (long long)k->ticks, k->step_s * 1e3, k->wait_s * 1e3, k->wait_median_s * 1e3,
                k->busy * 100, k->layer_ratio * 100, tess_tick_alg_name(res->alg), res->depth,
                res->period, res->layers);
    }
    fprintf(stderr,
            "tessera %s: %lld ticks of %lld tuples in %.3f s: %.1f ticks/s (%s, %d processes%s); "
            "per process: step %.3f s, wait %.3f s, runtime %.3f s\n",
            app, (long long)c->opt.ticks, (long long)tuples, secs,
            secs > 0 ? (double)c->opt.ticks / secs : 0.0, tess_tick_alg_name(res->alg),
            res->processes,
            c->opt.clock == TESS_TICK_CLOCK_VIRTUAL ? ", virtual clock: simulated time"
            : c->opt.step_cost_us > 0               ? ", emulated step cost"
                                                    : "",
            t->step_seconds / n, t->wait_seconds / n, t->runtime_seconds / n);
}
