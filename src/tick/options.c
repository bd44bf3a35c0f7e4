/*
 * options.c — tick-face options: defaults, algorithm names, the checks that
 * tie them together, and their flat form for the kernel arguments.
 */
#include <stdio.h>
#include <string.h>
#include "tick/tick_internal.h"

static const char *const alg_names[] = {"bsp", "local", "sched", "repl", "combined", "auto"};
static const char *const clock_names[] = {"real", "virtual"};
#define NAMES_N(names) ((int)(sizeof names / sizeof *names))

/* The enums' names are tables indexed by value; one lookup each way, so
 * that every enum checks its bounds and NULL alike. */
static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name != NULL && i < n; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

static const char *name_at(const char *const *names, int n, int i)
{
    return i >= 0 && i < n ? names[i] : "?";
}

void tess_tick_options_init(tess_tick_options *o)
{
    memset(o, 0, sizeof *o);
    o->alg = TESS_TICK_LOCAL;
    o->depth = 1;
    o->period = 1;
    o->layers = 0;
}

int tess_tick_alg_parse(const char *name, tess_tick_alg *out)
{
    int i = name_index(alg_names, NAMES_N(alg_names), name);
    if (i >= 0) *out = (tess_tick_alg)i;
    return i >= 0 ? TESS_OK : TESS_ERR_INVAL;
}

int tess_tick_clock_parse(const char *name, tess_tick_clock *out)
{
    int i = name_index(clock_names, NAMES_N(clock_names), name);
    if (i >= 0) *out = (tess_tick_clock)i;
    return i >= 0 ? TESS_OK : TESS_ERR_INVAL;
}

const char *tess_tick_alg_name(tess_tick_alg alg)
{
    return name_at(alg_names, NAMES_N(alg_names), (int)alg);
}

const char *tess_tick_clock_name(tess_tick_clock clock)
{
    return name_at(clock_names, NAMES_N(clock_names), (int)clock);
}

/* Checkpoints: a directory, a positive interval, --restore only with a directory. */
static int check_checkpoint_options(tess_ctx *ctx, const tess_tick_options *o)
{
    int dir = o->checkpoint_dir != NULL;
    TESS_RETURN_IF(ctx, dir && o->checkpoint_dir[0] == '\0', TESS_ERR_INVAL,
                   "checkpoint_dir: empty directory name");
    TESS_RETURN_IF(ctx, dir && o->checkpoint_every < 1, TESS_ERR_INVAL,
                   "checkpoint_every: must be >= 1, got %lld", (long long)o->checkpoint_every);
    TESS_RETURN_IF(ctx, !dir && (o->restore || o->checkpoint_overwrite), TESS_ERR_INVAL,
                   "checkpoint_dir: %s needs a checkpoint directory",
                   o->restore ? "restore" : "checkpoint_overwrite");
    return TESS_OK;
}

/*
 * The options against each other, and the latency spec parsed into
 * *jitter_out.  Messages name the field of tess_tick_options and speak of
 * values only ("depth: must be in 1..1000, got 0"); a command line maps the
 * field to its own flag (apps/common/tick_cli.c).
 */
