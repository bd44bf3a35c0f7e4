/*
 * tick_internal.h — private pieces of the tick face (src/tick/): the run
 * arguments every process receives, the message link with the latency model,
 * the dependency plan of a process and the process loop.
 */
#ifndef TESS_SRC_TICK_INTERNAL_H
#define TESS_SRC_TICK_INTERNAL_H

#include <stdint.h>
#include "tick/latency.h"
#include "core/internal.h"
#include "tessera/tick.h"

typedef struct tick_vclock tick_vclock;
typedef struct tess__tick_ckpt tess__tick_ckpt;

/* ---- registry (run.c) ---- */
typedef struct tess__tick_reg {
    const tess_tick_app **apps;
    int napps;
    tess_tick_result *result; /* rank 0: where process 0 leaves the result */
    uint64_t runs;            /* run ids, so stale messages of a failed run are dropped */
    tick_vclock *vclock;      /* the run's virtual clock (--clock virtual), or NULL */
    tess__tick_ckpt *ckpt;    /* rank 0: the run's checkpoints (ckpt.c), or NULL */
} tess__tick_reg;

/* ---- what every process receives (flat, sent as kernel args) ---- */
typedef struct tick_args {
    int32_t app;
    int32_t alg, depth, period, layers;
    int32_t virtual_clock; /* TESS_TICK_CLOCK_VIRTUAL: vclock.c, not CLOCK_MONOTONIC */
    int64_t ticks, repart_every, progress_every;
    int64_t ckpt_every;   /* 0: no checkpoints; else every N ticks (ckpt.c) */
    int64_t restore_tick; /* 0: start from NEW; else the restored tick */
    uint64_t seed, run_id;
    double step_cost_us;
    double t0_us;              /* common clock origin (CLOCK_MONOTONIC, µs) */
    tess__latency_spec jitter; /* parsed once, by tess__tick_args_from_options */
} tick_args;

/* Microseconds on CLOCK_MONOTONIC. */
double tess__tick_now_us(void);

/* The median of v[0..n) (0 when n is 0), sorting v in place (run.c). */
double tess__tick_median(double *v, int n);

/* ---- messages between processes (link.c) ---- */
enum tick_msg_type {
    TICK_ROUND = 1, /* tuples for a round-start version */
    TICK_BAR,       /* bsp: a process finished a tick */
    TICK_REL,       /* bsp: every process finished it */
    TICK_REPART,    /* every tuple of the sender, for the next PART (a snapshot) */
    TICK_FINAL,     /* figures and final tuples, to process 0 */
    TICK_ABORT,     /* the sender failed */
    TICK_START,     /* set up, to process 0 (start together: no setup skew in timings) */
    TICK_GO,        /* from process 0: every process is set up */
    TICK_MOVE,      /* re-partitioning: the sender's tuples that the receiver now owns */
    TICK_SAVE,      /* to process 0: the sender's part of a checkpoint (tick in the header) */
    TICK_LOAD,      /* from process 0: the restored checkpoint, every part */
    TICK_PART       /* from process 0: the n queries of the next PART (tick in the header) */
};

typedef struct tick_hdr {
    uint64_t run_id;
    int64_t tick;
    double deliver_at; /* µs since t0 */
    int32_t type, src;
    uint32_t epoch, pad;
} tick_hdr;

typedef struct tick_msg {
    tick_hdr h;
    uint64_t arrival;       /* order of arrival, ties of deliver_at keep it */
    size_t len;             /* payload after the header */
    unsigned char *payload; /* points into the allocation */
    void *mem;
} tick_msg;

/* Blocks a link keeps for its next sends.  Each process receives about as
 * many messages as it sends, so a few blocks per neighbour go round. */
#define TICK_LINK_SPARES 16
#define TICK_LINK_SPARE_BYTES 8192 /* larger blocks are malloc's (link.c, take_block) */

typedef struct tick_link {
    tess_ctx *ctx;
    int me, n;
    uint64_t run_id;
    double t0_us;
    tess__latency *model; /* NULL: no delay */
    tick_msg *held;       /* received, sorted by (deliver_at, arrival) */
    int nheld, capheld;
    uint64_t arrivals;
    uint64_t messages, bytes;
    double wait_us;
    double spin_us;                     /* poll this long before blocking (0: never) */
    tick_vclock *vc;                    /* --clock virtual: the shared clock, else NULL */
    double vnow;                        /* --clock virtual: this process's clock, µs */
    void *spare[TICK_LINK_SPARES];      /* message blocks to send in: no malloc per message */
    size_t spare_cap[TICK_LINK_SPARES]; /* their capacities: no look into a cold block */
    int nspare;
} tick_link;

int tess__tick_link_open(tick_link *l, tess_ctx *ctx, int me, const tick_args *a);
void tess__tick_link_close(tick_link *l);
/* Send a message; delayed by the model unless it is control (FINAL, ABORT, START, GO). */
int tess__tick_link_send(tick_link *l, int dst, int type, uint32_t epoch, int64_t tick,
                         const void *payload, size_t len);
/* Next due message (1, *out filled; give out->mem back with
 * tess__tick_link_release, or free it), or 0 if none is due. */
