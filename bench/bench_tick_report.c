/*
 * bench_tick_report.c — what `tessera bench tick` prints: per series and
 * technique the mean ± standard deviation of ticks/s over the rounds, the
 * median, the ratio to `local`, and the efficiency (throughput under jitter ÷
 * throughput of the same technique without jitter); then the goals,
 * each met or missed with its measured figure; then the figures, drawn by
 * scripts/plot_tick.py from the JSON Lines file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_tick.h"
#include "common.h"
#include "csr_pagerank.h" /* bench_median */

typedef struct bt_stats {
    int n;
    double mean, sd, median;
    double runtime_share; /* runtime_seconds / (wall_seconds × workers), mean */
} bt_stats;

/* The runtime's own CPU time (runtime_cpu_seconds, summed over the workers;
 * runtime_seconds, a wall-clock figure, for older records) over the workers'
 * time of the ticks (not of the whole process, which includes building the
 * state). */
static double runtime_share(const bt_record *r, const bt_series *s)
{
    /* Real CPU over simulated time is no share of anything. */
    if (s->virtual_clock) return NAN;
    long w = r->fig.workers_total > 0 ? r->fig.workers_total : s->workers;
    double wall = isfinite(r->fig.tick_seconds) ? r->fig.tick_seconds : r->fig.wall;
    double rt = isfinite(r->fig.runtime_cpu) ? r->fig.runtime_cpu : r->fig.runtime;
    return rt / (wall * (double)w);
}

/* Ticks/s of technique t over rounds 0 .. rounds-1 (those measured). */
static bt_stats stats_of(const bt_store *st, const bt_series *s, bt_tech t, int jittered,
                         long rounds)
{
    bt_stats x = {0, NAN, NAN, NAN, NAN};
    double *v = malloc((size_t)rounds * sizeof *v), sum = 0.0, share = 0.0;
    for (long r = 0; v != NULL && r < rounds; r++) {
        const bt_record *rec = bt_store_find(st, s->key, t, (int)r, jittered);
        if (rec == NULL) continue;
        v[x.n++] = rec->fig.tps;
        sum += rec->fig.tps;
        share += runtime_share(rec, s);
    }
    if (x.n > 0) {
        x.mean = sum / x.n;
        x.median = bench_median(v, x.n);
        x.runtime_share = share / x.n;
        double ss = 0.0;
        for (int i = 0; i < x.n; i++) ss += (v[i] - x.mean) * (v[i] - x.mean);
        x.sd = x.n > 1 ? sqrt(ss / (x.n - 1)) : 0.0;
    }
    free(v);
    return x;
}

/* The edges of a pagerank-tick series' graph, as a run reported them (NAN
 * for the other apps): its throughput in edge-ticks/s, as the paper counts it. */
static double series_edges(const bt_store *st, const bt_series *s)
{
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->v[i].key, s->key) == 0 && isfinite(st->v[i].fig.edges))
            return st->v[i].fig.edges;
    return NAN;
}

static void tech_label(const bt_series *s, bt_tech t, char *out, size_t len)
{
    switch (t) {
    case BT_SCHED: snprintf(out, len, "sched d=%ld", s->depth); break;
    case BT_REPL: snprintf(out, len, "repl k=%ld m=%ld", s->period, s->layers); break;
    case BT_COMBINED:
        snprintf(out, len, "combined d=%ld k=%ld m=%ld", s->depth, s->period, s->layers);
        break;
    default: snprintf(out, len, "%s", bt_tech_names[t]);
    }
}

static void print_cell(const bt_stats *x, double local_mean)
{
    if (x->n == 0) {
        printf("  %-34s", "-");
        return;
    }
    char ms[48];
    if (x->n == 1) /* one round has no spread */
        snprintf(ms, sizeof ms, "%.1f ± -", x->mean);
    else snprintf(ms, sizeof ms, "%.1f ± %.1f", x->mean, x->sd);
    printf("  %-18s %9.1f %5.2fx", ms, x->median, x->mean / local_mean);
}

