/*
 * bench_tick.h — what the files of `tessera bench tick` share (not part of
 * the library).  The benchmark is the jitter experiment of the SoCC 2011
 * paper: every technique of the tick face (local, sched, repl, combined,
 * bsp) run as a child `tessera run APP …`, with and without a latency
 * profile, in rounds of fixed order.
 *
 *   bench_tick.c         options, the main loop
 *   bench_tick_plan.c    regimes → series (one configuration each), command lines
 *   bench_tick_child.c   one measurement: fork/execv, timeout, the metrics it wrote
 *   bench_tick_json.c    the flat-JSON reader, the JSON Lines store (resume)
 *   bench_tick_report.c  mean ± sd, ratios, efficiency, goal checks, plots
 */
#ifndef TESS_BENCH_TICK_H
#define TESS_BENCH_TICK_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "bench_util.h"

#define BT_NAME "bench tick"
#define BT_KEY_MAX 384
#define BT_MAX_SERIES 128
#define BT_MAX_WORKER_COUNTS 32

/* Techniques in the fixed order of a round. */
/* auto is measured only when --techniques names it (or says all). */
typedef enum bt_tech {
    BT_LOCAL,
    BT_SCHED,
    BT_REPL,
    BT_COMBINED,
    BT_BSP,
    BT_AUTO,
    BT_NTECH
} bt_tech;
typedef enum bt_app { BT_JACOBI, BT_FISH, BT_PAGERANK, BT_NAPP } bt_app;
typedef enum bt_regime { BT_REAL, BT_PAPER, BT_SCALEUP, BT_LAYERS, BT_DEPTH, BT_NREGIME } bt_regime;

extern const char *const bt_tech_names[BT_NTECH];
extern const char *const bt_app_names[BT_NAPP];
extern const char *const bt_regime_names[BT_NREGIME];

typedef struct bt_options {
    unsigned regimes, apps, techs; /* bit masks: 1 << BT_REAL, … */
    long rounds, ticks;
    long depth, period, layers;                /* d, k, m for sched/repl/combined (jacobi) */
    long fish_depth, fish_period, fish_layers; /* the same for the fish school */
    long repart_every;                         /* fish: rounded up to a multiple of k */
    long seed;                                 /* round r uses seed + r */
    double step_cost_us;                       /* paper and scaleup regimes */
    int virtual_clock;                         /* --clock virtual: paper and scaleup */
    long jacobi_side;                          /* 0: the regime's (real 1000, paper 100) */
    long fish_per_worker;                      /* 0: the regime's */
    long pages_per_worker;                     /* pagerank-tick: web-graph vertices */
    long workers[BT_MAX_WORKER_COUNTS];        /* override of the regimes' counts */
    int nworkers;
    long mpirun_np;   /* 0: embedded children */
    double timeout_s; /* per child */
    int fresh, dry_run, no_plots;
    const char *jitter, *json_path, *plots_dir, *plot_script, *tmp_parent;
    const char *layers_jitter; /* the layers regime's latency (default fixed:5000) */
} bt_options;

/* One configuration: every technique, with and without jitter, R rounds. */
typedef struct bt_series {
    bt_regime regime;
    bt_app app;
    long workers, ranks;   /* total workers; ranks > 1 under mpirun */
    long rows, cols, side; /* jacobi: side × side cells per worker */
    long fish;             /* fish: total */
    long pages;            /* pagerank-tick: vertices of the generated web graph */
    long ticks, depth, period, layers, repart_every, seed;
    double step_cost_us;
    int virtual_clock; /* simulated time (--clock virtual), emulated regimes only */
    const char *jitter;
    unsigned techs;
    char key[BT_KEY_MAX]; /* identifies the configuration in the JSON */
} bt_series;

/* What one child reported (DESIGN §6 metrics). */
typedef struct bt_figures {
    double tps, tuple_tps, wall, step, wait, runtime, messages, bytes;
    double runtime_cpu;  /* runtime_cpu_seconds: the runtime's own CPU (NAN if absent) */
    double tick_seconds; /* the ticks alone (wall_seconds includes setup); NAN if absent */
    double edges;        /* pagerank-tick: the graph's edges (edge-ticks/s); NAN if absent */
    long workers_total;
    int emulated;
} bt_figures;

/* One measurement, loaded from the JSON Lines file or just taken. */
typedef struct bt_record {
    char key[BT_KEY_MAX];
    bt_tech tech;
    int round, jittered;
    bt_figures fig;
} bt_record;

typedef struct bt_store {
    bt_record *v;
    int n, cap;
} bt_store;

/* plan */
int bt_plan(const bt_options *o, bt_series *out, int max);
void bt_series_describe(const bt_series *s, char *out, size_t len);
/* argv for one measurement (NULL-terminated, strings in bufs); count. */
int bt_child_argv(const bt_series *s, bt_tech t, int round, int jittered, const char *exe,
                  const char *mpirun, const char *metrics, char **argv, char bufs[][64]);
#define BT_ARGV_MAX 48
#define BT_ARGV_BUFS 16

/* child */
typedef struct bt_runner {
    char exe[PATH_MAX];    /* /proc/self/exe or TESS_BENCH_TICK_CHILD */
    char mpirun[PATH_MAX]; /* empty unless --mpirun */
    char tmpdir[PATH_MAX / 2];
    double timeout_s;
} bt_runner;
int bt_runner_init(bt_runner *r, const bt_options *o);
int bt_runner_tmpdir(bt_runner *r, const char *parent);
void bt_runner_cleanup(bt_runner *r);
/* 0 with *fig filled; -1 after printing one line naming the reason. */
int bt_measure(bt_runner *r, const bt_series *s, bt_tech t, int round, int jittered,
               bt_figures *fig);
void bt_print_command(FILE *out, char **argv);

/* json */
const char *bt_json_find(const char *obj, const char *key);
int bt_json_number(const char *obj, const char *key, double *out);
int bt_json_string(const char *obj, const char *key, char *out, size_t len);
int bt_figures_parse(const char *obj, bt_figures *fig);
int bt_store_load(bt_store *st, const char *path);
const bt_record *bt_store_find(const bt_store *st, const char *key, bt_tech t, int round,
                               int jittered);
int bt_store_put(bt_store *st, const bt_record *rec);
void bt_store_drop(bt_store *st, const char *key);
void bt_store_free(bt_store *st);
int bt_append_record(const char *path, const bt_series *s, bt_tech t, int round, int jittered,
                     const bt_figures *fig);
int bt_append_reset(const char *path, const bt_series *s);

/* report */
void bt_report_series(const bt_store *st, const bt_series *s, long rounds);
void bt_report_scaleup(const bt_store *st, const bt_series *series, int n, long rounds);
void bt_report_layers(const bt_store *st, const bt_series *series, int n, long rounds);
void bt_report_depth(const bt_store *st, const bt_series *series, int n, long rounds);
void bt_report_goals(const bt_store *st, const bt_series *series, int n, long rounds);
int bt_run_plots(const bt_options *o, const char *exe_dir);

#endif
