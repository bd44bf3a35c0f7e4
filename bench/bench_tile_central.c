/*
 * bench_tile_central.c — `tessera bench tile --parts central`: the APC+
 * paper's APC-vs-APC+ comparison (its Figures 6-8).  Each application runs
 * under mpirun at 2 and 3 ranks of one cpu each, under --policy capc (one
 * controller, rank 0's, hands every rank's processors their tiles) and apc
 * (APC+: a controller per rank, ranks steal), in alternating rounds; the
 * figure is the median of the rounds' capc/apc ratios, with each policy's
 * median time split as the paper splits it (BOOT, PROC, L-IMB, INIT, TCP,
 * OUT, OVER; tile.h).  On a machine with fewer cores than the ranks' threads
 * want, and always between ranks of one machine (links are shared memory),
 * the runs emulate a cluster: the output says so.
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

enum { PARTS = 7, ROUNDS_MAX = 16 };
static const char *const part_names[PARTS] = {"boot", "proc", "limb", "init", "tcp", "out", "over"};

typedef struct central_run {
    bt_opts *o;
    bt_app app;
    int ranks;
    char *extra[16];
    int n;
    char buf[4300];
    double parts[2][PARTS][ROUNDS_MAX]; /* per side, part, round */
    int got[2];
} central_run;

static double json_number(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(json, pat);
    return at ? strtod(at + strlen(pat), NULL) : NAN;
}

/* Side 0: APC+ (apc); side 1: the centralised APC (capc). */
static double central_side(void *arg, int side)
{
    central_run *r = arg;
    static char stats[1 << 16];
    const char *policy = side ? "capc" : "apc";
    r->extra[r->n - 1] = (char *)policy;
    double s = bt_run_child(r->o, r->app, r->ranks, r->extra, r->n, stats, sizeof stats);
    if (s <= 0) return s;
    bt_record(r->o, r->app, "central", r->app == BT_BS ? 10 : 0, r->ranks, policy, 0, s, stats);
    int k = r->got[side];
    if (k < ROUNDS_MAX) {
        for (int p = 0; p < PARTS; p++) r->parts[side][p][k] = json_number(stats, part_names[p]);
        r->got[side]++;
    }
    return s;
}

static void print_split(const central_run *r, int side, const char *name, double secs)
{
    printf("    %-5s %8.3f s:", name, secs);
    for (int p = 0; p < PARTS; p++) {
        double v[ROUNDS_MAX];
        int n = r->got[side];
        memcpy(v, r->parts[side][p], (size_t)n * sizeof *v);
        printf(" %s %.3f", part_names[p], n > 0 ? bench_median(v, n) : NAN);
    }
    printf("\n");
}

static void central_one(bt_opts *o, bt_app app, int ranks, long rounds)
{
    central_run *r = calloc(1, sizeof *r);
    if (r == NULL) return;
    *r = (central_run){.o = o, .app = app, .ranks = ranks};
    if (bt_app_args(o, app, 1, 10, r->extra, &r->n, r->buf, sizeof r->buf) < 0) {
        free(r);
        return;
    }
    r->extra[r->n++] = "--processors";
    r->extra[r->n++] = "cpu";
    r->extra[r->n++] = "--policy";
    r->extra[r->n++] = "apc"; /* central_side sets it */
    bench_pair t;
    int got = bench_alternate(central_side, r, rounds, BENCH_SKIP_FAILED, &t);
    if (got == 0) {
        printf("%-12s %d ranks: no comparison (a run failed)\n", bt_tile_app_names[app], ranks);
        free(r);
        return;
    }
    bench_ratio q = bench_median_ratio(t.t[1], t.t[0], got);
    printf(
        "%-12s %d ranks: capc/apc %.3f [%.3f, %.3f] (median of %d alternating rounds' "
        "ratios [its %.0f%% confidence interval]); median seconds, and each part's own median:\n",
        bt_tile_app_names[app], ranks, q.median, q.lo, q.hi, got, 100 * q.coverage);
    print_split(r, 0, "apc", bench_median(t.t[0], got));
    print_split(r, 1, "capc", bench_median(t.t[1], got));
    fflush(stdout);
    free(r);
}

void bt_central(bt_opts *o)
{
    if (bt_find_mpirun(o, "APC vs APC+") != 0) return;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long rounds = o->confirm > 0 ? o->confirm : 3;
    printf("APC vs APC+ (the paper's Figures 6-8): --policy capc (rank 0's controller hands "
           "every rank's processors their tiles) against apc (a controller per rank, "
           "stealing); 1 cpu per rank, Black-Scholes K=10, the sweep's problem sizes, input "
           "spread over the ranks; seconds from run start to last output gathered.\n"
           "EMULATED: every rank runs on this one machine (%ld cores; links between ranks are "
           "shared memory, not a network)%s.\n",
           cores,
           cores < 6 ? "; each rank's controller, message thread and processor share the "
                       "cores, so 2 ranks already oversubscribe them"
                     : "");
    for (int a = 0; a < BT_APPS; a++) {
        if (!strstr(o->apps, bt_tile_app_names[a])) continue;
        for (int ranks = 2; ranks <= 3; ranks++) central_one(o, (bt_app)a, ranks, rounds);
    }
    printf("capc/apc > 1: the centralised APC is slower.  Parts (tile.h): boot, proc, l-imb, "
           "init (input), tcp (transfers between ranks), out (output), over (the rest).\n");
}
