/*
 * bench_scaling.c — `tessera bench scaling`: Piccolo's Figures 6 and 7 for
 * the tables face's applications.  For PageRank, k-means, n-body and
 * matmul, R = 1, 2, 3, 4 processes of one worker each (embedded for R = 1,
 * mpirun otherwise):
 *   strong  the same input for every R: time per iteration and speedup
 *           t(1) / t(R);
 *   weak    the input grown with R (graph, points and particles R times
 *           larger; matmul's N times cbrt(R), so the work grows R times):
 *           time per iteration relative to R = 1 (ideal 1.0; R / cores when
 *           R exceeds the cores).
 * Rounds alternate over every (app, mode, R), so a slow spell of this
 * shared machine is spread over all of them; the report gives medians.  A
 * run's time per iteration is the median of its iterations after the
 * first (matmul: its product_seconds).  R above the core count shares the
 * cores: such rows are labelled oversubscribed, their times are measured
 * but say nothing about a machine with R cores.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_tick.h"
#include "bench_rounds.h"
#include "bench_util.h"
#include "common.h"

#define BS_NAME "bench scaling"
#define BS_APPS 4
#define BS_MAX_R 8
#define BS_MAX_ROUNDS 50
#define BS_MAX_ITERS 1000

typedef struct bs_opts {
    long ranks[BS_MAX_R];
    int nranks;
    long rounds, iterations;
    int apps, modes; /* bit masks: apps in app_names order; modes 1 strong, 2 weak */
    double scale;    /* multiplies every base input size */
    const char *jsonl, *tmp_parent;
} bs_opts;

typedef struct bs_state {
    bs_opts o;
    char exe[PATH_MAX], mpirun[PATH_MAX], tmp[PATH_MAX];
    int cores;
    double t[BS_APPS][2][BS_MAX_R][BS_MAX_ROUNDS]; /* [app][mode][ranks][round] */
} bs_state;

static const char *const app_names[BS_APPS] = {"pagerank", "kmeans", "nbody", "matmul"};
/* Base sizes (R = 1, --scale 1): web pages, points, particles, matrix order. */
static const double base_size[BS_APPS] = {1000000, 2000000, 200000, 2000};

static const char usage[] =
    "usage: tessera bench scaling [--apps LIST] [--modes strong,weak] [--ranks LIST]\n"
    "                             [--rounds K] [--iterations I] [--scale F]\n"
    "                             [--json FILE] [--tmpdir DIR]\n"
    "  Time per iteration of the tables face's applications on R processes of one\n"
    "  worker each: the same input for every R (strong: speedup t1/tR) and the input\n"
    "  grown with R (weak: tR/t1, ideal 1.0); alternating rounds, medians.\n"
    "  --apps        pagerank,kmeans,nbody,matmul (default all)\n"
    "  --modes       strong, weak or both (default both)\n"
    "  --ranks       process counts (default 1,2,3,4; above the cores: oversubscribed)\n"
    "  --rounds      rounds (default 3)\n"
    "  --iterations  iterations (n-body: steps) per run (default 6; the first not counted)\n"
    "  --scale       multiply the base inputs (web:1000000, 2000000:8:16 points,\n"
    "                200000 particles, N=2000) by F (default 1)\n"
    "  --json        append one JSON line per measurement to FILE\n";

static int parse_names(const char *opt, const char *text, const char *const *names, int n,
                       int *mask)
{
    char *copy = strdup(text ? text : ""), *save = NULL;
    *mask = 0;
    int rc = copy && text && *text ? 0 : -1;
    for (char *t = strtok_r(copy, ",", &save); rc == 0 && t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(t, names[i]) == 0) found = i;
        if (found < 0) rc = -1;
        else *mask |= 1 << found;
    }
    free(copy);
    if (rc != 0)
        app_error(BS_NAME, "option --%s: unknown or missing name in '%s'", opt, text ? text : "");
    return rc;
}

static int parse_ranks(const char *app, const app_opt *opt, const char *text)
{
    bs_opts *o = opt->dest;
    if (bench_parse_longs(app, "ranks", text, 1, 64, o->ranks, BS_MAX_R, &o->nranks) != 0)
        return -1;
    if (o->ranks[0] == 1) return 0;
    app_error(app, "option --ranks: the first count must be 1 (the baseline)");
    return -1;
}

static int parse_apps(const char *app, const app_opt *opt, const char *text)
{
    (void)app;
    return parse_names("apps", text, app_names, BS_APPS, opt->dest);
}

