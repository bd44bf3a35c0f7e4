/*
 * bench_mapreduce.c — `tessera bench mapreduce`: PageRank and k-means on
 * tessera against the same computations as MapReduce jobs on MR-MPI
 * (bench/mrmpi/, MapReduce over MPI standing in for Hadoop): Piccolo's
 * Figure 9, where Piccolo ran 11x (PageRank) and 4x (k-means) faster than
 * Hadoop per iteration.
 *
 * Both run R processes with one thread each (tessera: R ranks of one worker
 * each, embedded for R = 1), in alternating rounds; the time per iteration
 * of a run is the median of its iterations after the first, and the report
 * gives the medians over the rounds and their ratio.  The first round
 * checks that the two computed the same thing (ranks and centres within
 * 1e-9 relative).
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

#define BR_NAME "bench mapreduce"
#define BR_MAX_RANKS 8
#define BR_MAX_ROUNDS 50
#define BR_MAX_ITERS 1000

typedef struct br_opts {
    long ranks[BR_MAX_RANKS];
    int nranks;
    long rounds, iterations;
    int apps; /* bit 0 pagerank, bit 1 kmeans */
    const char *pagerank_gen, *kmeans_gen, *jsonl, *tmp_parent;
} br_opts;

typedef struct br_state {
    br_opts o;
    char exe[PATH_MAX], peer[2][PATH_MAX], mpirun[PATH_MAX], tmp[PATH_MAX];
    double t[2][BR_MAX_RANKS][2][BR_MAX_ROUNDS]; /* [app][ranks][0 tessera, 1 mrmpi][round] */
} br_state;

static const char *const app_names[2] = {"pagerank", "kmeans"};

static const char usage[] =
    "usage: tessera bench mapreduce [--apps LIST] [--ranks LIST] [--rounds K]\n"
    "                               [--iterations I] [--pagerank-gen SPEC]\n"
    "                               [--kmeans-gen N:DIM:K] [--json FILE] [--tmpdir DIR]\n"
    "  PageRank and k-means per iteration on tessera and on MR-MPI (MapReduce over\n"
    "  MPI; the peers tessera-mrmpi-pagerank and -kmeans are built with libmrmpi-dev),\n"
    "  R processes of one thread each, alternating rounds, medians and ratios.\n"
    "  --apps          pagerank,kmeans (default both)\n"
    "  --ranks         process counts (default 1,2,4; above the cores: oversubscribed)\n"
    "  --rounds        rounds (default 3)\n"
    "  --iterations    iterations per run (default 5; the first is not counted)\n"
    "  --pagerank-gen  graph (default web:200000)\n"
    "  --kmeans-gen    points (default 1000000:8:16)\n"
    "  --json          append one JSON line per measurement to FILE\n";

static int parse_apps(br_opts *o, const char *text)
{
    o->apps = 0;
    if (text && strstr(text, "pagerank")) o->apps |= 1;
    if (text && strstr(text, "kmeans")) o->apps |= 2;
    if (text && o->apps && strspn(text, "pagerank,kmeans") == strlen(text)) return 0;
    app_error(BR_NAME, "option --apps: expected pagerank, kmeans or both, got '%s'",
              text ? text : "");
    return -1;
}

static int parse_apps_option(const char *app, const app_opt *opt, const char *text)
{
    (void)app;
    return parse_apps(opt->dest, text);
}

static int parse_ranks(const char *app, const app_opt *opt, const char *text)
{
    br_opts *o = opt->dest;
    return bench_parse_longs(app, "ranks", text, 1, 64, o->ranks, BR_MAX_RANKS, &o->nranks);
}

static int parse_options(br_opts *o, int argc, char **argv)
{
    *o = (br_opts){.ranks = {1, 2, 4},
                   .nranks = 3,
                   .rounds = 3,
                   .iterations = 5,
                   .apps = 3,
                   .pagerank_gen = "web:200000",
                   .kmeans_gen = "1000000:8:16"};
    const app_opt opts[] = {
        {"ranks", APP_OPT_CUSTOM, o, 0, 0, 0, NULL, parse_ranks},
        {"apps", APP_OPT_CUSTOM, o, 0, 0, 0, NULL, parse_apps_option},
        {"rounds", APP_OPT_INT, &o->rounds, 1, BR_MAX_ROUNDS, 0, NULL, NULL},
        {"iterations", APP_OPT_INT, &o->iterations, 2, BR_MAX_ITERS, 0, NULL, NULL},
        {"pagerank-gen", APP_OPT_CUSTOM, &o->pagerank_gen, 0, 0, 0, NULL, app_parse_path},
        {"kmeans-gen", APP_OPT_CUSTOM, &o->kmeans_gen, 0, 0, 0, NULL, app_parse_path},
        {"json", APP_OPT_CUSTOM, &o->jsonl, 0, 0, 0, NULL, app_parse_path},
        {"tmpdir", APP_OPT_CUSTOM, &o->tmp_parent, 0, 0, 0, NULL, app_parse_path},
    };
    return app_parse_options(BR_NAME, usage, argc, argv, opts, (int)(sizeof opts / sizeof *opts));
}