void bt_report_series(const bt_store *st, const bt_series *s, long rounds)
{
    char desc[400];
    bt_series_describe(s, desc, sizeof desc);
    printf("\n%s\n", desc);
    printf("  %-22s  %-35s  %-35s  %10s  %8s\n", "", "with jitter", "without jitter", "efficiency",
           "runtime");
    printf("  %-22s  %-18s %9s %6s  %-18s %9s %6s  %10s  %8s\n", "technique", "ticks/s mean ± sd",
           "median", "/local", "ticks/s mean ± sd", "median", "/local", "", "share");
    bt_stats lj = stats_of(st, s, BT_LOCAL, 1, rounds), ln = stats_of(st, s, BT_LOCAL, 0, rounds);
    for (int t = 0; t < BT_NTECH; t++) {
        if (!(s->techs & (1u << t))) continue;
        bt_stats j = stats_of(st, s, (bt_tech)t, 1, rounds);
        bt_stats n = stats_of(st, s, (bt_tech)t, 0, rounds);
        char label[48];
        tech_label(s, (bt_tech)t, label, sizeof label);
        printf("  %-22s", label);
        print_cell(&j, lj.mean);
        print_cell(&n, ln.mean);
        double share = j.n && n.n ? fmax(j.runtime_share, n.runtime_share)
                                  : (j.n ? j.runtime_share : n.runtime_share);
        if (j.n && n.n) printf("  %10.3f", j.mean / n.mean);
        else printf("  %10s", "-");
        if ((j.n || n.n) && isfinite(share)) printf("  %7.3f%%", 100.0 * share);
        else printf("  %8s", "-");
        printf("  (%d+%d runs)\n", j.n, n.n);
    }
    fflush(stdout);
}

/* The paper's Figure 13 as a table: ticks/s against workers, local and
 * combined, with and without jitter. */
void bt_report_scaleup(const bt_store *st, const bt_series *series, int n, long rounds)
{
    int header_app = -1;
    for (int i = 0; i < n; i++) {
        const bt_series *s = &series[i];
        if (s->regime != BT_SCALEUP) continue;
        if ((int)s->app != header_app) {
            header_app = (int)s->app;
            char per[48];
            if (s->app == BT_JACOBI) snprintf(per, sizeof per, "%ldx%ld cells", s->side, s->side);
            else snprintf(per, sizeof per, "%ld fish", s->fish / s->workers);
            printf("\nscale-up (%s, %s per worker, step cost %g us/tick %s, jitter %s), ticks/s "
                   "mean ± sd:\n",
                   bt_app_names[s->app], per, s->step_cost_us,
                   s->virtual_clock ? "on the VIRTUAL clock" : "EMULATED", s->jitter);
            printf("  %7s  %-17s %-17s %9s  %-17s %-17s  %9s %9s\n", "workers", "local jitter",
                   "combined jitter", "comb/loc", "local none", "combined none", "eff loc",
                   "eff comb");
        }
        bt_stats lj = stats_of(st, s, BT_LOCAL, 1, rounds),
                 cj = stats_of(st, s, BT_COMBINED, 1, rounds);
        bt_stats ln = stats_of(st, s, BT_LOCAL, 0, rounds),
                 cn = stats_of(st, s, BT_COMBINED, 0, rounds);
        char a[4][48];
        const bt_stats *v[4] = {&lj, &cj, &ln, &cn};
        for (int k = 0; k < 4; k++)
            if (v[k]->n == 0) snprintf(a[k], sizeof a[k], "-");
            else if (v[k]->n == 1) snprintf(a[k], sizeof a[k], "%.1f ± -", v[k]->mean);
            else snprintf(a[k], sizeof a[k], "%.1f ± %.1f", v[k]->mean, v[k]->sd);
        printf("  %7ld  %-18s %-18s %8.2fx  %-18s %-18s  %9.3f %9.3f\n", s->workers, a[0], a[1],
               cj.mean / lj.mean, a[2], a[3], lj.mean / ln.mean, cj.mean / cn.mean);
    }
    fflush(stdout);
}

