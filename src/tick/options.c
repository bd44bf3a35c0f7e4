/*
 * options.c — tick-face options: defaults, algorithm names, the checks that
 * tie them together, and their flat form for the kernel arguments.
 */
#include <stdio.h>
#include <string.h>
#include "tick/tick_internal.h"

static const char *const alg_names[] = {"bsp", "local", "sched", "repl", "combined"};

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
    for (int i = 0; i < (int)(sizeof alg_names / sizeof *alg_names); i++)
        if (name != NULL && strcmp(name, alg_names[i]) == 0) {
            *out = (tess_tick_alg)i;
            return TESS_OK;
        }
    return TESS_ERR_INVAL;
}

const char *tess_tick_alg_name(tess_tick_alg alg)
{
    if ((int)alg < 0 || (int)alg >= (int)(sizeof alg_names / sizeof *alg_names)) return "?";
    return alg_names[alg];
}

static int fail(char *err, size_t errlen, const char *msg, long a, long b)
{
    if (err != NULL && errlen > 0) snprintf(err, errlen, msg, a, b);
    return TESS_ERR_INVAL;
}

int tess_tick_options_check(const tess_tick_options *o, char *err, size_t errlen)
{
    if ((int)o->alg < 0 || o->alg > TESS_TICK_COMBINED)
        return fail(err, errlen, "option --alg: unknown algorithm %ld", (long)o->alg, 0);
    if (o->ticks < 0) return fail(err, errlen, "option --ticks: must be >= 0, got %ld", (long)o->ticks, 0);
    if (o->depth < 1 || o->depth > 1000)
        return fail(err, errlen, "option --depth: must be in 1..1000, got %ld", o->depth, 0);
    if (o->period < 1 || o->period > 1000)
        return fail(err, errlen, "option --period: must be in 1..1000, got %ld", o->period, 0);
    if (o->layers < 0 || o->layers > 1000)
        return fail(err, errlen, "option --layers: must be in 0..1000, got %ld", o->layers, 0);
    if (o->period > o->layers + 1)
        return fail(err, errlen, "option --period: %ld needs --layers >= %ld (k <= m+1)", o->period,
                    (long)o->period - 1);
    if (o->progress_every < -1)
        return fail(err, errlen, "option --progress-every: must be >= 0, got %ld", (long)o->progress_every, 0);
    if (o->repart_every < 0)
        return fail(err, errlen, "option --repart-every: must be >= 0, got %ld", (long)o->repart_every, 0);
    int period = (o->alg == TESS_TICK_REPL || o->alg == TESS_TICK_COMBINED) ? o->period : 1;
    if (o->repart_every > 0 && o->repart_every % period != 0)
        return fail(err, errlen, "option --repart-every: %ld is not a multiple of --period %ld",
                    (long)o->repart_every, period);
    if (o->step_cost_us < 0 || o->step_cost_us != o->step_cost_us)
        return fail(err, errlen, "option --step-cost: must be >= 0", 0, 0);
    tess__latency_spec spec;
    char lerr[300];
    if (o->jitter != NULL && tess__latency_parse(o->jitter, &spec, lerr, sizeof lerr) != 0) {
        /* "--jitter: REASON" from the parser, in the options' wording. */
        const char *why = strncmp(lerr, "--jitter: ", 10) == 0 ? lerr + 10 : lerr;
        if (err != NULL && errlen > 0) snprintf(err, errlen, "option --jitter: %s", why);
        return TESS_ERR_INVAL;
    }
    return TESS_OK;
}

/* The effective (d, k, m) of an algorithm: the options it does not use are
 * neutral, so one process loop runs all five. */
int tick_args_from_options(const tess_tick_options *o, tick_args *a, char *err, size_t errlen)
{
    int rc = tess_tick_options_check(o, err, errlen);
    if (rc != TESS_OK) return rc;
    memset(a, 0, sizeof *a);
    a->alg = (int32_t)o->alg;
    int sched = o->alg == TESS_TICK_SCHED || o->alg == TESS_TICK_COMBINED;
    int repl = o->alg == TESS_TICK_REPL || o->alg == TESS_TICK_COMBINED;
    a->depth = sched ? o->depth : 0;
    a->period = repl ? o->period : 1;
    a->layers = repl ? o->layers : 0;
    a->ticks = o->ticks;
    a->repart_every = o->repart_every;
    a->progress_every = o->progress_every;
    a->seed = o->seed;
    a->step_cost_us = o->step_cost_us;
    tess__latency_spec spec;
    if (tess__latency_parse(o->jitter ? o->jitter : "none", &spec, err, errlen) != 0)
        return TESS_ERR_INVAL;
    tess__latency_format(&spec, a->jitter, sizeof a->jitter);
    return TESS_OK;
}