/* ---------------------------------------------------------------- runs */

/* The median of a list of iteration times after the first. */
static double steady_median(const double *v, int n)
{
    return n > 1 ? bench_median(v + 1, n - 1) : NAN;
}

static void argv_app(const br_state *s, int app, char *tail[], char *iters, char *output)
{
    int i = 0;
    tail[i++] = "--gen";
    tail[i++] = (char *)(app == 0 ? s->o.pagerank_gen : s->o.kmeans_gen);
    tail[i++] = "--iterations";
    tail[i++] = iters;
    tail[i++] = "--output";
    tail[i++] = output;
    tail[i] = NULL;
}

/* One run of tessera (mrmpi 0) or the peer (1): its seconds per iteration. */
static int run_one(br_state *s, int app, long ranks, int mrmpi, double *per_it)
{
    char iters[16], np[16], output[PATH_MAX + 16], metrics[PATH_MAX + 16], *tail[8];
    snprintf(iters, sizeof iters, "%ld", s->o.iterations);
    snprintf(np, sizeof np, "%ld", ranks);
    snprintf(output, sizeof output, "%s/%s.%s", s->tmp, app_names[app],
             mrmpi ? "mrmpi" : "tessera");
    snprintf(metrics, sizeof metrics, "%s/m.json", s->tmp);
    argv_app(s, app, tail, iters, output);
    char *argv[32];
    int n = 0;
    if (ranks > 1 || mrmpi) n += bench_mpirun_argv(argv, s->mpirun, np, "none");
    if (mrmpi) argv[n++] = s->peer[app];
    else {
        const char *run[] = {s->exe, "run",     app_names[app], "--workers",
                             "1",    "--quiet", "--metrics",    metrics};
        for (size_t i = 0; i < 8; i++) argv[n++] = (char *)run[i];
    }
    for (int i = 0; tail[i]; i++) argv[n++] = tail[i];
    argv[n] = NULL;
    if (bench_run_reported(argv, s->tmp, BR_NAME, mrmpi ? "the MR-MPI peer" : "tessera") != 0)
        return -1;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/out.txt", s->tmp);
    char *text = bench_read_text(mrmpi ? path : metrics);
    const char *key = mrmpi ? "iteration_seconds" : NULL;
    const char *at = !text   ? NULL
                     : mrmpi ? strstr(text, key)
                             : bt_json_find(text, "iteration_seconds");
    double v[BR_MAX_ITERS];
    int count = bench_number_list(at && mrmpi ? at + strlen(key) : at, v, BR_MAX_ITERS);
    free(text);
    if (count < 2) {
        app_error(BR_NAME, "%s printed no iteration times", mrmpi ? "the peer" : "tessera");
        return -1;
    }
    *per_it = steady_median(v, count);
    return 0;
}

/* Both outputs hold the same numbers up to 1e-9 relative (token by token:
 * ids and ranks, or centre coordinates). */
static int same_results(br_state *s, int app)
{
    char a[PATH_MAX + 16], b[PATH_MAX + 16];
    snprintf(a, sizeof a, "%s/%s.tessera", s->tmp, app_names[app]);
    snprintf(b, sizeof b, "%s/%s.mrmpi", s->tmp, app_names[app]);
    char *x = bench_read_text(a), *y = bench_read_text(b);
    int rc = x && y ? 0 : -1;
    const char *p = x, *q = y;
    long tokens = 0;
    while (rc == 0) {
        char *e1, *e2;
        double u = strtod(p, &e1), w = strtod(q, &e2);
        if (e1 == p || e2 == q) {
            rc = (e1 == p) == (e2 == q) && tokens > 0 ? 0 : -1;
            break;
        }
        if (fabs(u - w) > 1e-9 * fmax(fabs(u), fabs(w))) rc = -1;
        p = e1, q = e2, tokens++;
    }
    free(x), free(y);
    if (rc != 0) app_error(BR_NAME, "%s: MR-MPI's result differs from tessera's", app_names[app]);
    return rc;
}

