/*
 * bench_tick_plan.c — which configurations `tessera bench tick` measures and
 * the command line of each measurement.
 *
 * A regime is a family of series (DESIGN §6, "Emulated step cost"):
 *   real     Jacobi with 1000×1000 cells per worker and the fish school with
 *            2000 fish per worker, 2 and 4 workers, no step cost — what this
 *            machine really computes;
 *   paper    the paper's EC2 setting: a 7×7 process grid (49 workers), small
 *            partitions (Jacobi 100×100, 50 fish per worker: 49 workers share
 *            2 cores, so the real compute must stay well below the emulated
 *            1 ms per tick), 1 ms of emulated compute per tick;
 *   scaleup  the paper's Figure 13: Jacobi at 4 … 64 workers, local against
 *            combined, emulated compute;
 * With --clock virtual the two emulated regimes run on simulated time
 * (src/tick/vclock.c), so they take the paper's sizes: 800 fish per worker
 * in paper, and scaleup at 4 … 100 workers for Jacobi and the fish school.
 *   layers   the paper's Figures 8-10: repl alone, throughput against the
 *            layers m for the periods k = 1, 2 and 5, at 4 workers (Jacobi
 *            400×400, 800 fish per worker) under a fixed latency, so the
 *            lazy replication of Algorithm 3 is what is measured;
 *   depth    the paper's Figures 6-7: sched alone, throughput against the
 *            depth d = 1, 2, 4, 8, 16, same sizes, under --jitter.
 * A series is one configuration; its key (every parameter that changes the
 * figures, but not the technique, round or jitter switch) names it in the
 * JSON Lines file, so a later run with the same options resumes it.
 */
#include <stdio.h>
#include <string.h>

#include "bench_tick.h"
#include "common.h"

const char *const bt_tech_names[BT_NTECH] = {"local", "sched", "repl", "combined", "bsp", "auto"};
const char *const bt_app_names[BT_NAPP] = {"jacobi", "fish", "pagerank-tick"};
const char *const bt_regime_names[BT_NREGIME] = {"real", "paper", "scaleup", "layers", "depth"};
static const long depth_sweep[] = {1, 2, 4, 8, 16};

/* The layers regime's sweep, for each k: m = k-1 (no layer to spare) and
 * every larger m of the list. */
static const long layers_periods[] = {1, 2, 5};
static const long layers_sweep[] = {0, 1, 3, 5, 7, 9, 14};

/* Per-regime defaults. */
typedef struct bt_regime_spec {
    long workers[8];
    int nworkers;
    long side, fish_per_worker;
    int emulated;   /* uses --step-cost */
    unsigned apps;  /* apps this regime may run */
    unsigned techs; /* techniques this regime may run */
} bt_regime_spec;

#define ALL_TECHS ((1u << BT_NTECH) - 1)
#define ALL_APPS ((1u << BT_NAPP) - 1)
#define GEOMETRIC_APPS ((1u << BT_JACOBI) | (1u << BT_FISH))
#define PAGES_PER_WORKER 50000 /* pagerank-tick in depth: a web graph, METIS parts */

static const bt_regime_spec regime_specs[BT_NREGIME] = {
    [BT_REAL] = {{2, 4}, 2, 1000, 2000, 0, GEOMETRIC_APPS, ALL_TECHS},
    [BT_PAPER] = {{49}, 1, 100, 50, 1, GEOMETRIC_APPS, ALL_TECHS},
    [BT_SCALEUP] = {{4, 9, 16, 25, 36, 49, 64},
                    7,
                    100,
                    50,
                    1,
                    1u << BT_JACOBI,
                    (1u << BT_LOCAL) | (1u << BT_COMBINED)},
    [BT_LAYERS] = {{4}, 1, 200, 800, 0, GEOMETRIC_APPS, 1u << BT_REPL},
    [BT_DEPTH] = {{4}, 1, 200, 800, 0, ALL_APPS, 1u << BT_SCHED},
};