static int parse_modes(const char *app, const app_opt *opt, const char *text)
{
    static const char *const modes[] = {"strong", "weak"};
    (void)app;
    return parse_names("modes", text, modes, 2, opt->dest);
}

static int parse_options(bs_opts *o, int argc, char **argv)
{
    *o = (bs_opts){.ranks = {1, 2, 3, 4},
                   .nranks = 4,
                   .rounds = 3,
                   .iterations = 6,
                   .apps = (1 << BS_APPS) - 1,
                   .modes = 3,
                   .scale = 1.0};
    const app_opt opts[] = {
        {"apps", APP_OPT_CUSTOM, &o->apps, 0, 0, 0, NULL, parse_apps},
        {"modes", APP_OPT_CUSTOM, &o->modes, 0, 0, 0, NULL, parse_modes},
        {"ranks", APP_OPT_CUSTOM, o, 0, 0, 0, NULL, parse_ranks},
        {"rounds", APP_OPT_INT, &o->rounds, 1, BS_MAX_ROUNDS, 0, NULL, NULL},
        {"iterations", APP_OPT_INT, &o->iterations, 2, BS_MAX_ITERS, 0, NULL, NULL},
        {"scale", APP_OPT_DOUBLE, &o->scale, 1e-4, 1e3, 0, NULL, NULL},
        {"json", APP_OPT_CUSTOM, &o->jsonl, 0, 0, 0, NULL, app_parse_path},
        {"tmpdir", APP_OPT_CUSTOM, &o->tmp_parent, 0, 0, 0, NULL, app_parse_path},
    };
    return app_parse_options(BS_NAME, usage, argc, argv, opts, (int)(sizeof opts / sizeof *opts));
}

/* ---------------------------------------------------------------- runs */

/* The input options of app at R processes in mode (0 strong, 1 weak). */
static void input_args(const bs_state *s, int app, int mode, long ranks, char *buf, size_t len,
                       char **argv, int *n)
{
    double grow = mode == 1 ? (double)ranks : 1.0;
    double size = base_size[app] * s->o.scale;
    switch (app) {
    case 0: snprintf(buf, len, "web:%.0f", size * grow); break;
    case 1: snprintf(buf, len, "%.0f:8:16", size * grow); break;
    case 2: snprintf(buf, len, "%.0f", size * grow); break;
    default: snprintf(buf, len, "%.0f", fmax(16, size * cbrt(grow)));
    }
    static const char *const flag[BS_APPS] = {"--gen", "--gen", "--particles", "--n"};
    argv[(*n)++] = (char *)flag[app];
    argv[(*n)++] = buf;
    if (app == 2) {
        argv[(*n)++] = "--cutoff";
        argv[(*n)++] = "1";
    }
}

/* Seconds per iteration from a run's metrics. */
static int per_iteration(const char *json, int app, double *out)
{
    if (app == 3) return bt_json_number(json, "product_seconds", out);
    const char *at = bt_json_find(json, app == 2 ? "step_seconds" : "iteration_seconds");
    double v[BS_MAX_ITERS];
    int n = bench_number_list(at, v, BS_MAX_ITERS);
    if (n < 2) return -1;
    *out = bench_median(v + 1, n - 1);
    return 0;
}

static int run_one(bs_state *s, int app, int mode, long ranks, double *secs)
{
    char np[16], iters[16], input[64], metrics[PATH_MAX + 16], label[64];
    snprintf(np, sizeof np, "%ld", ranks);
    snprintf(iters, sizeof iters, "%ld", s->o.iterations);
    snprintf(metrics, sizeof metrics, "%s/m.json", s->tmp);
    char *argv[40];
    int n = 0;
    if (ranks > 1) n += bench_mpirun_argv(argv, s->mpirun, np, "none");
    const char *run[] = {s->exe, "run",     app_names[app], "--workers",
                         "1",    "--quiet", "--metrics",    metrics};
    for (int i = 0; i < 8; i++) argv[n++] = (char *)run[i];
    input_args(s, app, mode, ranks, input, sizeof input, argv, &n);
    if (app != 3) {
        argv[n++] = app == 2 ? "--steps" : "--iterations";
        argv[n++] = iters;
    }
    argv[n] = NULL;
    snprintf(label, sizeof label, "%s at R=%ld", app_names[app], ranks);
    if (bench_run_reported(argv, s->tmp, BS_NAME, label) != 0) return -1;
    char *json = bench_read_text(metrics);
    int rc = json ? per_iteration(json, app, secs) : -1;
    free(json);
    if (rc != 0) app_error(BS_NAME, "%s: no time per iteration in %s", app_names[app], metrics);
    return rc;
}

