/*
 * bench_tick.c — `tessera bench tick`: the jitter experiment of "Making
 * Time-stepped Applications Tick in the Cloud" (SoCC 2011) on the tick face.
 *
 * Every technique (local, sched, repl, combined, bsp) runs as a child
 * `tessera run APP … --metrics FILE` (bench_tick_child.c), once under the
 * latency profile and once with --jitter none, in rounds of fixed order
 * (round r: every technique, jitter then no jitter; seed = base + r) so slow
 * phases of a noisy machine hit every technique alike (DESIGN §7).  Each
 * measurement is appended to a JSON Lines file at once, so a long series can
 * be interrupted and resumed.  The report gives mean ± sd of ticks/s, the
 * ratio to local and the efficiency; figures are never pass/fail, only a
 * failed run makes the command fail.
 */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_tick.h"
#include "common.h"
#include "tessera/tick.h"

/* ---------------------------------------------------------------- options */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera bench tick [options]\n"
            "\n"
            "The tick face's techniques under latency jitter (SoCC 2011): every technique\n"
            "runs as `tessera run APP`, under the jitter profile and with --jitter none,\n"
            "in rounds of fixed order with seed = base + round.  Prints per technique the\n"
            "mean ± sd and median of ticks/s, the ratio to local, the efficiency (ticks/s\n"
            "with jitter / without), then the goals, then draws figures.\n"
            "\n"
            "regimes (--regime, comma-separated; default all):\n"
            "  real     jacobi 1000x1000 cells and fish 2000 per worker, 2 and 4 workers\n"
            "  paper    7x7 = 49 workers, jacobi 100x100 and fish 50 per worker,\n"
            "           --step-cost emulated compute per tick\n"
            "  scaleup  jacobi 100x100 per worker at 4 9 16 25 36 49 64 workers, local\n"
            "           and combined, emulated step cost (the paper's Figure 13); with\n"
            "           --clock virtual jacobi and fish (800 per worker) at 4 .. 100\n"
            "  layers   repl alone: ticks/s against m = 0 1 3 5 7 9 14 for k = 1, 2, 5\n"
            "           (m >= k-1), 4 workers, jacobi 400x400 and fish 800 per worker,\n"
            "           under --layers-jitter (the paper's Figures 8-10); the rounds\n"
            "           alternate over the m values\n"
            "  depth    sched alone: ticks/s against d = 1 2 4 8 16, same sizes, under\n"
            "           --jitter (the paper's Figures 6-7); rounds alternate over d;\n"
            "           also pagerank-tick on a web graph of 50000 pages per worker\n"
            "           (Figure 7, reported in edge-ticks/s too)\n"
            "\n"
            "options:\n"
            "  --regime LIST        real, paper, scaleup, layers, depth or all (default\n"
            "                       all)\n"
            "  --apps LIST          jacobi, fish, pagerank-tick (default all; pagerank-tick\n"
            "                       runs in the depth regime only)\n"
            "  --techniques LIST    local, sched, repl, combined, bsp, auto (default all\n"
            "                       but auto; `all` adds auto: --alg auto, with the\n"
            "                       goal of >= 90%% of the best technique)\n"
            "  --rounds R           rounds (default 3; the paper: 20)\n"
            "  --ticks T            ticks per run (default 100; the paper: 500)\n"
            "  --depth D            d of sched and combined, jacobi (default 8)\n"
            "  --period K           k of repl and combined, jacobi (default 8)\n"
            "  --layers M           m of repl and combined, jacobi (default 14; K <= M+1)\n"
            "  --fish-depth D, --fish-period K, --fish-layers M\n"
            "                       the same for the fish school (default 4, 2, 3: a fish\n"
            "                       layer is rho + s*dt = 6.2 wide, but lazy layers cost\n"
            "                       compute only while a round is late)\n"
            "  --jitter SPEC        latency profile of the jitter runs (default cloud)\n"
            "  --layers-jitter SPEC the layers regime's (default fixed:5000: every\n"
            "                       message 5 ms late, the case of Algorithm 3)\n"
            "  --seed S             seed of round 0 (default 1)\n"
            "  --step-cost US       emulated compute per tick in paper and scaleup\n"
            "                       (default 1000)\n"
            "  --clock C            real (default) | virtual: paper and scaleup on\n"
            "                       simulated time (tessera run --clock virtual): results\n"
            "                       do not depend on this machine's load, and the paper's\n"
            "                       sizes fit (fish: 800 per worker in paper)\n"
            "  --workers LIST       worker counts instead of each regime's own\n"
            "  --jacobi-side S      jacobi cells per worker: S x S (default: real 1000,\n"
            "                       paper and scaleup 100)\n"
            "  --fish-per-worker N  fish per worker (default: real 2000, paper 50)\n"
            "  --pages-per-worker N pagerank-tick: web-graph pages per worker (default\n"
            "                       50000; the depth regime only)\n"
            "  --repart-every N     fish: repartition every N ticks, rounded up to a\n"
            "                       multiple of K (default 60)\n"
            "  --mpirun NP          run each child as NP MPI ranks (workers / NP each)\n"
            "  --timeout S          seconds a run may take before it is stopped\n"
            "                       (default 600)\n"
            "  --json FILE          JSON Lines results (default bench-tick.jsonl); the\n"
            "                       measurements already there for the same configuration\n"
            "                       are not taken again (--resume, the default)\n"
            "  --fresh              start the configurations over (earlier lines are kept\n"
            "                       but marked superseded)\n"
            "  --plots DIR          where the figures go (default docs/figures)\n"
            "  --no-plots           do not draw figures\n"
            "  --plot-script PATH   scripts/plot_tick.py (default: found next to the build)\n"
            "  --tmpdir DIR         parent of the temporary directory (default $TMPDIR, /tmp)\n"
            "  --dry-run            print the commands that would run, run nothing\n"
            "  --help               this text\n"
            "\n"
            "Environment: TESS_BENCH_TICK_CHILD=PROGRAM runs PROGRAM instead of tessera\n"
            "(same arguments; it must write the --metrics file) — for testing the driver.\n");
}