int tess__tick_link_poll(tick_link *l, tick_msg *out);
/* A received message's block, done with: kept for a later send. */
void tess__tick_link_release(tick_link *l, void *mem);
/* Block until a message may be due or max_wait_us passed; counts wait time. */
int tess__tick_link_wait(tick_link *l, double max_wait_us);
/* µs since the run's origin: real, or the process's virtual clock. */
double tess__tick_link_now(const tick_link *l);
/* Modelled compute until `at_us`: sleeps (real clock) or moves the virtual clock. */
void tess__tick_link_compute_until(tick_link *l, double at_us);

/* ---- the virtual clock (vclock.c) ---- */
/* Every message takes at least this long in virtual time, so processes tied
 * at one time cannot see each other's messages of that time: the
 * simulation is deterministic. */
#define TICK_VCLOCK_MIN_LATENCY_US 1.0
tick_vclock *tess__tick_vclock_new(int n);
void tess__tick_vclock_free(tick_vclock *vc);
/* Process me computed until t; returns when every message due by t is in. */
void tess__tick_vclock_advance(tick_vclock *vc, int me, double t);
/* Process me, at `now`, waits for a message or `until`; returns the time it wakes. */
double tess__tick_vclock_wait(tick_vclock *vc, int me, double now, double until);
/* A message to dst, due at deliver_at, is in dst's mailbox. */
void tess__tick_vclock_sent(tick_vclock *vc, int dst, double deliver_at);
/* Process me sends nothing more in this run. */
void tess__tick_vclock_leave(tick_vclock *vc, int me);

/* ---- checkpoints, rank 0 (ckpt.c) ---- */
/* With o->checkpoint_dir: open and claim the store, and with o->restore read
 * the newest valid epoch of this job (none: a line "starting afresh").
 * *out NULL without a directory.  TESS_ERR_* with one line in ctx. */
int tess__tick_ckpt_open(tess_ctx *ctx, const tess_tick_app *app, const tess_tick_options *o,
                         tess__tick_ckpt **out);
void tess__tick_ckpt_close(tess__tick_ckpt *c); /* accepts NULL */
/* The restored tick (0: none) and its parts, one per process that saved it. */
int64_t tess__tick_ckpt_restored_tick(const tess__tick_ckpt *c);
const tess_buf *tess__tick_ckpt_loaded(const tess__tick_ckpt *c, int *n_out);
/* Process 0: part `part` of the checkpoint of `tick`; the epoch is written
 * once every part is in. */
int tess__tick_ckpt_add_part(tess_ctx *ctx, tess__tick_ckpt *c, int64_t tick, int part,
                             const void *data, size_t len);
/* The restore and checkpoint figures into res. */
void tess__tick_ckpt_report(const tess__tick_ckpt *c, tess_tick_result *res);

/* ---- options (options.c) ---- */
/* Check o and fill a; TESS_ERR_INVAL with ctx's last error naming the field. */
int tess__tick_args_from_options(tess_ctx *ctx, const tess_tick_options *o, tick_args *a);

/* ---- replica widths (width.c) ---- */
typedef struct tick_widths {
    int W, k;            /* width at a complete round (m+1); period */
    int64_t epoch_start; /* rounds start at epoch_start + i*k */
    int64_t base;        /* newest round with width W, or -1 */
} tick_widths;

/* The width a version needs to be full: k - s, s in 1..k its place in its round. */
int tess__tick_width_std(const tick_widths *t, int64_t v);
/* The first round start at or after v. */
int64_t tess__tick_width_round_at_or_after(const tick_widths *t, int64_t v);
/* The next piece of replication toward making version `goal` full: the
 * lowest v in (base, goal] whose width (width_of) is below what goal needs.
 * 1 with *v_out and *width_out (raise v to that width); 0 when nothing is
 * missing or goal is out of reach of the base. */
int tess__tick_width_next(const tick_widths *t, int64_t goal, int (*width_of)(void *, int64_t),
                          void *arg, int64_t *v_out, int *width_out);

/* ---- --alg auto (auto.c) ---- */
#define TICK_AUTO_CALIBRATION 20 /* ticks of local synchronisation measured first */
/* (d, k, m) and the algorithm for a run, from a calibration; k divides
 * repart_every (when > 0). */
void tess__tick_auto_choose(const tess_tick_calibration *c, int64_t repart_every,
                            tess_tick_alg *alg, int *depth, int *period, int *layers);

/* ---- the checking mode (check.c; tick.h, docs/ticks.md) ---- */
/* 1 when TESS_TICK_CHECK=1 is in the environment: a state class reads it
 * once, at create, and costs nothing without it. */
int tess__tick_check_on(void);
/* A state class whose STEP returns TESS_ERR_MISUSE (a read of a tuple the
 * version does not hold) says what was read; process.c appends it to the
 * error.  Per thread; taking it clears it. */
void tess__tick_check_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *tess__tick_check_take_note(void);
/* Checking mode, particles class: slot now holds every particle of region r
 * (what the runtime knows of received data: a round's L_{m+1}(Q_i), a new
 * partition's own query; the class records what it computes itself).  The
 * class checks each STEP's neighbourhood against what was recorded. */
void tess__particles_held(void *st, int slot, const tess_region *r);

/* ---- a process (process.c) ---- */
int tess__tick_process_run(tess_ctx *ctx, const tess_tick_app *app, const tick_args *a, int me,
                           tess_tick_result *result);

/* Free the registered tick applications (src/runtime.c, at tess_finalize). */
void tess__tick_free(tess_ctx *ctx);

#endif
