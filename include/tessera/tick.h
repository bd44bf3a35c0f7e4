/*
 * tick.h — the tick face: time-stepped applications (DESIGN §3; docs/ticks.md).
 *
 * An application describes
 *   - its state as tuples held by a *state class* (a dense 2-D grid, particles
 *     with a spatial index, a graph with vertex labels, or its own), and
 *   - the functions of the SoCC 2011 paper's Table 1 over *queries* — small
 *     fixed-size values that name sets of tuples (a rectangle, a partition and
 *     a hop count):
 *       PART(S, n)   split the state into n queries, one per tick process
 *       NEW(Q)       the initial tuples inside Q              (state class)
 *       STEP(S, Q)   the tuples of Q at tick t+1 from state t (state class)
 *       RD(Q)        tuples that STEP reads to compute the tuples it keeps in Q
 *       WD(Q)        tuples at tick t that may be in Q at tick t+1
 *       RX(Q)        the tuples of Q whose STEP reads nothing outside Q
 *       WX(Q)        the tuples at tick t+1 fully determined by stepping Q:
 *                    every tuple that may be in them at t+1 comes from Q
 *       DISJOINT(A, B)  1 only if no tuple can be in both
 *       IX(Q)        (optional, not in Table 1) tuples at tick t+1 that
 *                    may depend on a tuple of Q at tick t: those whose
 *                    STEP reads one, or that may come from one
 * These are the SoCC 2011 paper's Table 1: RD and WD grow a query (the fish
 * school: by the visibility and by the reach), RX and WX shrink it.  Safe
 * approximations: RD and WD may return a superset, RX and WX a subset, and
 * DISJOINT may say 0 when unsure, IX may return a superset; the result stays
 * exact, only more is sent or less computed ahead.  The other directions (RD or WD too small, RX or
 * WX too large) give wrong states.  With TESS_TICK_CHECK=1 in the
 * environment the three state classes shipped (tick_grid.h, tick_graph.h,
 * tick_particles.h) end the run instead, naming the tick, when a STEP reads
 * a tuple its process does not hold then (docs/ticks.md, "Checking mode").
 *
 * The runtime derives what it needs without looking inside queries: hold =
 * RD∘WD (what a process must hold to step Q) and its powers, which give the
 * neighbours, the replica layers and what to send; and WX∘RX (what stepping
 * Q alone determines) and its powers on a process's own query, which give
 * what it can compute ahead of late messages.  With IX (unless
 * TESS_TICK_SIDES=off is in the environment), what it computes ahead is
 * everything but what the late neighbours' queries reach (IX's powers on
 * them): the sides whose messages came are not held back.  A
 * composed query is a
 * tess_region: the tuples in all of `pos` and in none of `neg`; state
 * classes evaluate regions with their own membership test.
 *
 * Every worker of every rank is one tick process.  The algorithms
 * (tess_tick_alg) give bitwise the state of running STEP sequentially on the
 * whole state, for any worker count, rank count, latency model and
 * parameters, provided STEP is a deterministic function of the tuples it
 * reads (canonical summation order, counter-based random numbers keyed by
 * tuple id and tick — see rng.h — and no libm calls whose last bit varies).
 */
#ifndef TESSERA_TICK_H
#define TESSERA_TICK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- queries and regions ---- */

#define TESS_QUERY_BYTES 48

/* Opaque to the runtime; a state class defines the layout (memcpy a struct of
 * at most TESS_QUERY_BYTES in and out; unused bytes must be zero so equal
 * queries compare equal with memcmp). */
typedef struct tess_query {
    unsigned char bytes[TESS_QUERY_BYTES];
} tess_query;

/* The classes' query constructors and readers (tess_grid_query,
 * tess_grid_rect_of, ...) are built on these two; not for applications:
 * a query holding the len <= TESS_QUERY_BYTES bytes at desc, the rest zero,
 * and those bytes copied back out. */
static inline tess_query tess__query_pack(const void *desc, size_t len)
{
    tess_query q;
    memset(&q, 0, sizeof q);
    memcpy(q.bytes, desc, len);
    return q;
}

static inline void tess__query_unpack(const tess_query *q, void *desc_out, size_t len)
{
    memcpy(desc_out, q->bytes, len);
}

/* The tuples that are in every pos[i] and in no neg[i].  npos >= 1. */
typedef struct tess_region {
    int npos, nneg;
    const tess_query *pos;
    const tess_query *neg;
} tess_region;