/* A comma-separated list of names into a bit mask ("all": every name). */
static int parse_names(const char *opt, const char *v, const char *const *names, int n,
                       unsigned *out)
{
    if (v == NULL || *v == '\0') {
        app_error(BT_NAME, "option --%s: missing value", opt);
        return -1;
    }
    unsigned mask = 0;
    while (*v != '\0') {
        size_t len = strcspn(v, ",");
        int found = len == 3 && strncmp(v, "all", 3) == 0 ? n : -1;
        for (int i = 0; i < n && found < 0; i++)
            if (strlen(names[i]) == len && strncmp(v, names[i], len) == 0) found = i;
        if (found < 0) {
            app_error(BT_NAME, "option --%s: unknown name '%.*s'", opt, (int)len, v);
            return -1;
        }
        mask |= found == n ? (1u << n) - 1 : 1u << found;
        v += len + (v[len] == ',');
    }
    *out = mask;
    return 0;
}

static int parse_workers(bt_options *o, const char *v)
{
    o->nworkers = 0;
    if (v == NULL || *v == '\0') {
        app_error(BT_NAME, "option --workers: missing value");
        return -1;
    }
    while (*v != '\0') {
        char item[32];
        size_t len = strcspn(v, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < 31 ? len : 31), v);
        if (o->nworkers == BT_MAX_WORKER_COUNTS) {
            app_error(BT_NAME, "option --workers: more than %d counts", BT_MAX_WORKER_COUNTS);
            return -1;
        }
        if (app_parse_int(BT_NAME, "workers", item, 1, 4096, &o->workers[o->nworkers++])) return -1;
        v += len + (v[len] == ',');
    }
    return 0;
}