/* The column heads of a sweep table: X is the swept parameter, BASE its
 * first value (the ratios divide by it). */
static void sweep_header(const char *x, const char *base)
{
    printf("  %4s  %10s %8s  %10s %8s  %8s %s\n", x, "jitter", base, "none", base, "eff", "runs");
}

/* One row of a sweep table, shared by the layers and depth sweeps: at X,
 * technique t's median ticks/s with jitter (*j) and without (*z), each over
 * the sweep's first series, the efficiency and the runs.  No newline: the
 * depth table adds its edge rate. */
static void sweep_row(const bt_store *st, const bt_series *s, const bt_series *first, bt_tech t,
                      long x, long rounds, bt_stats *j, bt_stats *z)
{
    *j = stats_of(st, s, t, 1, rounds), *z = stats_of(st, s, t, 0, rounds);
    bt_stats j0 = stats_of(st, first, t, 1, rounds), z0 = stats_of(st, first, t, 0, rounds);
    printf("  %4ld  %10.1f %7.2fx  %10.1f %7.2fx  %8.3f %d+%d", x, j->median, j->median / j0.median,
           z->median, z->median / z0.median, j->median / z->median, j->n, z->n);
}

/* The paper's Figures 8-10 as tables: per app and period k, the median
 * ticks/s of repl against m, with jitter and without, and the ratio to the
 * smallest m (k-1: no layer to spare). */
void bt_report_layers(const bt_store *st, const bt_series *series, int n, long rounds)
{
    const bt_series *first = NULL;
    for (int i = 0; i < n; i++) {
        const bt_series *s = &series[i];
        if (s->regime != BT_LAYERS) continue;
        if (first == NULL || first->app != s->app || first->period != s->period) {
            first = s;
            printf("\nreplication, %s, %ld workers, k=%ld, jitter %s: ticks/s median over "
                   "rounds\n",
                   bt_app_names[s->app], s->workers, s->period, s->jitter);
            sweep_header("m", "/m=k-1");
        }
        bt_stats j, z;
        sweep_row(st, s, first, BT_REPL, s->layers, rounds, &j, &z);
        printf("\n");
    }
    fflush(stdout);
}

/* The paper's Figures 6-7 as tables: per app, the median ticks/s of sched
 * against d, with jitter and without, and the ratio to d=1. */