/* ---- a growable byte buffer, for packing tuples ---- */
typedef struct tess_buf {
    unsigned char *data;
    size_t len, cap;
} tess_buf;

/* Append n bytes; TESS_OK or TESS_ERR_NOMEM (buffer unchanged). */
TESS_API int tess_buf_append(tess_buf *b, const void *p, size_t n);
/* Make room for n more bytes and return where they go (len not advanced), or NULL. */
TESS_API void *tess_buf_reserve(tess_buf *b, size_t n);
/* Release the bytes and empty the buffer; accepts NULL. */
TESS_API void tess_buf_free(tess_buf *b);

/* ---- state classes ---- */

/*
 * A state class holds, for one tick process, several *versions* of its
 * tuples (one per tick in flight), in slots 0 .. nslots-1.  The runtime tells
 * it which region every version must eventually hold; a version starts empty
 * and grows by merge() (tuples received) and step() (tuples computed).  A
 * tuple is never computed twice: step() skips tuples the destination version
 * already holds.  All callbacks run on the process's own worker thread.
 */
typedef struct tess_tick_app tess_tick_app;

typedef struct tess_state_class {
    const char *name;
    /* One instance per tick process.  `own` is the process's query; `hull` a
     * query containing every tuple any of its versions will hold. */
    void *(*create)(const tess_tick_app *app, int nslots, const tess_query *own,
                    const tess_query *hull);
    void (*destroy)(void *st);
    /* Empty a slot. */
    void (*clear)(void *st, int slot);
    /* NEW: put the initial tuples of region r into slot (0 or TESS_ERR_*). */
    int (*init)(void *st, int slot, const tess_region *r);
    /* Append the tuples of slot that are in r to out, in a form merge() takes. */
    int (*pack)(void *st, int slot, const tess_region *r, tess_buf *out);
    /* Add packed tuples that are in r (NULL: all) to slot.  TESS_ERR_FORMAT on
     * a malformed buffer. */
    int (*merge)(void *st, int slot, const void *data, size_t len, const tess_region *r);
    /* STEP: put into slot `to` the tuples of region r at tick `tick`+1, computed
     * from slot `from` (tick `tick`), skipping tuples `to` already holds.  The
     * runtime guarantees `from` holds every tuple this reads.  Returns the
     * number of tuples computed (>= 0) or a negative TESS_ERR_*. */
    int64_t (*step)(void *st, int from, int to, const tess_region *r, int64_t tick);
    /* Number of tuples of slot in r. */
    int64_t (*count)(void *st, int slot, const tess_region *r);
    /* For PART: a view of the whole state of `slot` (class-defined: see the
     * class's header), valid until the slot changes. */
    const void *(*snapshot)(void *st, int slot);
    /* Checkpoints (docs/checkpoints.md, "Ticks"); both optional, NULL: pack
     * and merge.  save: append the tuples of slot in r to out in a form that
     * does not depend on the partition (each tuple with its global identity:
     * cell, particle or vertex id), so a run with other worker or rank counts
     * can load it.  load: add the saved tuples that are in r (NULL: all) to
     * slot; TESS_ERR_FORMAT on a malformed buffer. */
    int (*save)(void *st, int slot, const tess_region *r, tess_buf *out);
    int (*load)(void *st, int slot, const void *data, size_t len, const tess_region *r);
} tess_state_class;

/* ---- the application ---- */

struct tess_tick_app {
    const char *name;              /* "jacobi": messages and metrics */
    const tess_state_class *state; /* how tuples are stored */
    void *user;                    /* identical on every rank; never sent */
    const void *class_fns;         /* NEW/STEP callbacks typed by the class */
    tess_query universe;           /* a query containing every tuple */
    /* PART: n queries that partition the universe (every tuple that can
     * ever exist in exactly one: with --repart-every the queries computed
     * from the state of tick N - N/2 split the state of tick N).
     * `snapshot` is state->snapshot() of a version holding every tuple, or
     * NULL when the state does not matter.  Deterministic.
     * 0, or a negative status with a one-line message left by
     * tess_set_error(ctx, ...).  Runs on a worker thread: at the start
     * (and on a restore) in every tick process; at a re-partitioning in
     * process 0 only, whose queries every process then takes (and, with
     * part_ignores_state, in every process again). */
    int (*part)(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts);
    /* 1: PART does not look at the state (a fixed block layout, a graph
     * partition): the runtime passes snapshot NULL and saves building it. */
    int part_ignores_state;
    void (*rd)(void *user, const tess_query *q, tess_query *out);
    void (*wd)(void *user, const tess_query *q, tess_query *out);
    void (*rx)(void *user, const tess_query *q, tess_query *out);
    void (*wx)(void *user, const tess_query *q, tess_query *out);
    int (*disjoint)(void *user, const tess_query *a, const tess_query *b);
    /* IX, optional: with it, only the late neighbours' sides wait for
     * them (TESS_TICK_SIDES=off: without, only what a process's own tuples
     * determine is computed ahead of a late neighbour).  Where reads and moves reach as
     * far both ways (a stencil, fish that see and swim within a radius),
     * IX is hold = RD∘WD.  Added in 0.5. */
    void (*ix)(void *user, const tess_query *q, tess_query *out);
};