static int check_options(tess_ctx *ctx, const tess_tick_options *o, tess__latency_spec *jitter_out)
{
    const long period = o->period, layers = o->layers;
    TESS_RETURN_IF(ctx, (int)o->alg < 0 || o->alg > TESS_TICK_AUTO, TESS_ERR_INVAL,
                   "alg: unknown algorithm %d", (int)o->alg);
    TESS_RETURN_IF(ctx, o->ticks < 0, TESS_ERR_INVAL, "ticks: must be >= 0, got %lld",
                   (long long)o->ticks);
    TESS_RETURN_IF(ctx, o->depth < 1 || o->depth > 1000, TESS_ERR_INVAL,
                   "depth: must be in 1..1000, got %d", o->depth);
    TESS_RETURN_IF(ctx, period < 1 || period > 1000, TESS_ERR_INVAL,
                   "period: must be in 1..1000, got %ld", period);
    TESS_RETURN_IF(ctx, layers < 0 || layers > 1000, TESS_ERR_INVAL,
                   "layers: must be in 0..1000, got %ld", layers);
    TESS_RETURN_IF(ctx, period > layers + 1, TESS_ERR_INVAL,
                   "period: %ld needs layers >= %ld (k <= m+1)", period, period - 1);
    TESS_RETURN_IF(ctx, o->progress_every < -1, TESS_ERR_INVAL,
                   "progress_every: must be >= 0, got %lld", (long long)o->progress_every);
    TESS_RETURN_IF(ctx, o->repart_every < 0, TESS_ERR_INVAL, "repart_every: must be >= 0, got %lld",
                   (long long)o->repart_every);
    long k = (o->alg == TESS_TICK_REPL || o->alg == TESS_TICK_COMBINED) ? period : 1;
    TESS_RETURN_IF(ctx, o->repart_every > 0 && o->repart_every % k != 0, TESS_ERR_INVAL,
                   "repart_every: %lld is not a multiple of the period %ld",
                   (long long)o->repart_every, k);
    TESS_RETURN_IF(ctx, !(o->step_cost_us >= 0), TESS_ERR_INVAL, "step_cost_us: must be >= 0");
    TESS_RETURN_IF(ctx, o->clock != TESS_TICK_CLOCK_REAL && o->clock != TESS_TICK_CLOCK_VIRTUAL,
                   TESS_ERR_INVAL, "clock: unknown clock %d", (int)o->clock);
    /* On the virtual clock compute takes only the time it is modelled to. */
    TESS_RETURN_IF(
        ctx, o->clock == TESS_TICK_CLOCK_VIRTUAL && !(o->step_cost_us > 0), TESS_ERR_INVAL,
        "clock: virtual needs a step cost (step_cost_us > 0): simulated compute takes only the time it models");
    /* The processes share one clock in memory: no simulation across ranks. */
    TESS_RETURN_IF(ctx, o->clock == TESS_TICK_CLOCK_VIRTUAL && ctx->nranks > 1, TESS_ERR_INVAL,
                   "clock: virtual runs in one process (use --workers, not %d MPI ranks)",
                   ctx->nranks);
    int rc = check_checkpoint_options(ctx, o);
    if (rc != TESS_OK) return rc;
    if (tess__latency_resolve(o->jitter, jitter_out, ctx) == TESS_OK) return TESS_OK;
    char why[400];
    snprintf(why, sizeof why, "%s", tess_last_error(ctx));
    return tess__fail(ctx, TESS_ERR_INVAL, "jitter: %s", why);
}

/*
 * Options the algorithm does not use, set away from their defaults: an
 * error (docs/ticks.md), since a program that sets depth for `local`
 * believes it runs something it does not.  Only the user's options are
 * checked; auto's own runs set what it chose.
 */
static int check_unused(tess_ctx *ctx, const tess_tick_options *o)
{
    const char *alg = tess_tick_alg_name(o->alg);
    int sched = o->alg == TESS_TICK_SCHED || o->alg == TESS_TICK_COMBINED;
    int repl = o->alg == TESS_TICK_REPL || o->alg == TESS_TICK_COMBINED;
    int set_d = o->depth != 1, set_k = o->period != 1, set_m = o->layers != 0;
    const char *what = set_d ? "depth" : set_k ? "period" : "layers";
    TESS_RETURN_IF(ctx, o->alg == TESS_TICK_AUTO && (set_d || set_k || set_m), TESS_ERR_INVAL,
                   "%s: auto chooses depth, period and layers itself (leave them at their "
                   "defaults)",
                   what);
    TESS_RETURN_IF(ctx, set_d && !sched, TESS_ERR_INVAL,
                   "depth: %d is for alg sched or combined, not %s (leave it at 1)", o->depth, alg);
    TESS_RETURN_IF(ctx, (set_k || set_m) && !repl, TESS_ERR_INVAL,
                   "%s: only alg repl or combined uses it, not %s (leave period at 1, layers at 0)",
                   set_k ? "period" : "layers", alg);
    return TESS_OK;
}

int tess_tick_options_check(tess_ctx *ctx, const tess_tick_options *o)
{
    tess__latency_spec jitter;
    if (o == NULL) return tess__fail(ctx, TESS_ERR_INVAL, "no tick options");
    int rc = check_options(ctx, o, &jitter);
    return rc == TESS_OK ? check_unused(ctx, o) : rc;
}

/* The effective (d, k, m) of an algorithm: the options it does not use are
 * neutral, so one process loop runs all five. */
int tess__tick_args_from_options(tess_ctx *ctx, const tess_tick_options *o, tick_args *a)
{
    memset(a, 0, sizeof *a);
    int rc = check_options(ctx, o, &a->jitter);
    if (rc != TESS_OK) return rc;
    a->alg = (int32_t)o->alg;
    int sched = o->alg == TESS_TICK_SCHED || o->alg == TESS_TICK_COMBINED;
    int repl = o->alg == TESS_TICK_REPL || o->alg == TESS_TICK_COMBINED;
    a->depth = sched ? o->depth : 0;
    a->period = repl ? o->period : 1;
    a->layers = repl ? o->layers : 0;
    a->ticks = o->ticks;
    a->repart_every = o->repart_every;
    a->ckpt_every = o->checkpoint_dir ? o->checkpoint_every : 0;
    a->progress_every = o->progress_every;
    a->seed = o->seed;
    a->step_cost_us = o->step_cost_us;
    a->virtual_clock = o->clock == TESS_TICK_CLOCK_VIRTUAL;
    return TESS_OK;
}
