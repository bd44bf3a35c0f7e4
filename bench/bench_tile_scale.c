/*
 * bench_tile_scale.c — the scaling parts of `tessera bench tile`, as the
 * APC+ paper ran them.  Weak scaling (its Figures 9-14): the work per rank
 * fixed, 1, 2 and 4 ranks of 1 processor each, every application under
 * apc and the fixed-size policies, with the time split BOOT / PROC / L-IMB
 * / INIT / TCP / OUT / OVER.  Strong scaling of the tunable CCR application (its Figure 15):
 * Black-Scholes' speedup over 1 rank at K in {1, 10, 75, 250}.  More ranks
 * than cores share them: such figures are labelled oversubscribed.  And the
 * MR-MPI peer on Black-Scholes across ranks, as the paper compared.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_tile.h"
#include "csr_pagerank.h" /* bench_median */
#include "bench_rounds.h"
#include "bench_util.h"

#define BT_MAX_RANKS 4

/* A fixed tile size per application for the fixed-size policies (cells). */
static long fixed_size(bt_app app) { return app == BT_BS ? 16384 : app == BT_SAR ? 4096 : 64; }

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static double json_number(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(json, pat);
    return at ? strtod(at + strlen(pat), NULL) : NAN;
}

/* Median seconds of o->rounds runs; the last run's statistics in stats. */
static double weak_point(bt_opts *o, bt_app app, int ranks, const char *policy, char *stats,
                         size_t cap)
{
    char buf[4300], pol[64];
    char *extra[16];
    int n = 0;
    if (bt_app_args(o, app, ranks, 75, extra, &n, buf, sizeof buf) < 0) return -1;
    if (strcmp(policy, "apc") == 0) snprintf(pol, sizeof pol, "apc");
    else snprintf(pol, sizeof pol, "%s:%ld", policy, fixed_size(app));
    extra[n++] = "--processors";
    extra[n++] = "cpu";
    extra[n++] = "--policy";
    extra[n++] = pol;
    double t[16];
    int k = 0;
    for (long r = 0; r < o->rounds && r < 16; r++) {
        double s = ranks > 1 ? bt_run_child(o, app, ranks, extra, n, stats, cap)
                             : bt_one_rank_seconds(o, app, extra, n, stats, cap);
        if (s < 0) return -1;
        bt_record(o, app, "weak", app == BT_BS ? 75 : 0, ranks, policy,
                  strcmp(policy, "apc") ? fixed_size(app) : 0, s, stats);
        t[k++] = s;
    }
    return bench_median(t, k);
}

void bt_weak_scaling(bt_opts *o)
{
    if (bt_find_mpirun(o, "weak scaling") != 0) return;
    static const char *const policies[] = {"apc", "dd", "static", "ws"};
    static const int ranks[] = {1, 2, 4};
    static char stats[1 << 16];
    printf("weak scaling: work per rank fixed, 1 cpu per rank (Black-Scholes K=75, data "
           "spread; sar; texture with the slide on rank 0); 1 rank embedded, more under "
           "mpirun; %d cores here: runs with more ranks are oversubscribed%s\n",
           cores(),
           cores() < 4 ? " (the 4-rank figures share 2 cores: emulated, not measured "
                         "scaling)"
                       : "");
    printf("%-12s %-7s %5s %8s %6s  %7s %7s %7s %7s %7s %7s %7s\n", "app", "policy", "ranks",
           "seconds", "eff", "boot", "proc", "l-imb", "init", "tcp", "out", "over");
    for (int a = 0; a < BT_APPS; a++) {
        if (!strstr(o->apps, bt_tile_app_names[a])) continue;
        for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
            double t1 = NAN;
            for (size_t r = 0; r < sizeof ranks / sizeof ranks[0]; r++) {
                double t = weak_point(o, (bt_app)a, ranks[r], policies[p], stats, sizeof stats);
                if (t < 0) continue;
                if (ranks[r] == 1) t1 = t;
                printf("%-12s %-7s %5d %8.3f %6.2f  %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f%s\n",
                       bt_tile_app_names[a], policies[p], ranks[r], t, t1 / t,
                       json_number(stats, "boot"), json_number(stats, "proc"),
                       json_number(stats, "limb"), json_number(stats, "init"),
                       json_number(stats, "tcp"), json_number(stats, "out"),
                       json_number(stats, "over"), ranks[r] > cores() ? "  oversubscribed" : "");
                fflush(stdout);
            }
        }
    }
    printf("weak-scaling efficiency = 1-rank seconds / R-rank seconds; 1 rank: a run pinned to "
           "each core, at the mean of their rates (goals at 2 ranks: >= 0.9 "
           "for sar and Black-Scholes K>=75, >= 0.8 for texture with the slide on one rank)\n");
}