void bt_report_depth(const bt_store *st, const bt_series *series, int n, long rounds)
{
    const bt_series *first = NULL;
    for (int i = 0; i < n; i++) {
        const bt_series *s = &series[i];
        if (s->regime != BT_DEPTH) continue;
        if (first == NULL || first->app != s->app) {
            first = s;
            printf("\ndependency scheduling, %s, %ld workers, jitter %s: ticks/s median over "
                   "rounds\n",
                   bt_app_names[s->app], s->workers, s->jitter);
            sweep_header("d", "/d=1");
        }
        bt_stats j, z;
        sweep_row(st, s, first, BT_SCHED, s->depth, rounds, &j, &z);
        double edges = series_edges(st, s);
        if (isfinite(edges))
            printf("  (%.1f|%.1f M edge-ticks/s)", j.median * edges / 1e6, z.median * edges / 1e6);
        printf("\n");
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------ goals */

static void goal_line(const char *what, double got, double goal, int at_least, const char *unit_fmt,
                      double scale, const char *missing)
{
    printf("  %-64s ", what);
    if (!isfinite(got)) {
        printf("not measured (%s)\n", missing);
        return;
    }
    int met = at_least ? got >= goal : got <= goal;
    printf(unit_fmt, got * scale);
    printf("  %s\n", met ? "met" : "MISSED");
}

static void goals_paper(const bt_store *st, const bt_series *s, long rounds)
{
    char what[160];
    double need = s->app == BT_JACOBI ? 3.0 : 2.5;
    bt_stats cj = stats_of(st, s, BT_COMBINED, 1, rounds);
    bt_stats lj = stats_of(st, s, BT_LOCAL, 1, rounds);
    bt_stats cn = stats_of(st, s, BT_COMBINED, 0, rounds);
    const char *clock = s->virtual_clock ? " virtual" : "";
    snprintf(what, sizeof what, "paper%s %s w%ld: combined >= %.1fx local under %s", clock,
             bt_app_names[s->app], s->workers, need, s->jitter);
    goal_line(what, cj.mean / lj.mean, need, 1, "%.2fx", 1.0, "needs local and combined");
    snprintf(what, sizeof what, "paper%s %s w%ld: combined keeps >= 70%% without jitter", clock,
             bt_app_names[s->app], s->workers);
    goal_line(what, cj.mean / cn.mean, 0.70, 1, "%.1f%%", 100.0, "needs combined");
}

static void goals_real(const bt_store *st, const bt_series *s, long rounds)
{
    char what[160];
    bt_stats cj = stats_of(st, s, BT_COMBINED, 1, rounds);
    bt_stats cn = stats_of(st, s, BT_COMBINED, 0, rounds);
    snprintf(what, sizeof what, "real %s w%ld: combined keeps >= 85%% without jitter",
             bt_app_names[s->app], s->workers);
    goal_line(what, cj.mean / cn.mean, 0.85, 1, "%.1f%%", 100.0, "needs combined");
    snprintf(what, sizeof what, "real %s w%ld: combined runtime CPU share <= 0.1%%",
             bt_app_names[s->app], s->workers);
    double share = cj.n && cn.n ? fmax(cj.runtime_share, cn.runtime_share) : NAN;
    goal_line(what, share, 0.001, 0, "%.3f%%", 100.0, "needs combined");
}

/* Lazy replication: Jacobi with k=2 under a fixed latency, m=7 at >= 2.5x
 * the ticks/s of m=1 (medians of the same run).  The issue sets it for
 * Jacobi; the fish school at this size is bound by compute on 2 cores. */
static int goals_layers(const bt_store *st, const bt_series *series, int n, long rounds)
{
    int found = 0;
    for (int a = 0; a < 1; a++) {
        const bt_series *m1 = NULL, *m7 = NULL;
        for (int i = 0; i < n; i++) {
            const bt_series *s = &series[i];
            if (s->regime != BT_LAYERS || s->app != (bt_app)a || s->period != 2) continue;
            if (s->layers == 1) m1 = s;
            if (s->layers == 7) m7 = s;
        }
        if (m1 == NULL || m7 == NULL) continue;
        found = 1;
        char what[160];
        snprintf(what, sizeof what, "layers %s k=2: repl m=7 >= 2.5x m=1 under %s", bt_app_names[a],
                 m1->jitter);
        bt_stats x = stats_of(st, m7, BT_REPL, 1, rounds), y = stats_of(st, m1, BT_REPL, 1, rounds);
        goal_line(what, x.median / y.median, 2.5, 1, "%.2fx", 1.0, "needs m=1 and m=7");
    }
    return found;
}

/* --alg auto within 10% of the best technique of the same series (means,
 * with jitter and without). */
static int goals_auto(const bt_store *st, const bt_series *series, int n, long rounds)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        const bt_series *s = &series[i];
        if (!(s->techs & (1u << BT_AUTO)) || s->regime == BT_LAYERS || s->regime == BT_DEPTH)
            continue;
        for (int j = 1; j >= 0; j--) {
            double best = NAN;
            const char *best_name = "-";
            for (int t = 0; t < BT_AUTO; t++) {
                bt_stats x = stats_of(st, s, (bt_tech)t, j, rounds);
                if (x.n > 0 && !(x.mean <= best)) best = x.mean, best_name = bt_tech_names[t];
            }
            bt_stats a = stats_of(st, s, BT_AUTO, j, rounds);
            char what[160];
            snprintf(what, sizeof what, "%s %s w%ld: auto >= 90%% of the best (%s)%s",
                     bt_regime_names[s->regime], bt_app_names[s->app], s->workers, best_name,
                     j ? "" : " no jitter");
            goal_line(what, a.n ? a.mean / best : NAN, 0.90, 1, "%.1f%%", 100.0,
                      "needs auto and another technique");
            found = 1;
        }
    }
    return found;
}