/* --clock virtual: the paper's sizes, which need more CPU than real time allows. */
static const long virtual_scaleup[] = {4, 9, 16, 25, 36, 49, 64, 81, 100};
#define VIRTUAL_FISH_PER_WORKER 800 /* partition side ~8x a fish's reach (issue 12) */

/* The most square r×c = w with r <= c (a 7×7 grid for 49, 1×2 for 2). */
static void grid_layout(long w, long *r_out, long *c_out)
{
    long r = 1;
    for (long d = 1; d * d <= w; d++)
        if (w % d == 0) r = d;
    *r_out = r;
    *c_out = w / r;
}

static void make_key(bt_series *s)
{
    char size[64];
    if (s->app == BT_JACOBI) snprintf(size, sizeof size, "%ldx%ld", s->rows, s->cols);
    else if (s->app == BT_PAGERANK) snprintf(size, sizeof size, "web%ld", s->pages);
    else snprintf(size, sizeof size, "fish%ld/repart%ld", s->fish, s->repart_every);
    snprintf(s->key, sizeof s->key, "%s/w%ld/np%ld/%s/t%ld/cost%g/j=%s/d%ld-k%ld-m%ld/seed%ld%s",
             bt_app_names[s->app], s->workers, s->ranks, size, s->ticks, s->step_cost_us, s->jitter,
             s->depth, s->period, s->layers, s->seed, s->virtual_clock ? "/vclock" : "");
}

/* Fish repartitioning must fall on a communication tick of repl (a multiple
 * of k); every technique of the series uses the same period so they stay
 * comparable. */
static long repart_for(const bt_options *o)
{
    long k = o->fish_period;
    return (o->repart_every + k - 1) / k * k;
}

static void fill_series(const bt_options *o, bt_regime g, bt_app a, long w, bt_series *s)
{
    const bt_regime_spec *rs = &regime_specs[g];
    *s = (bt_series){.regime = g,
                     .app = a,
                     .workers = w,
                     .ranks = o->mpirun_np > 0 ? o->mpirun_np : 1,
                     .ticks = o->ticks,
                     .depth = o->depth,
                     .period = o->period,
                     .layers = o->layers,
                     .seed = o->seed,
                     .jitter = o->jitter,
                     .step_cost_us = rs->emulated ? o->step_cost_us : 0.0,
                     .virtual_clock = rs->emulated && o->virtual_clock,
                     .techs = o->techs & rs->techs};
    if (a == BT_JACOBI) {
        long r, c;
        s->side = o->jacobi_side > 0 ? o->jacobi_side : rs->side;
        grid_layout(w, &r, &c);
        /* Taller than wide: the runtime's block layout then cuts rows, and a
         * halo is one run of contiguous cells instead of a column. */
        s->rows = c * s->side;
        s->cols = r * s->side;
    } else if (a == BT_PAGERANK) {
        long per = o->pages_per_worker > 0 ? o->pages_per_worker : PAGES_PER_WORKER;
        s->pages = per * w;
    } else {
        /* Fish replicas are costly (a layer is rho + s*dt = 6.2 wide around
         * small regions), so the fish school has its own d, k, m. */
        s->depth = o->fish_depth;
        s->period = o->fish_period;
        s->layers = o->fish_layers;
        long per = s->virtual_clock ? VIRTUAL_FISH_PER_WORKER : rs->fish_per_worker;
        s->fish = (o->fish_per_worker > 0 ? o->fish_per_worker : per) * w;
        s->repart_every = repart_for(o);
    }
    make_key(s);
}

/* The layers regime: one series per (k, m) of the sweep. */
static int add_layers_series(const bt_options *o, bt_app a, long w, long k, long m, bt_series *out,
                             int n, int max)
{
    if (n == max) {
        app_error(BT_NAME, "more than %d configurations", max);
        return -1;
    }
    bt_series *s = &out[n];
    fill_series(o, BT_LAYERS, a, w, s);
    s->period = k;
    s->layers = m;
    s->jitter = o->layers_jitter;
    if (a == BT_FISH) s->repart_every = (o->repart_every + k - 1) / k * k;
    make_key(s);
    return n + 1;
}