void bt_strong_scaling(bt_opts *o)
{
    if (bt_find_mpirun(o, "strong scaling") != 0) return;
    static const long ks[] = {1, 10, 75, 250};
    printf("strong scaling of Black-Scholes: %ld options, APC, 1 cpu per rank, data spread; "
           "speedup over 1 rank (a run pinned to each core, at the mean of their rates)%s\n",
           o->options,
           cores() < BT_MAX_RANKS ? " (3 and 4 ranks oversubscribed on this machine)" : "");
    printf("%6s %8s %8s %8s %8s\n", "K", "1 rank", "2", "3", "4");
    static char stats[1 << 16];
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        char buf[256];
        char *extra[12];
        double t[BT_MAX_RANKS + 1] = {0};
        for (int r = 1; r <= BT_MAX_RANKS; r++) {
            int n = 0;
            bt_app_args(o, BT_BS, 1, ks[i], extra, &n, buf, sizeof buf);
            extra[n++] = "--processors";
            extra[n++] = "cpu";
            double v[16];
            int k = 0;
            for (long round = 0; round < o->rounds && round < 16; round++) {
                double s = r > 1 ? bt_run_child(o, BT_BS, r, extra, n, stats, sizeof stats)
                                 : bt_one_rank_seconds(o, BT_BS, extra, n, stats, sizeof stats);
                if (s < 0) break;
                bt_record(o, BT_BS, "strong", ks[i], r, "apc", 0, s, stats);
                v[k++] = s;
            }
            t[r] = k ? bench_median(v, k) : NAN;
        }
        printf("%6ld %7.3fs %7.2fx %7.2fx %7.2fx\n", ks[i], t[1], t[1] / t[2], t[1] / t[3],
               t[1] / t[4]);
        fflush(stdout);
    }
}

/* The MR-MPI peer's seconds at np ranks and `blocks` map tasks, or -1. */
static double mrmpi_once(bt_opts *o, const char *peer, int np, long k, long blocks)
{
    char npb[16], opts[32], iters[32], nb[32], out[4200], err[4200];
    snprintf(npb, sizeof npb, "%d", np);
    snprintf(opts, sizeof opts, "%ld", o->options);
    snprintf(iters, sizeof iters, "%ld", k);
    snprintf(nb, sizeof nb, "%ld", blocks);
    snprintf(out, sizeof out, "%s/mrmpi.out", o->tmp);
    snprintf(err, sizeof err, "%s/mrmpi.err", o->tmp);
    char *argv[] = {o->mpirun,    "-np",       npb,  "--oversubscribe", "--bind-to", "none",
                    (char *)peer, "--options", opts, "--iterations",    iters,       "--blocks",
                    nb,           NULL};
    if (bench_run_logged(argv, out, err) != 0) return -1;
    char line[256];
    bench_first_line(out, line, sizeof line);
    return strncmp(line, "seconds ", 8) == 0 ? strtod(line + 8, NULL) : -1;
}

typedef struct mrmpi_pair {
    bt_opts *o;
    const char *peer;
    int ranks;
    long k, blocks;
    char **extra;
    int nextra;
} mrmpi_pair;

/* Side 0: MR-MPI at its best map task count; side 1: APC on CPUs. */
static double mrmpi_side(void *arg, int side)
{
    const mrmpi_pair *p = arg;
    if (side == 0) return mrmpi_once(p->o, p->peer, p->ranks, p->k, p->blocks);
    return bt_run_child(p->o, BT_BS, p->ranks > 1 ? p->ranks : 0, p->extra, p->nextra, NULL, 0);
}

void bt_mrmpi_peer(bt_opts *o)
{
    char peer[4200];
    if (bench_sibling("tessera-mrmpi-bs", peer, sizeof peer) != 0) {
        printf("MR-MPI peer: skipped (not built: install libmrmpi-dev and rebuild)\n");
        return;
    }
    if (bt_find_mpirun(o, "MR-MPI peer") != 0) return;
    long rounds = o->confirm > o->rounds ? o->confirm : o->rounds;
    printf("MR-MPI vs APC on Black-Scholes: %ld options spread over the ranks, 1 cpu per rank, "
           "MR-MPI at the best of 4/16/64 map tasks per rank in a first pass, then medians of %ld "
           "alternating round(s) and the median of the rounds' ratios [its confidence "
           "interval]%s\n",
           o->options, rounds, cores() < BT_MAX_RANKS ? " (4 ranks oversubscribed here)" : "");
    static const long ks[] = {1, 75};
    static const int ranks[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (size_t r = 0; r < sizeof ranks / sizeof ranks[0]; r++) {
            double best = INFINITY;
            long best_per = 0;
            for (long per = 4; per <= 64; per *= 4) {
                double s = mrmpi_once(o, peer, ranks[r], ks[i], per * ranks[r]);
                if (s > 0 && s < best) best = s, best_per = per;
            }
            char buf[256], *extra[12];
            int m = 0;
            bt_app_args(o, BT_BS, 1, ks[i], extra, &m, buf, sizeof buf);
            extra[m++] = "--processors";
            extra[m++] = "cpu";
            mrmpi_pair p = {o, peer, ranks[r], ks[i], best_per * ranks[r], extra, m};
            bench_pair t;
            int n = best_per > 0 ? bench_alternate(mrmpi_side, &p, rounds < 16 ? rounds : 16,
                                                   BENCH_STOP_AT_FAILED, &t)
                                 : 0;
            if (n == 0) continue;
            bench_ratio q = bench_median_ratio(t.t[1], t.t[0], n);
            printf("  K=%-3ld %d rank(s): MR-MPI %.3f s, APC %.3f s, APC/MR-MPI %.3f [%.3f, %.3f] "
                   "(goal < 1: %s)\n",
                   ks[i], ranks[r], bench_median(t.t[0], n), bench_median(t.t[1], n), q.median,
                   q.lo, q.hi,
                   q.median < 1 ? "met"
                   : q.lo <= 1  ? "tie"
                                : "MISS");
            fflush(stdout);
        }
}