/* The goals of the issue, for the series of this run. */
void bt_report_goals(const bt_store *st, const bt_series *series, int n, long rounds)
{
    int paper = 0, real = 0;
    printf("\ngoals (means over rounds; runtime share = runtime_cpu_seconds / (tick_seconds x "
           "workers), the worse of with/without jitter):\n");
    for (int i = 0; i < n; i++) {
        if (series[i].regime == BT_PAPER && ++paper) goals_paper(st, &series[i], rounds);
        else if (series[i].regime == BT_REAL && ++real) goals_real(st, &series[i], rounds);
    }
    if (!paper)
        printf("  %-64s not measured (run --regime paper)\n",
               "paper: combined >= 3x (jacobi) / 2.5x (fish) local, keeps >= 70%");
    if (!real)
        printf("  %-64s not measured (run --regime real)\n",
               "real: combined keeps >= 85%, runtime share <= 0.1%");
    if (!goals_auto(st, series, n, rounds))
        printf("  %-64s not measured (add --techniques all)\n", "auto: >= 90% of the best");
    if (!goals_layers(st, series, n, rounds))
        printf("  %-64s not measured (run --regime layers)\n", "layers: k=2, m=7 >= 2.5x m=1");
    fflush(stdout);
}

/* ------------------------------------------------------------------ plots */

static int find_script(const bt_options *o, const char *exe_dir, char *out, size_t len)
{
    if (o->plot_script != NULL) {
        snprintf(out, len, "%s", o->plot_script);
        return access(out, R_OK);
    }
    const char *tries[] = {"%s/../scripts/plot_tick.py", "%s/scripts/plot_tick.py"};
    for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
        snprintf(out, len, tries[i], i == 0 ? exe_dir : ".");
        if (access(out, R_OK) == 0) return 0;
    }
    return -1;
}

static const char *find_python(void)
{
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

#define PLOT_NO_MATPLOTLIB 3 /* plot_tick.py's exit status when matplotlib is missing */

/* Run plot_tick.py on the JSON Lines file; a missing matplotlib is a note,
 * not an error.  0 or -1. */
int bt_run_plots(const bt_options *o, const char *exe_dir)
{
    char script[PATH_MAX];
    if (find_script(o, exe_dir, script, sizeof script) != 0) {
        app_error(BT_NAME, "cannot find scripts/plot_tick.py (give --plot-script PATH); "
                           "no figures drawn");
        return -1;
    }
    const char *py = find_python();
    char *argv[] = {(char *)py,           script, "--json", (char *)o->json_path, "--out",
                    (char *)o->plots_dir, NULL};
    printf("\nfigures: %s %s --json %s --out %s\n", py, script, o->json_path, o->plots_dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "tessera %s: cannot execute %s: %s\n", BT_NAME, py, strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == PLOT_NO_MATPLOTLIB) {
        printf("no figures: matplotlib is missing for %s; install it with "
               "`bash scripts/deps.sh plot` (Debian: apt-get install python3-matplotlib)\n",
               py);
        return 0;
    }
    app_error(BT_NAME, "drawing the figures failed (%s)", pid < 0 ? strerror(errno) : "see above");
    return -1;
}
