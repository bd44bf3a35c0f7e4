/*
 * tile_cli.c — the tiles options and statistics of the tiles-face
 * applications (tile_cli.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile_cli.h"

void app_tile_cli_init(app_tile_cli *c)
{
    memset(c, 0, sizeof *c);
    c->data_on = -1;
}

/* 1 if `name` (without "--") is a tiles option taking a value, 2 a flag, 0 neither. */
static int is_option(const char *name)
{
    static const char *const values[] = {"policy",         "processors",      "tile-queue-ms",
                                         "tile-chunk",     "data-on",         "stats",
                                         "checkpoint-dir", "checkpoint-every"};
    static const char *const flags[] = {"progress", "quiet", "restore", "checkpoint-overwrite",
                                        "in-memory"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (strcmp(name, values[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strcmp(name, flags[i]) == 0) return 2;
    return 0;
}

/* The checkpoint options; 0, -1 after printing why, 1 when `name` is none of them. */
static int set_ckpt_option(app_tile_cli *c, const char *app, const char *name, const char *value)
{
    if (strcmp(name, "restore") == 0) c->restore = 1;
    else if (strcmp(name, "checkpoint-overwrite") == 0) c->ckpt_overwrite = 1;
    else if (strcmp(name, "checkpoint-dir") == 0) c->ckpt_dir = value;
    else if (strcmp(name, "checkpoint-every") == 0)
        return app_parse_double(app, name, value, 0.001, 1e6, &c->ckpt_every_s);
    else return 1;
    return 0;
}

/* Apply one; 0 or -1 after printing "tessera APP: option --NAME: ...". */
static int set_option(app_tile_cli *c, const char *app, const char *name, const char *value)
{
    long v;
    int ck = set_ckpt_option(c, app, name, value);
    if (ck <= 0) return ck;
    if (strcmp(name, "progress") == 0) c->progress = APP_PROGRESS_ON;
    else if (strcmp(name, "quiet") == 0) c->progress = APP_PROGRESS_OFF;
    else if (strcmp(name, "in-memory") == 0) c->in_memory = 1;
    else if (strcmp(name, "policy") == 0) c->opt.policy = value;
    else if (strcmp(name, "processors") == 0) {
        if (tess_tile_count_processors(value) < 0) {
            app_error(app,
                      "option --processors: cannot read '%s' (expected cpu, cpu*N, cpu@F, "
                      "cpu@F/S with F in [0.001, 1], opencl[:N] or cuda[:N] joined with '+')",
                      value);
            return -1;
        }
        c->opt.processors = value;
    } else if (strcmp(name, "tile-queue-ms") == 0) {
        return app_parse_double(app, name, value, 0.01, 1e6, &c->opt.queue_ms);
    } else if (strcmp(name, "tile-chunk") == 0) {
        if (app_parse_int(app, name, value, 1024, 1L << 40, &v) != 0) return -1;
        c->opt.chunk_bytes = (size_t)v;
    } else if (strcmp(name, "data-on") == 0) {
        return app_parse_int(app, name, value, 0, 1 << 20, &c->data_on);
    } else if (strcmp(name, "stats") == 0) {
        c->stats_path = value;
    } else {
        return -1;
    }
    return 0;
}

static const char *kind_name(tess_tile_kind k)
{
    return k == TESS_TILE_CPU ? "cpu" : k == TESS_TILE_OPENCL ? "opencl" : "cuda";
}

static app_metrics *proc_object(const tess_tile_proc_stats *p)
{
    app_metrics *m = app_metrics_new();
    if (m == NULL) return NULL;
    double tried[16];
    for (int k = 0; k < p->ntried && k < 16; k++) tried[k] = (double)p->tried[k];
    app_metrics_int(m, "rank", p->rank);
    app_metrics_str(m, "spec", p->spec);
    app_metrics_str(m, "kind", kind_name(p->kind));
    app_metrics_int(m, "tiles", (int64_t)p->tiles);
    app_metrics_int(m, "cells", (int64_t)p->cells);
    app_metrics_list(m, "sizes_tried", tried, p->ntried);
    app_metrics_int(m, "settled_size", (int64_t)p->settled);
    app_metrics_num(m, "settled_rate", p->rate);
    app_metrics_num(m, "busy", p->busy);
    app_metrics_num(m, "idle", p->idle);
    app_metrics_num(m, "busy_after_boot", p->busy_after_boot);
    app_metrics_num(m, "init", p->init);
    app_metrics_num(m, "out", p->out);
    app_metrics_num(m, "tcp", p->tcp);
    return m;
}

static app_metrics *rank_object(const tess_tile_rank_stats *r, int rank)
{
    app_metrics *m = app_metrics_new();
    if (m == NULL) return NULL;
    app_metrics_int(m, "rank", rank);
    app_metrics_int(m, "cells", (int64_t)r->cells);
    app_metrics_int(m, "stolen_in", (int64_t)r->stolen_in);
    app_metrics_int(m, "stolen_out", (int64_t)r->stolen_out);
    app_metrics_int(m, "steals_in", (int64_t)r->steals_in);
    app_metrics_int(m, "steals_out", (int64_t)r->steals_out);
    app_metrics_int(m, "bytes_in", (int64_t)r->bytes_in);
    app_metrics_int(m, "bytes_out", (int64_t)r->bytes_out);
    app_metrics_int(m, "output_bytes_shared", (int64_t)r->output_bytes_shared);
    app_metrics_num(m, "boot_seconds", r->boot_seconds);
    app_metrics_num(m, "estimated_end", r->est_end);
    app_metrics_num(m, "init_seconds", r->init_seconds);
    app_metrics_num(m, "out_seconds", r->out_seconds);
    app_metrics_num(m, "tcp_seconds", r->tcp_seconds);
    return m;
}

/* The statistics as a JSON object, printed to fp; 0 or -1. */
static int stats_print(const tess_tile_stats *s, tess_ctx *ctx, const char *app, FILE *fp)
{
    app_metrics *m = app_metrics_new();
    if (m == NULL) return -1;
    app_metrics_str(m, "app", app);
    app_metrics_int(m, "ranks", tess_nranks(ctx));
    app_metrics_str(m, "policy", s->policy);
    app_metrics_num(m, "seconds", s->seconds);
    app_metrics_num(m, "boot", s->boot);
    app_metrics_num(m, "proc", s->proc);
    app_metrics_num(m, "limb", s->limb);
    app_metrics_num(m, "over", s->over);
    app_metrics_num(m, "init", s->init);
    app_metrics_num(m, "out", s->out);
    app_metrics_num(m, "tcp", s->tcp);
    app_metrics_int(m, "cells", (int64_t)s->cells);
    app_metrics_int(m, "tiles", (int64_t)s->tiles);
    app_metrics **procs = calloc((size_t)(s->nprocs + 1), sizeof *procs);
    app_metrics **ranks = calloc((size_t)(s->nranks + 1), sizeof *ranks);
    for (int i = 0; procs && i < s->nprocs; i++) procs[i] = proc_object(&s->procs[i]);
    for (int r = 0; ranks && r < s->nranks; r++) ranks[r] = rank_object(&s->ranks[r], r);
    if (procs) app_metrics_objects(m, "processors", procs, s->nprocs);
    if (ranks) app_metrics_objects(m, "per_rank", ranks, s->nranks);
    free(procs);
    free(ranks);
    int rc = procs && ranks ? app_metrics_print(m, fp) : -1;
    app_metrics_free(m);
    return rc;
}

/* One line on stderr: time, rate and the split. */
static void summary(const tess_tile_stats *s, const char *app, const char *what, double units)
{
    fprintf(stderr,
            "%s: %.0f %s in %.3f s (%.3g per second), policy %s, %d processors on %d ranks, "
            "%llu tiles; boot %.3f proc %.3f l-imb %.3f init %.3f tcp %.3f out %.3f over %.3f s\n",
            app, units, what, s->seconds, s->seconds > 0 ? units / s->seconds : 0.0, s->policy,
            s->nprocs, s->nranks, (unsigned long long)s->tiles, s->boot, s->proc, s->limb, s->init,
            s->tcp, s->out, s->over);
}

static int listed(const char *const *names, const char *name)
{
    for (; names && *names; names++)
        if (strcmp(*names, name) == 0) return 1;
    return 0;
}

/* An application option, for a checkpoint's identity (tile_ckpt.c). */
static void remember(app_tile_cli *c, const char *name, const char *value)
{
    if (c->ngiven == APP_TILE_MAX_GIVEN) return;
    app_tile_given *g = &c->given[c->ngiven++];
    snprintf(g->name, sizeof g->name, "%s", name);
    g->value = value;
}

/* One argument at argv[*i]: 0, or -1 after printing why. */
static int parse_one(app_tile_cli *c, const char *app, int argc, char **argv, int *i,
                     const char *const *values, const char *const *flags, app_tile_set_fn set,
                     void *opts)
{
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0) {
        app_error(app, "unexpected argument '%s' (see --help)", arg);
        return -1;
    }
    char name[32];
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (len >= sizeof name) {
        app_error(app, "unknown option '%s' (see --help)", arg);
        return -1;
    }
    memcpy(name, arg + 2, len);
    name[len] = '\0';
    int tile = is_option(name);
    int flag = tile == 2 || listed(flags, name);
    if (flag && !eq) {
        if (tile == 0) remember(c, name, NULL);
        return tile == 2 ? set_option(c, app, name, NULL) : set(opts, name, NULL);
    }
    if (flag || (tile != 1 && !listed(values, name))) {
        app_error(app, flag ? "option --%s takes no value" : "unknown option '--%s' (see --help)",
                  name);
        return -1;
    }
    const char *value = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (value == NULL) {
        app_error(app, "option --%s needs a value", name);
        return -1;
    }
    if (tile == 0) remember(c, name, value);
    return tile == 1 ? set_option(c, app, name, value) : set(opts, name, value);
}

/* --restore, --checkpoint-every and --checkpoint-overwrite need a directory. */
static int check_ckpt_options(const app_tile_cli *c, const char *app)
{
    const char *lone = c->restore            ? "restore"
                       : c->ckpt_overwrite   ? "checkpoint-overwrite"
                       : c->ckpt_every_s > 0 ? "checkpoint-every"
                                             : NULL;
    if (c->ckpt_dir == NULL && lone != NULL) {
        app_error(app, "option --%s needs --checkpoint-dir DIR", lone);
        return -1;
    }
    if (c->ckpt_dir != NULL && c->ckpt_dir[0] == '\0') {
        app_error(app, "option --checkpoint-dir: empty directory name");
        return -1;
    }
    return 0;
}

int app_tile_cli_parse(app_tile_cli *c, const char *app, const char *usage, int argc, char **argv,
                       const char *const *values, const char *const *flags, app_tile_set_fn set,
                       void *opts)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        }
    }
    for (int i = 1; i < argc; i++)
        if (parse_one(c, app, argc, argv, &i, values, flags, set, opts) != 0) return -1;
    return check_ckpt_options(c, app);
}