/* The depth regime: one series per d of the sweep. */
static int plan_depth(const bt_options *o, bt_app a, long w, bt_series *out, int n, int max)
{
    for (size_t i = 0; i < sizeof depth_sweep / sizeof *depth_sweep; i++) {
        if (n == max) {
            app_error(BT_NAME, "more than %d configurations", max);
            return -1;
        }
        bt_series *s = &out[n++];
        fill_series(o, BT_DEPTH, a, w, s);
        s->depth = depth_sweep[i];
        make_key(s);
    }
    return n;
}

static int plan_layers(const bt_options *o, bt_app a, long w, bt_series *out, int n, int max)
{
    for (size_t i = 0; i < sizeof layers_periods / sizeof *layers_periods && n >= 0; i++) {
        long k = layers_periods[i];
        n = add_layers_series(o, a, w, k, k - 1, out, n, max);
        for (size_t j = 0; j < sizeof layers_sweep / sizeof *layers_sweep && n >= 0; j++)
            if (layers_sweep[j] > k - 1)
                n = add_layers_series(o, a, w, k, layers_sweep[j], out, n, max);
    }
    return n;
}

/* Expand the selected regimes into series, in the order real, paper,
 * scaleup, layers; apps in the order jacobi, fish; workers ascending as
 * given.  Returns the count, or -1 after an error message. */
int bt_plan(const bt_options *o, bt_series *out, int max)
{
    int n = 0;
    for (int g = 0; g < BT_NREGIME; g++) {
        if (!(o->regimes & (1u << g))) continue;
        const bt_regime_spec *rs = &regime_specs[g];
        const long *ws = o->nworkers ? o->workers : rs->workers;
        int nw = o->nworkers ? o->nworkers : rs->nworkers;
        unsigned apps = rs->apps;
        if (g == BT_SCALEUP && o->virtual_clock) {
            apps = GEOMETRIC_APPS; /* the paper's Figure 13 is the fish school's */
            if (!o->nworkers) {
                ws = virtual_scaleup;
                nw = (int)(sizeof virtual_scaleup / sizeof *virtual_scaleup);
            }
        }
        if ((o->techs & rs->techs) == 0) {
            printf("note: regime %s skipped: it runs only %s\n", bt_regime_names[g],
                   g == BT_LAYERS  ? "repl"
                   : g == BT_DEPTH ? "sched"
                                   : "local and combined");
            continue;
        }
        for (int a = 0; a < BT_NAPP; a++) {
            if (!(o->apps & apps & (1u << a))) continue;
            for (int i = 0; i < nw; i++) {
                if (o->mpirun_np > 0 && ws[i] % o->mpirun_np != 0) {
                    printf("note: %s %s with %ld workers skipped: not divisible into "
                           "%ld ranks\n",
                           bt_regime_names[g], bt_app_names[a], ws[i], o->mpirun_np);
                    continue;
                }
                if (g == BT_LAYERS || g == BT_DEPTH) {
                    n = (g == BT_LAYERS ? plan_layers : plan_depth)(o, (bt_app)a, ws[i], out, n,
                                                                    max);
                    if (n < 0) return -1;
                    continue;
                }
                if (n == max) {
                    app_error(BT_NAME, "more than %d configurations", max);
                    return -1;
                }
                fill_series(o, (bt_regime)g, (bt_app)a, ws[i], &out[n++]);
            }
        }
    }
    return n;
}