static void record(const bs_state *s, int app, int mode, long ranks, int round, double secs)
{
    printf("   round %d  %-8s %-6s R=%ld  %9.4f s/iteration%s\n", round + 1, app_names[app],
           mode ? "weak" : "strong", ranks, secs, ranks > s->cores ? "  (oversubscribed)" : "");
    fflush(stdout);
    if (!s->o.jsonl) return;
    app_metrics *m = bench_record_new("scaling");
    app_metrics_str(m, "app", app_names[app]);
    app_metrics_str(m, "mode", mode ? "weak" : "strong");
    app_metrics_int(m, "ranks", ranks);
    app_metrics_int(m, "cores", s->cores);
    app_metrics_bool(m, "oversubscribed", ranks > s->cores);
    app_metrics_num(m, "scale", s->o.scale);
    app_metrics_int(m, "round", round + 1);
    app_metrics_num(m, "seconds_per_iteration", secs);
    bench_record_write(m, s->o.jsonl, BS_NAME);
}

static int one_round(void *arg, int round)
{
    bs_state *s = arg;
    for (int app = 0; app < BS_APPS; app++)
        for (int mode = 0; (s->o.apps >> app & 1) && mode < 2; mode++)
            for (int r = 0; (s->o.modes >> mode & 1) && r < s->o.nranks; r++) {
                if (mode == 1 && r == 0 && (s->o.modes & 1)) { /* R = 1 is the same run */
                    s->t[app][1][0][round] = s->t[app][0][0][round];
                    continue;
                }
                double secs;
                if (run_one(s, app, mode, s->o.ranks[r], &secs) != 0) return -1;
                s->t[app][mode][r][round] = secs;
                record(s, app, mode, s->o.ranks[r], round, secs);
            }
    return 0;
}

static void report(const void *arg)
{
    const bs_state *s = arg;
    int rounds = (int)s->o.rounds;
    printf("\nmedians over %d rounds; R processes of one worker, %d cores\n", rounds, s->cores);
    printf("   app       mode    R   s/iteration   speedup t1/tR   weak tR/t1\n");
    for (int app = 0; app < BS_APPS; app++)
        for (int mode = 0; (s->o.apps >> app & 1) && mode < 2; mode++) {
            if (!(s->o.modes >> mode & 1)) continue;
            double t1 = bench_median(s->t[app][mode][0], rounds);
            for (int r = 0; r < s->o.nranks; r++) {
                double t = bench_median(s->t[app][mode][r], rounds);
                printf("   %-8s  %-6s %2ld   %10.4f", app_names[app], mode ? "weak" : "strong",
                       s->o.ranks[r], t);
                if (mode == 0) printf("   %6.2fx (ideal %ldx)", t1 / t, s->o.ranks[r]);
                else /* the work grew R times: with fewer cores than R, R/cores at best */
                    printf("                          %5.2f (ideal %.2f)", t / t1,
                           s->o.ranks[r] > s->cores ? (double)s->o.ranks[r] / s->cores : 1.0);
                printf("%s\n", s->o.ranks[r] > s->cores ? "  oversubscribed" : "");
            }
        }
}

static int parse(void *arg, int argc, char **argv)
{
    return parse_options(&((bs_state *)arg)->o, argc, argv);
}

static long start(void *arg)
{
    bs_state *s = arg;
    s->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (bench_self_exe(BS_NAME, s->exe, sizeof s->exe) != 0) return -1;
    int want_mpi = s->o.nranks > 1;
    if (want_mpi && bench_find_mpirun(s->mpirun, sizeof s->mpirun, 0) != NULL) {
        app_error(BS_NAME,
                  "needs MPI and mpirun for more than one process (--ranks 1 runs without)");
        return -1;
    }
    if (bench_make_tmpdir(s->tmp, sizeof s->tmp, s->o.tmp_parent, "bench-scaling", BS_NAME) != 0)
        return -1;
    printf("bench scaling: %ld round(s), %ld iterations per run, scale %g, %d cores\n", s->o.rounds,
           s->o.iterations, s->o.scale, s->cores);
    return s->o.rounds;
}

static void finish(void *arg) { bench_remove_tmpdir(((bs_state *)arg)->tmp); }

int bench_scaling_main(int argc, char **argv)
{
    static const bench_rounds_def def = {sizeof(bs_state), parse, start, one_round, report, finish};
    return bench_rounds_main(&def, argc, argv);
}