int app_tile_cli_run(const app_tile_cli *c, tess_ctx *ctx, const tess_tile_job *job, uint64_t seed,
                     const char *app, tess_tile_stats *st)
{
    tess_tile_options opt = c->opt;
    opt.progress = app_progress_enabled(c->progress);
    opt.seed = seed;
    if (tess_tile_run(ctx, job, &opt, st) == TESS_OK) return 0;
    char why[1024]; /* a signal ends the run while the tiles controller may still fail */
    app_error(app, "%s", tess_last_error_copy(ctx, why, sizeof why));
    return -1;
}

int app_tile_cli_report(const app_tile_cli *c, tess_ctx *ctx, const tess_tile_stats *st,
                        FILE *stats_fp, const char *app, const char *what, double units)
{
    if (c->stats_path && stats_print(st, ctx, app, stats_fp) != 0) {
        app_error(app, "cannot write %s", c->stats_path);
        return -1;
    }
    if (c->progress != APP_PROGRESS_OFF) summary(st, app, what, units);
    return 0;
}

int app_tile_cli_check_data_on(const app_tile_cli *c, tess_ctx *ctx, const char *app)
{
    if (c->data_on < tess_nranks(ctx)) return 0;
    if (tess_rank(ctx) == 0)
        app_error(app, "option --data-on: rank %ld is not one of the %d ranks", c->data_on,
                  tess_nranks(ctx));
    return -1;
}

int app_tile_cli_check(const app_tile_cli *c, tess_ctx *ctx, const tess_tile_job *job,
                       const char *app)
{
    tess_tile_options check = c->opt;
    if (tess_tile_options_check(ctx, job, &check) == TESS_OK) return 0;
    if (tess_rank(ctx) == 0) app_error(app, "%s", tess_last_error(ctx));
    return -1;
}