void bt_series_describe(const bt_series *s, char *out, size_t len)
{
    char size[96], ranks[48] = "", cost[80] = "";
    long r, c;
    grid_layout(s->workers, &r, &c);
    if (s->app == BT_JACOBI)
        snprintf(size, sizeof size, "%ldx%ld cells (%ldx%ld per worker)", s->rows, s->cols, s->side,
                 s->side);
    else if (s->app == BT_PAGERANK)
        snprintf(size, sizeof size, "web graph of %ld pages (%ld per worker, METIS parts)",
                 s->pages, s->pages / s->workers);
    else
        snprintf(size, sizeof size, "%ld fish (%ld per worker, repartition every %ld)", s->fish,
                 s->fish / s->workers, s->repart_every);
    if (s->ranks > 1) snprintf(ranks, sizeof ranks, " as %ld MPI ranks", s->ranks);
    if (s->step_cost_us > 0)
        snprintf(cost, sizeof cost, ", step cost %g us/tick %s", s->step_cost_us,
                 s->virtual_clock ? "on the VIRTUAL clock (simulated time)"
                                  : "EMULATED (workers sleep)");
    char km[48] = "";
    if (s->regime == BT_LAYERS) snprintf(km, sizeof km, ", k=%ld m=%ld", s->period, s->layers);
    if (s->regime == BT_DEPTH) snprintf(km, sizeof km, ", d=%ld", s->depth);
    snprintf(out, len, "%s %s: %ld workers (%ldx%ld)%s, %s, %ld ticks%s, jitter %s%s",
             bt_regime_names[s->regime], bt_app_names[s->app], s->workers, r, c, ranks, size,
             s->ticks, cost, s->jitter, km);
}

/* ------------------------------------------------------------ command line */

typedef struct argv_builder {
    char **argv;
    char (*bufs)[64];
    int n, nbuf;
} argv_builder;

static void add(argv_builder *b, const char *s)
{
    if (b->n < BT_ARGV_MAX - 1) b->argv[b->n++] = (char *)s;
}

static void add_long(argv_builder *b, const char *opt, long v)
{
    add(b, opt);
    snprintf(b->bufs[b->nbuf], 64, "%ld", v);
    add(b, b->bufs[b->nbuf++]);
}

static void add_technique(argv_builder *b, const bt_series *s, bt_tech t)
{
    add(b, "--alg");
    add(b, bt_tech_names[t]);
    if (t == BT_SCHED || t == BT_COMBINED) add_long(b, "--depth", s->depth);
    if (t == BT_REPL || t == BT_COMBINED) {
        add_long(b, "--period", s->period);
        add_long(b, "--layers", s->layers);
    }
}

static void add_app(argv_builder *b, const bt_series *s)
{
    add(b, "run");
    add(b, bt_app_names[s->app]);
    if (s->app == BT_JACOBI) {
        add_long(b, "--rows", s->rows);
        add_long(b, "--cols", s->cols);
    } else if (s->app == BT_PAGERANK) {
        add(b, "--gen");
        snprintf(b->bufs[b->nbuf], 64, "web:%ld", s->pages);
        add(b, b->bufs[b->nbuf++]);
    } else {
        add_long(b, "--fish", s->fish);
        add(b, "--informed");
        add(b, "0.1");
        if (s->repart_every > 0) add_long(b, "--repart-every", s->repart_every);
    }
    add_long(b, "--ticks", s->ticks);
}

/* `[mpirun -np N --oversubscribe --bind-to none] EXE run APP … --quiet
 * --metrics FILE`; --workers is per rank. */
int bt_child_argv(const bt_series *s, bt_tech t, int round, int jittered, const char *exe,
                  const char *mpirun, const char *metrics, char **argv, char bufs[][64])
{
    argv_builder b = {argv, bufs, 0, 0};
    if (mpirun != NULL && mpirun[0] != '\0') {
        add(&b, mpirun);
        add_long(&b, "-np", s->ranks);
        add(&b, "--oversubscribe");
        add(&b, "--bind-to");
        add(&b, "none");
    }
    add(&b, exe);
    add_app(&b, s);
    add_technique(&b, s, t);
    add_long(&b, "--workers", s->workers / s->ranks);
    add(&b, "--jitter");
    add(&b, jittered ? s->jitter : "none");
    add_long(&b, "--seed", s->seed + round);
    if (s->step_cost_us > 0) {
        add(&b, "--step-cost");
        snprintf(bufs[b.nbuf], 64, "%g", s->step_cost_us);
        add(&b, bufs[b.nbuf++]);
    }
    if (s->virtual_clock) {
        add(&b, "--clock");
        add(&b, "virtual");
    }
    add(&b, "--quiet");
    add(&b, "--metrics");
    add(&b, metrics);
    argv[b.n] = NULL;
    return b.n;
}