/* ---- running ---- */

typedef enum tess_tick_alg {
    TESS_TICK_BSP = 0,  /* a global barrier every tick */
    TESS_TICK_LOCAL,    /* Algorithm 1: exchange with dependency neighbours only */
    TESS_TICK_SCHED,    /* Algorithm 2: dependency scheduling, depth d */
    TESS_TICK_REPL,     /* Algorithm 3: every k ticks, m replica layers */
    TESS_TICK_COMBINED, /* 2 and 3 */
    TESS_TICK_AUTO      /* calibrate with local for a few ticks, then run what
                           the measured latency, step time and layer cost call
                           for (tess_tick_result says what; docs/ticks.md) */
} tess_tick_alg;

/* The clock a run's times are measured on. */
typedef enum tess_tick_clock {
    TESS_TICK_CLOCK_REAL = 0, /* CLOCK_MONOTONIC: what this machine measures */
    TESS_TICK_CLOCK_VIRTUAL   /* simulated: each process's clock moves only by
                                 modelled compute (step_cost_us) and by the
                                 latency model, so many more processes than
                                 cores report what a machine with a core each
                                 would see (one rank only; docs/ticks.md) */
} tess_tick_clock;

typedef struct tess_tick_options {
    tess_tick_alg alg;
    int64_t ticks;          /* number of ticks to run, >= 0 */
    int depth;              /* d, for sched/combined (>= 1); 1 default; auto chooses
                               d, k and m itself.  An algorithm that does not use
                               one of these three refuses it away from its default
                               (TESS_ERR_INVAL naming it) */
    int period;             /* k, for repl/combined; 1 default */
    int layers;             /* m, for repl/combined; k <= m+1; 0 default */
    int64_t repart_every;   /* 0: never; else PART again every N ticks (N % k == 0) */
    const char *jitter;     /* latency spec (NULL or "none": no delay) */
    uint64_t seed;          /* seeds the latency model only */
    double step_cost_us;    /* > 0: emulate this much compute per tick (DESIGN §6) */
    int64_t progress_every; /* > 0: a progress line every N ticks; -1: about every
                               second; 0: none (process 0, on stderr) */
    tess_tick_clock clock;  /* REAL default; VIRTUAL needs step_cost_us > 0 */
    /* Checkpoints (docs/checkpoints.md, "Ticks"): NULL, or the directory
     * where rank 0 writes the state of every checkpoint_every-th tick. */
    const char *checkpoint_dir;
    int64_t checkpoint_every; /* ticks between checkpoints, >= 1 with a directory */
    int restore;              /* 1: resume from the newest valid checkpoint, if any */
    int checkpoint_overwrite; /* 1: take a directory of another job (deleting it) */
    /* What identifies the run besides the app's name: the options that change
     * its result ("rows=64 cols=64"), never algorithm, workers, ranks or
     * latency (the state does not depend on them).  A checkpoint of another
     * job is refused. */
    const char *checkpoint_job;
} tess_tick_options;

/* Defaults: local, 0 ticks, d=1, k=1, m=0, no jitter, seed 0, real clock. */
TESS_API void tess_tick_options_init(tess_tick_options *o);

/* Parse an algorithm name ("bsp", "local", "sched", "repl", "combined", "auto"). */
TESS_API int tess_tick_alg_parse(const char *name, tess_tick_alg *out);
TESS_API const char *tess_tick_alg_name(tess_tick_alg alg);
/* Parse a clock name ("real", "virtual"); 0 or TESS_ERR_INVAL. */
TESS_API int tess_tick_clock_parse(const char *name, tess_tick_clock *out);
TESS_API const char *tess_tick_clock_name(tess_tick_clock clock);