static void record(const br_state *s, int app, long ranks, int mrmpi, int round, double per_it)
{
    printf("   round %d  %-8s R=%ld  %-7s %10.4f s/iteration\n", round + 1, app_names[app], ranks,
           mrmpi ? "MR-MPI" : "tessera", per_it);
    fflush(stdout);
    if (!s->o.jsonl) return;
    app_metrics *m = bench_record_new("mapreduce");
    app_metrics_str(m, "app", app_names[app]);
    app_metrics_str(m, "system", mrmpi ? "mrmpi" : "tessera");
    app_metrics_str(m, "input", app == 0 ? s->o.pagerank_gen : s->o.kmeans_gen);
    app_metrics_int(m, "ranks", ranks);
    app_metrics_int(m, "round", round + 1);
    app_metrics_num(m, "seconds_per_iteration", per_it);
    bench_record_write(m, s->o.jsonl, BR_NAME);
}

static int one_round(void *arg, int round)
{
    br_state *s = arg;
    for (int app = 0; app < 2; app++) {
        if (!(s->o.apps & (1 << app))) continue;
        for (int r = 0; r < s->o.nranks; r++)
            for (int mrmpi = 0; mrmpi < 2; mrmpi++) {
                double v;
                if (run_one(s, app, s->o.ranks[r], mrmpi, &v) != 0) return -1;
                s->t[app][r][mrmpi][round] = v;
                record(s, app, s->o.ranks[r], mrmpi, round, v);
                if (mrmpi && round == 0 && r == 0 && same_results(s, app) != 0) return -1;
            }
    }
    return 0;
}

static void report(const void *arg)
{
    const br_state *s = arg;
    static const double goal[2] = {11.0, 4.0}; /* Piccolo over Hadoop */
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf(
        "\nmedians over %ld rounds, seconds per iteration (R processes of one thread; %d cores)\n",
        s->o.rounds, cores);
    printf("   app       R   tessera     MR-MPI     MR-MPI/tessera  goal (Piccolo/Hadoop)\n");
    for (int app = 0; app < 2; app++)
        for (int r = 0; (s->o.apps & (1 << app)) && r < s->o.nranks; r++) {
            double a = bench_median(s->t[app][r][0], (int)s->o.rounds);
            double b = bench_median(s->t[app][r][1], (int)s->o.rounds);
            printf("   %-8s %2ld  %9.4f  %9.4f  %8.1fx          >= %.0fx %s%s\n", app_names[app],
                   s->o.ranks[r], a, b, b / a, goal[app], b / a >= goal[app] ? "met" : "MISSED",
                   s->o.ranks[r] > cores ? "  oversubscribed" : "");
        }
}

static int locate(br_state *s)
{
    if (bench_self_exe(BR_NAME, s->exe, sizeof s->exe) != 0) return -1;
    for (int app = 0; app < 2; app++) {
        char name[64];
        snprintf(name, sizeof name, "tessera-mrmpi-%s", app_names[app]);
        if (bench_sibling(name, s->peer[app], sizeof s->peer[app]) != 0 &&
            (s->o.apps & (1 << app))) {
            app_error(BR_NAME, "%s is not built: install libmrmpi-dev and rebuild", s->peer[app]);
            return -1;
        }
    }
    if (bench_find_mpirun(s->mpirun, sizeof s->mpirun, 0) != NULL) {
        app_error(BR_NAME, "needs MPI and mpirun");
        return -1;
    }
    return 0;
}

static int parse(void *arg, int argc, char **argv)
{
    return parse_options(&((br_state *)arg)->o, argc, argv);
}

static long start(void *arg)
{
    br_state *s = arg;
    if (locate(s) != 0 ||
        bench_make_tmpdir(s->tmp, sizeof s->tmp, s->o.tmp_parent, "bench-mapreduce", BR_NAME) != 0)
        return -1;
    printf("bench mapreduce: %ld round(s) of %ld iterations; pagerank %s, kmeans %s\n", s->o.rounds,
           s->o.iterations, s->o.pagerank_gen, s->o.kmeans_gen);
    return s->o.rounds;
}

static void finish(void *arg) { bench_remove_tmpdir(((br_state *)arg)->tmp); }

int bench_mapreduce_main(int argc, char **argv)
{
    static const bench_rounds_def def = {sizeof(br_state), parse, start, one_round, report, finish};
    return bench_rounds_main(&def, argc, argv);
}