static int parse_path(const char *a, const char *v, const char **out)
{
    if (v == NULL || *v == '\0') {
        app_error(BT_NAME, "option %.*s: missing value", (int)strcspn(a, "="), a);
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct int_option {
    const char *name;
    long min, max;
    size_t offset;
} int_option;

#define INT_OPT(name, min, max, field)              \
    {                                               \
        name, min, max, offsetof(bt_options, field) \
    }
static const int_option int_options[] = {
    INT_OPT("rounds", 1, 10000, rounds),
    INT_OPT("ticks", 1, 100000000, ticks),
    INT_OPT("depth", 1, 1000, depth),
    INT_OPT("period", 1, 1000, period),
    INT_OPT("layers", 0, 1000, layers),
    INT_OPT("fish-depth", 1, 1000, fish_depth),
    INT_OPT("fish-period", 1, 1000, fish_period),
    INT_OPT("fish-layers", 0, 1000, fish_layers),
    INT_OPT("seed", 0, 2147483647L - 10000, seed), /* + round fits the run's --seed */
    INT_OPT("jacobi-side", 1, 100000, jacobi_side),
    INT_OPT("fish-per-worker", 1, 100000000, fish_per_worker),
    INT_OPT("pages-per-worker", 1, 100000000, pages_per_worker),
    INT_OPT("repart-every", 1, 100000000, repart_every),
    INT_OPT("mpirun", 1, 4096, mpirun_np),
};

/* Options that take an integer; 1 if argv[*i] is none of them. */
static int parse_int_option(bt_options *o, int argc, char **argv, int *i)
{
    for (size_t k = 0; k < sizeof int_options / sizeof *int_options; k++) {
        char flag[40];
        snprintf(flag, sizeof flag, "--%s", int_options[k].name);
        if (!bench_is_option(argv[*i], flag)) continue;
        long *field = (long *)((char *)o + int_options[k].offset);
        return app_parse_int(BT_NAME, int_options[k].name, bench_option_value(argc, argv, i),
                             int_options[k].min, int_options[k].max, field);
    }
    return 1;
}

/* Options with a text value; 1 if argv[*i] is none of them. */
static int parse_text_option(bt_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (bench_is_option(a, "--regime"))
        return parse_names("regime", bench_option_value(argc, argv, i), bt_regime_names, BT_NREGIME,
                           &o->regimes);
    if (bench_is_option(a, "--apps"))
        return parse_names("apps", bench_option_value(argc, argv, i), bt_app_names, BT_NAPP,
                           &o->apps);
    if (bench_is_option(a, "--techniques"))
        return parse_names("techniques", bench_option_value(argc, argv, i), bt_tech_names, BT_NTECH,
                           &o->techs);
    if (bench_is_option(a, "--workers")) return parse_workers(o, bench_option_value(argc, argv, i));
    if (bench_is_option(a, "--step-cost"))
        return app_parse_double(BT_NAME, "step-cost", bench_option_value(argc, argv, i), 0.0, 1e7,
                                &o->step_cost_us);
    if (bench_is_option(a, "--clock")) {
        const char *v = bench_option_value(argc, argv, i);
        tess_tick_clock clock;
        if (tess_tick_clock_parse(v, &clock) == 0) {
            o->virtual_clock = clock == TESS_TICK_CLOCK_VIRTUAL;
            return 0;
        }
        app_error(BT_NAME, "option --clock: '%s' is not real or virtual", v ? v : "");
        return -1;
    }
    if (bench_is_option(a, "--timeout"))
        return app_parse_double(BT_NAME, "timeout", bench_option_value(argc, argv, i), 0.1, 1e6,
                                &o->timeout_s);
    const struct {
        const char *flag;
        const char **field;
    } paths[] = {
        {"--jitter", &o->jitter},           {"--layers-jitter", &o->layers_jitter},
        {"--json", &o->json_path},          {"--plots", &o->plots_dir},
        {"--plot-script", &o->plot_script}, {"--tmpdir", &o->tmp_parent},
    };
    for (size_t k = 0; k < sizeof paths / sizeof *paths; k++)
        if (bench_is_option(a, paths[k].flag))
            return parse_path(a, bench_option_value(argc, argv, i), paths[k].field);
    return 1;
}

/* One option at argv[*i]; 0, 1 for --help, or -1 after printing an error. */
static int parse_option(bt_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
    if (strcmp(a, "--fresh") == 0 || strcmp(a, "--resume") == 0) return o->fresh = a[2] == 'f', 0;
    if (strcmp(a, "--dry-run") == 0) return o->dry_run = 1, 0;
    if (strcmp(a, "--no-plots") == 0) return o->no_plots = 1, 0;
    int rc = parse_int_option(o, argc, argv, i);
    if (rc == 1) rc = parse_text_option(o, argc, argv, i);
    if (rc == 1) {
        app_error(BT_NAME, "unknown option '%s' (see tessera bench tick --help)", a);
        return -1;
    }
    return rc;
}

static int check_options(const bt_options *o)
{
    if (o->period > o->layers + 1) {
        app_error(BT_NAME, "option --period: %ld needs --layers >= %ld (k <= m+1)", o->period,
                  o->period - 1);
        return -1;
    }
    if (o->fish_period > o->fish_layers + 1) {
        app_error(BT_NAME, "option --fish-period: %ld needs --fish-layers >= %ld (k <= m+1)",
                  o->fish_period, o->fish_period - 1);
        return -1;
    }
    if (o->virtual_clock && o->mpirun_np > 0) {
        app_error(BT_NAME, "option --clock: virtual runs in one process, not with --mpirun");
        return -1;
    }
    if (o->virtual_clock && !(o->step_cost_us > 0)) {
        app_error(BT_NAME, "option --clock: virtual needs --step-cost > 0");
        return -1;
    }
    if (strcmp(o->jitter, "none") == 0 || strcmp(o->layers_jitter, "none") == 0) {
        app_error(BT_NAME, "option --%s: 'none' is no latency profile to compare with none",
                  strcmp(o->jitter, "none") == 0 ? "jitter" : "layers-jitter");
        return -1;
    }
    /* The library checks the latency spec now rather than every child later. */
    tess_tick_options t;
    tess_tick_options_init(&t);
    t.alg = TESS_TICK_COMBINED;
    t.ticks = o->ticks;
    t.depth = (int)o->depth;
    t.period = (int)o->period;
    t.layers = (int)o->layers;
    t.jitter = o->jitter;
    /* a context of one worker only to report through; no thread starts */
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.mode = TESS_MODE_EMBEDDED;
    cfg.workers = 1;
    cfg.handle_signals = 0;
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != 0) return -1;
    int rc = tess_tick_options_check(ctx, &t);
    if (rc == 0) {
        t.jitter = o->layers_jitter;
        rc = tess_tick_options_check(ctx, &t);
        if (rc != 0) app_error(BT_NAME, "option --layers-jitter: %s", tess_last_error(ctx));
    } else {
        app_error(BT_NAME, "%s", tess_last_error(ctx));
    }
    tess_finalize(ctx);
    return rc != 0 ? -1 : 0;
}

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(bt_options *o, int argc, char **argv)
{
    *o = (bt_options){.regimes = (1u << BT_NREGIME) - 1,
                      .apps = (1u << BT_NAPP) - 1,
                      .techs = ((1u << BT_NTECH) - 1) & ~(1u << BT_AUTO),
                      .rounds = 3,
                      .ticks = 100,
                      .depth = 8,
                      .period = 8,
                      .layers = 14,
                      .fish_depth = 4,
                      .fish_period = 2,
                      .fish_layers = 3,
                      .repart_every = 60,
                      .seed = 1,
                      .step_cost_us = 1000.0,
                      .timeout_s = 600.0,
                      .jitter = "cloud",
                      .layers_jitter = "fixed:5000",
                      .json_path = "bench-tick.jsonl",
                      .plots_dir = "docs/figures"};
    for (int i = 1; i < argc; i++) {
        int rc = parse_option(o, argc, argv, &i);
        if (rc != 0) return rc;
    }
    return check_options(o);
}

/* ------------------------------------------------------------------- run */

typedef struct bt_state {
    bt_options opt;
    bt_series series[BT_MAX_SERIES];
    int nseries;
    bt_store store;
    bt_runner runner;
    char exe_dir[PATH_MAX];
    int failures;
    int cannot_record; /* the JSON file is not writable: stop measuring */
} bt_state;

static int stopping(const bt_state *s) { return bench_interrupted || s->cannot_record; }

static int is_done(const bt_state *s, const bt_series *se, int t, long r, int j)
{
    return bt_store_find(&s->store, se->key, (bt_tech)t, (int)r, j) != NULL;
}

/* Regimes may share a configuration (scaleup at 49 workers is paper's
 * Jacobi): the earlier series takes the measurement, the later reuses it. */
static int taken_earlier(const bt_state *s, int i, int t)
{
    for (int k = 0; k < i; k++)
        if ((s->series[k].techs & (1u << t)) && strcmp(s->series[k].key, s->series[i].key) == 0)
            return 1;
    return 0;
}

/* Will series i measure (t, r, j) itself? */
static int to_take(const bt_state *s, int i, int t, long r, int j)
{
    return (s->series[i].techs & (1u << t)) && !is_done(s, &s->series[i], t, r, j) &&
           !taken_earlier(s, i, t);
}

static long count_todo(const bt_state *s, long *done_out)
{
    long todo = 0, done = 0;
    for (int i = 0; i < s->nseries; i++)
        for (long r = 0; r < s->opt.rounds; r++)
            for (int t = 0; t < BT_NTECH; t++)
                for (int j = 1; j >= 0 && (s->series[i].techs & (1u << t)); j--)
                    if (to_take(s, i, t, r, j)) todo++;
                    else if (!taken_earlier(s, i, t)) done++;
    *done_out = done;
    return todo;
}

static void dry_run(bt_state *s)
{
    char metrics[PATH_MAX], bufs[BT_ARGV_BUFS][64], desc[400];
    char *argv[BT_ARGV_MAX];
    snprintf(metrics, sizeof metrics, "%s/tessera-bench-tick-XXXXXX/metrics.json",
             s->opt.tmp_parent ? s->opt.tmp_parent : "/tmp");
    for (int i = 0; i < s->nseries; i++) {
        const bt_series *se = &s->series[i];
        bt_series_describe(se, desc, sizeof desc);
        printf("# %s\n", desc);
        for (long r = 0; r < s->opt.rounds; r++)
            for (int t = 0; t < BT_NTECH; t++)
                for (int j = 1; j >= 0; j--) {
                    if (!to_take(s, i, t, r, j)) continue;
                    bt_child_argv(se, (bt_tech)t, (int)r, j, s->runner.exe, s->runner.mpirun,
                                  metrics, argv, bufs);
                    bt_print_command(stdout, argv);
                }
    }
}

/* Take one measurement unless the store has it; its ticks/s (NAN when it was
 * taken before), or -1 if it failed. */
static int measure_one(bt_state *s, const bt_series *se, bt_tech t, long r, int j, double *tps_out)
{
    *tps_out = NAN;
    if (is_done(s, se, t, r, j)) return 0;
    bt_record rec = {.tech = t, .round = (int)r, .jittered = j};
    snprintf(rec.key, sizeof rec.key, "%s", se->key);
    if (bt_measure(&s->runner, se, t, (int)r, j, &rec.fig) != 0) return -1;
    if (bt_append_record(s->opt.json_path, se, t, (int)r, j, &rec.fig) != 0 ||
        bt_store_put(&s->store, &rec) != 0) {
        s->cannot_record = 1; /* stop rather than measure in vain */
        return -1;
    }
    *tps_out = rec.fig.tps;
    return 0;
}

/* "local 151.2|770.3" for the progress line ("-" for what was not taken now). */
static void append_progress(char *line, size_t len, bt_tech t, const double tps[2])
{
    size_t used = strlen(line);
    char a[32] = "-", b[32] = "-";
    if (!isnan(tps[1])) snprintf(a, sizeof a, "%.1f", tps[1]);
    if (!isnan(tps[0])) snprintf(b, sizeof b, "%.1f", tps[0]);
    snprintf(line + used, len - used, "%s%s %s|%s", used ? "  " : "", bt_tech_names[t], a, b);
}

/* One round of a series: every technique, jitter then none.  A technique
 * that failed once is not tried again in this series.  1 if it measured
 * anything. */
static int run_round(bt_state *s, const bt_series *se, long r, unsigned *failed)
{
    char line[512] = "";
    for (int t = 0; t < BT_NTECH && !stopping(s); t++) {
        if (!(se->techs & (1u << t)) || (*failed & (1u << t))) continue;
        double tps[2] = {NAN, NAN};
        for (int j = 1; j >= 0 && !stopping(s); j--)
            if (measure_one(s, se, (bt_tech)t, r, j, &tps[j]) != 0) {
                *failed |= 1u << t;
                s->failures += !stopping(s);
                if (!stopping(s))
                    fprintf(stderr,
                            "tessera %s: note: %s is skipped for the rest of this "
                            "configuration\n",
                            BT_NAME, bt_tech_names[t]);
                break;
            }
        if (!isnan(tps[0]) || !isnan(tps[1])) append_progress(line, sizeof line, (bt_tech)t, tps);
    }
    if (line[0] != '\0')
        printf("  round %ld/%ld (seed %ld), ticks/s with|without jitter: %s\n", r + 1,
               s->opt.rounds, se->seed + r, line);
    fflush(stdout);
    return line[0] != '\0';
}

static void run_series(bt_state *s, const bt_series *se)
{
    char desc[400];
    unsigned failed = 0;
    int measured = 0;
    bt_series_describe(se, desc, sizeof desc);
    printf("\n== %s\n", desc);
    fflush(stdout);
    for (long r = 0; r < s->opt.rounds && !stopping(s); r++)
        measured |= run_round(s, se, r, &failed);
    if (!measured && !stopping(s)) printf("  (every measurement already taken)\n");
}

static int is_sweep(const bt_series *se)
{
    return se->regime == BT_LAYERS || se->regime == BT_DEPTH;
}

/* The sweeps (layers, depth) compare series with one another (m against m,
 * d against d), so their rounds alternate over them: round r of every
 * series before round r+1. */
static void run_sweeps(bt_state *s)
{
    unsigned failed = 0;
    for (long r = 0; r < s->opt.rounds && !stopping(s); r++)
        for (int i = 0; i < s->nseries && !stopping(s); i++) {
            const bt_series *se = &s->series[i];
            if (!is_sweep(se)) continue;
            char desc[400];
            bt_series_describe(se, desc, sizeof desc);
            printf("\n== round %ld: %s\n", r, desc);
            fflush(stdout);
            run_round(s, se, r, &failed);
        }
}

/* Load what the file holds or, with --fresh, mark the configurations
 * superseded; then say how much is left to do. */
static int prepare_store(bt_state *s)
{
    if (!s->opt.fresh && bt_store_load(&s->store, s->opt.json_path) != 0) return -1;
    /* fail before the first measurement rather than after it */
    if (!s->opt.dry_run && bench_check_appendable(BT_NAME, "json", s->opt.json_path) != 0)
        return -1;
    for (int i = 0; s->opt.fresh && !s->opt.dry_run && i < s->nseries; i++)
        if (bt_append_reset(s->opt.json_path, &s->series[i]) != 0) return -1;
    long done, todo = count_todo(s, &done);
    printf("bench tick: %d configuration%s, %ld rounds, %ld measurements to take", s->nseries,
           s->nseries == 1 ? "" : "s", s->opt.rounds, todo);
    if (done > 0)
        printf(", %ld already in %s (resumed; --fresh starts over)", done, s->opt.json_path);
    printf("\n");
    fflush(stdout);
    return 0;
}

static int find_exe_dir(bt_state *s)
{
    ssize_t n = readlink("/proc/self/exe", s->exe_dir, sizeof s->exe_dir - 1);
    if (n <= 0) return snprintf(s->exe_dir, sizeof s->exe_dir, "."), 0;
    s->exe_dir[n] = '\0';
    char *slash = strrchr(s->exe_dir, '/');
    if (slash != NULL) *slash = '\0';
    return 0;
}

static int report(bt_state *s)
{
    printf("\n==== results: ticks/s over rounds (mean ± sample sd, median), ratio of the "
           "mean to local's, efficiency = mean with jitter / mean without\n");
    for (int i = 0; i < s->nseries; i++)
        if (s->series[i].regime != BT_SCALEUP && !is_sweep(&s->series[i]))
            bt_report_series(&s->store, &s->series[i], s->opt.rounds);
    bt_report_scaleup(&s->store, s->series, s->nseries, s->opt.rounds);
    bt_report_layers(&s->store, s->series, s->nseries, s->opt.rounds);
    bt_report_depth(&s->store, s->series, s->nseries, s->opt.rounds);
    bt_report_goals(&s->store, s->series, s->nseries, s->opt.rounds);
    if (s->opt.no_plots || stopping(s)) return 0;
    return bt_run_plots(&s->opt, s->exe_dir);
}

static int run_bench(void *arg)
{
    bt_state *s = arg;
    s->nseries = bt_plan(&s->opt, s->series, BT_MAX_SERIES);
    if (s->nseries < 0 || bt_runner_init(&s->runner, &s->opt) != 0 || find_exe_dir(s) != 0)
        return 2;
    if (s->nseries == 0) {
        app_error(BT_NAME, "nothing to measure with these --regime/--apps/--techniques");
        return 2;
    }
    if (prepare_store(s) != 0) return 1;
    if (s->opt.dry_run) return dry_run(s), 0;
    if (bt_runner_tmpdir(&s->runner, s->opt.tmp_parent) != 0) return 1;
    for (int i = 0; i < s->nseries && !stopping(s); i++)
        if (!is_sweep(&s->series[i])) run_series(s, &s->series[i]);
    run_sweeps(s);
    int plots = report(s);
    if (bench_interrupted) {
        app_error(BT_NAME, "interrupted; run the same command again to resume");
        return 130;
    }
    if (s->cannot_record) return 1;
    if (s->failures > 0) {
        app_error(BT_NAME, "%d run%s failed (messages above)", s->failures,
                  s->failures == 1 ? "" : "s");
        return 1;
    }
    return plots != 0;
}

int bench_tick_main(int argc, char **argv)
{
    bt_state *s = calloc(1, sizeof *s);
    if (s == NULL) {
        app_error(BT_NAME, "%s", tess_strerror(TESS_ERR_NOMEM));
        return 1;
    }
    int rc = parse_options(&s->opt, argc, argv);
    if (rc != 0) {
        if (rc > 0) usage(stdout);
        free(s);
        return rc > 0 ? 0 : 2;
    }
    rc = bench_interruptible(run_bench, s);
    bt_runner_cleanup(&s->runner);
    bt_store_free(&s->store);
    free(s);
    return rc;
}