/* Check options against each other and the latency spec; 0, or
 * TESS_ERR_INVAL with ctx's last error naming the field of
 * tess_tick_options and the value ("period: 3 needs layers >= 2 (k <= m+1)",
 * "jitter: lognormal: sigma must be >= 0, got '-1'").  tess_tick_run checks
 * the same; this lets a program report bad options before it starts.  Any
 * thread. */
TESS_API int tess_tick_options_check(tess_ctx *ctx, const tess_tick_options *o);

/* Per-process and total figures of a run (DESIGN §6 metrics). */
typedef struct tess_tick_figures {
    double wall_seconds;        /* process: from start to its last tick */
    double step_seconds;        /* in STEP (and emulated step cost) */
    double wait_seconds;        /* blocked waiting for messages */
    double runtime_seconds;     /* the rest: packing, merging, scheduling (wall time:
                                includes waiting for a core when oversubscribed) */
    double cpu_seconds;         /* CPU time of the process's thread */
    double step_cpu_seconds;    /* of which in STEP (0 with an emulated step cost:
                                not measured, to keep system calls off the path) */
    double wait_cpu_seconds;    /* of which blocking for messages (0 when emulated) */
    double runtime_cpu_seconds; /* the runtime's own: cpu - step_cpu - wait_cpu */
    uint64_t messages, bytes;   /* sent by this process */
    int64_t tuple_ticks;        /* tuples stepped (replicas count) */
    int64_t own_tuple_ticks;    /* tuples of its own partition stepped */
    double layer_ratio;         /* tuples one ghost layer adds to its own at tick 0,
                                   |L_1(Q_i)| / |Q_i| - 1 (total: the median) */
    double wait_median_seconds; /* the median over its first TESS_TICK_WAIT_SAMPLES
                                   ticks of the wait before each was complete (total:
                                   the median); far below wait_seconds / ticks when
                                   rare long delays make most of the wait */
} tess_tick_figures;

#define TESS_TICK_WAIT_SAMPLES 256

/* What TESS_TICK_AUTO measured in its calibration run (local
 * synchronisation): medians over processes, per tick. */
typedef struct tess_tick_calibration {
    int64_t ticks;         /* calibration ticks (not part of the result's state) */
    double seconds;        /* its wall time */
    double step_s;         /* STEP (or emulated step cost) per tick */
    double wait_s;         /* waiting for messages per tick: the latency as seen */
    double layer_ratio;    /* see tess_tick_figures */
    double wait_median_s;  /* see tess_tick_figures: the median tick's wait */
    double busy;           /* share of the cores the processes kept busy (CPU
                            time outside waits over wall time x cores) */
    double step_cpu_share; /* STEP's CPU time over its wall time: about 1 for a
                             computing STEP, 0 for an emulated step cost */
} tess_tick_calibration;

typedef struct tess_tick_result {
    /* What ran: the options' algorithm and (d, k, m), or what TESS_TICK_AUTO
     * chose (then `calibration` says from what). */
    tess_tick_alg alg;
    int depth, period, layers;
    tess_tick_calibration calibration; /* zero unless auto */
    tess_tick_figures total;           /* sums over processes; wall = max */
    tess_tick_figures *per_process;    /* workers_total entries, by global worker id */
    int processes;
    tess_buf final_state; /* every tuple at the last tick, packed by the
                                       state class (merge() form), concatenated */
    /* Checkpoints: the tick restored (0: started from NEW), its epoch, the
     * seconds it took (read, verified, loaded), and those taken by this run. */
    int64_t restored_tick;
    uint64_t restored_epoch;
    double restore_seconds;
    int64_t checkpoints;
} tess_tick_result;

/*
 * Run the application for o->ticks ticks on every worker of every rank
 * (control function only).  On success *res holds the figures and the final
 * state; release it with tess_tick_result_free.  Errors: TESS_ERR_INVAL (bad
 * options, PART failed; message via tess_last_error), TESS_ERR_INTERRUPTED,
 * TESS_ERR_KERNEL.
 */
TESS_API int tess_tick_run(tess_ctx *ctx, const tess_tick_app *app, const tess_tick_options *o,
                           tess_tick_result *res);
/* Release what tess_tick_run filled in and zero *res; accepts NULL. */
TESS_API void tess_tick_result_free(tess_tick_result *res);

/* Make app runnable by tess_tick_run: before tess_main(), on every rank, in
 * the same order (the app is found by name; *app must outlive the context). */
TESS_API int tess_tick_register(tess_ctx *ctx, const tess_tick_app *app);

#ifdef __cplusplus
}
#endif

#endif
