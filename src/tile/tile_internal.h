/*
 * tile_internal.h — private pieces of the tiles face (src/tile/): the
 * registry, what every rank's controller receives, processor and policy
 * specs, processor threads, the storage layer and the controller.
 *
 * One controller per rank runs on the rank's first worker (a kernel
 * instance launched on every worker; the others return at once).  It owns
 * the rank's work (a plan of segments, plan.h) and hands tiles to processor
 * threads it starts for the run.  Controllers talk through the worker
 * mailboxes of the message layer (global worker worker_base[rank]);
 * processor threads report finished tiles to their controller the same way,
 * so the controller waits on one queue.
 */
#ifndef TESS_SRC_TILE_INTERNAL_H
#define TESS_SRC_TILE_INTERNAL_H

#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include "core/internal.h"
#include "tessera/tile.h"
#include "tile/plan.h"

#define TILE_MAX_PROCS 64

typedef struct tess__tile_reg {
    const tess_tile_job **jobs;
    int njobs;
    /* per job: the output rank's image of the whole output in its
     * node-shared segment, when this rank can write it (run.c), else NULL */
    uint8_t **shared_out;
    tess_tile_stats *result; /* rank 0: where the run's statistics go */
    uint32_t runs;           /* run ids: messages of an earlier run are dropped */
} tess__tile_reg;

void tess__tile_free(tess_ctx *ctx); /* at tess_finalize */

/* ---- processors and policies (spec.c) ---- */
typedef struct tess__tile_proc_spec {
    tess_tile_kind kind;
    double frac;    /* speed fraction (cpu@F), 1 = full speed */
    double after_s; /* the slowdown starts this long after the run started */
    int device;     /* opencl:N */
    char text[32];
} tess__tile_proc_spec;

typedef enum { TILE_APC = 0, TILE_DD, TILE_STATIC, TILE_WS } tess__tile_policy_kind;
typedef struct tess__tile_policy {
    tess__tile_policy_kind kind;
    uint64_t cells;                  /* fixed tile size (not apc) */
    int64_t box[TESS_TILE_MAX_DIMS]; /* AxB...: extents, 0 when a cell count */
    int nbox;
} tess__tile_policy;

/* n processors of "cpu*2+cpu@0.25+opencl"; 0: (NULL) one cpu per core.
 * TESS_ERR_INVAL with the error set on ctx. */
int tess__tile_parse_processors(tess_ctx *ctx, const char *spec, tess__tile_proc_spec *out, int *n);
int tess__tile_parse_policy(tess_ctx *ctx, const char *spec, int ndims, tess__tile_policy *out);
/* Set up the area of a job under a policy (a box policy sets the column
 * extents).  TESS_ERR_INVAL with the error set. */
int tess__tile_job_area(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_policy *pol,
                        tess__tile_area *area);

/* ---- what every controller receives (flat, sent as kernel args) ---- */
typedef struct tess__tile_args {
    int32_t job;
    uint32_t run_id;
    char processors[160];
    char policy[64];
    double queue_s, boot_s, t0;
    uint64_t chunk, seed;
    int32_t progress, pad;
} tess__tile_args;

/* ---- messages between controllers and from processors ---- */
enum tess__tile_msg_type {
    TILE_HELLO = 1,    /* slab rows, processor count */
    TILE_DONE,         /* processor -> its controller: a tile finished */
    TILE_STEAL,        /* thief -> victim: its aggregate rate */
    TILE_GIVE,         /* victim -> thief: segments (maybe none) */
    TILE_FETCH,        /* rank -> owner: send the input of rows of a column */
    TILE_DATA,         /* owner -> rank: that input */
    TILE_OUTPUT,       /* rank -> output rank: a tile's output */
    TILE_STATUS,       /* rank -> all: work received, completed, rate */
    TILE_BOOT,         /* rank -> all: its largest bootstrap size */
    TILE_FINISH,       /* output rank -> all: every output is gathered */
    TILE_STATS,        /* rank -> rank 0: its statistics */
    TILE_ABORT,        /* any -> all: the run failed (message follows) */
    TILE_OUTPUT_SHARED /* rank -> output rank: a tile's output is in your shared image */
};

typedef struct tess__tile_hdr {
    uint32_t run_id, type;
    int32_t src, pad;
} tess__tile_hdr;

/* A segment as sent in messages. */
typedef struct tess__tile_wire_seg {
    int64_t column, r0, r1;
    int32_t owner, pad;
} tess__tile_wire_seg;

/* ---- a tile handed to a processor ---- */
typedef struct tess__tile_chunk tess__tile_chunk; /* staged input (store.c) */
typedef struct tess__tile_item {
    tess__tile_box box;
    uint64_t cells;
    double est;              /* the plan's estimate, given back when done */
    const void *in;          /* input, or NULL: the processor gathers or reads it */
    tess__tile_chunk *chunk; /* holds `in` while the tile runs */
    int64_t column;
} tess__tile_item;

/* ---- processors (proc.c) ---- */
typedef struct tess__tile_ctl tess__tile_ctl;
typedef struct tess__tile_processor {
    tess__tile_ctl *ctl;
    int index;
    tess__tile_proc_spec spec;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tess__tile_item *queue; /* ring of capacity qcap */
    int qhead, qlen, qcap;
    int stop;
    /* the tile running now (under mu): when it started (tess_now) and its
     * estimate; run_since 0 while none runs */
    double run_since, run_est;
    int pin_cpu;            /* the CPU its thread is bound to, or -1 */
    void *in_buf, *out_buf; /* scratch, grown as needed */
    size_t in_cap, out_cap;
    void *device; /* OpenCL device state, or NULL */
    /* statistics (written by the thread, read after it stopped) */
    double busy, idle;
    uint64_t tiles, cells;
} tess__tile_processor;

/* Done message from a processor thread. */
typedef struct tess__tile_done {
    int32_t proc, status;
    uint64_t cells;
    double est, seconds, started; /* started: seconds since t0 */
    tess__tile_chunk *chunk;
    void *out; /* output handed to the controller (write() sink), or NULL */
    tess__tile_box box;
} tess__tile_done;

/* Start processor `index` (its thread bound to CPU pin_cpu unless -1). */
int tess__tile_proc_start(tess__tile_processor *p, tess__tile_ctl *c, int index,
                          const tess__tile_proc_spec *spec, int pin_cpu);
/* Seconds the processor's running tile has run, at most its estimate; 0
 * when it runs none. */
double tess__tile_proc_running(tess__tile_processor *p);
/* Queue a tile (copied).  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_proc_push(tess__tile_processor *p, const tess__tile_item *it);
/* Take back up to max tiles the processor has not started (into out);
 * returns how many. */
int tess__tile_proc_recall(tess__tile_processor *p, tess__tile_item *out, int max);
void tess__tile_proc_stop(tess__tile_processor *p);

/* ---- storage layer (store.c) ---- */
struct tess__tile_chunk {
    int64_t column, r0, r1; /* the rows it holds */
    uint8_t *data;          /* row-major over the column box restricted to [r0, r1) */
    uint64_t cells_left;    /* freed when every cell was processed */
};
/* Is the whole of a column's rows contiguous in the area's row-major order? */
int tess__tile_area_contiguous(const tess__tile_area *a);
/* Copy a box's cells between the area-row-major slab starting at row base
 * (every cell of its rows) and a buffer row-major within the box. */
void tess__tile_copy_box(const tess__tile_area *a, const tess__tile_box *box, size_t cell_bytes,
                         uint8_t *slab, int64_t base, uint8_t *buf, int to_buf);

/* An output held for write() until the slabs were checked. */
typedef struct tess__tile_held {
    tess__tile_box box;
    void *out;
} tess__tile_held;

/* ---- the controller (control.c) ---- */
struct tess__tile_ctl {
    tess_ctx *ctx;
    const tess_tile_job *job;
    tess__tile_args args;
    tess__tile_policy policy;
    tess__tile_area area;
    int me, nranks, my_worker;
    pthread_t thread; /* the controller's */
    double t0;
    tess__tile_processor procs[TILE_MAX_PROCS];
    int nprocs;
    tess__tile_plan plan;
    /* static and ws policies: a list of fixed tiles per processor */
    tess__tile_segment **lists;
    int *list_len, *list_head;
    tess__tile_proc_spec specs[TILE_MAX_PROCS];
    /* slab ownership of every rank (rows [lo, hi) of dimension 0) */
    int64_t *slab_lo, *slab_hi;
    int hellos;
    int slabs_checked;            /* every slab known and checked: write() may run */
    struct tess__tile_held *held; /* outputs for write() until then */
    int nheld, cap_held;
    /* storage layer: stolen segments waiting for their data */
    tess__tile_segment *pending;
    int npending, cap_pending;
    uint64_t fetch_bytes_out; /* requested and not yet arrived */
    /* stealing */
    uint8_t *peer_empty;
    uint64_t *peer_left;  /* per rank: cells not finished, from its last status */
    double *peer_rate;    /* per rank: its aggregate rate, cells/s */
    int steal_out;        /* a request is out */
    double steal_sent_at; /* when it left */
    int steal_timing;     /* its work is not ready yet (reply or first chunk to come) */
    double steal_rtt;     /* request to work ready, a moving average (0: none yet) */
    int boots;
    uint64_t boot_agreed;
    int booted;
    /* completion */
    uint64_t total_cells, gathered, received, completed;
    int finished;
    int finish_sent;  /* the output rank announced the end */
    double finish_at; /* when the output rank had every output */
    int stats_in;
    double last_status, last_progress;
    uint64_t rng;
    /* statistics */
    tess_tile_rank_stats rs;
    double busy_after_boot[TILE_MAX_PROCS];
    uint64_t tried[TILE_MAX_PROCS][16];
    int ntried[TILE_MAX_PROCS];
    int status;
    FILE *trace; /* TESS_TILE_TRACE: one line per finished tile, or NULL */
};

/* The controller of one rank; returns TESS_OK or the run's error. */
int tess__tile_control_run(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_args *a);
double tess__tile_now(const tess__tile_ctl *c); /* seconds since the run started */
/* Send a message to rank dst's controller. */
int tess__tile_send(tess__tile_ctl *c, int dst, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen);
void tess__tile_abort_all(tess__tile_ctl *c, int status, const char *msg);

/* storage layer, controller side (store.c) */
void tess__tile_store_on_fetch(tess__tile_ctl *c, int src, const tess__tile_wire_seg *s);
void tess__tile_store_on_data(tess__tile_ctl *c, const tess__tile_wire_seg *s, const uint8_t *data,
                              size_t len);
void tess__tile_store_request(tess__tile_ctl *c);
int tess__tile_store_add_pending(tess__tile_ctl *c, const tess__tile_segment *s);
void tess__tile_store_on_output(tess__tile_ctl *c, const tess__tile_box *box, const uint8_t *data,
                                size_t len);
/* The same for a tile whose output a rank of this node wrote into the
 * shared image (TILE_OUTPUT_SHARED). */
void tess__tile_store_on_shared_output(tess__tile_ctl *c, const tess__tile_box *box);
/* The output rank's shared image of the run's job's output, or NULL. */
uint8_t *tess__tile_shared_output(const tess__tile_ctl *c);
/* Where box's output lies in `whole` (the whole area's output, row-major)
 * when the area's tiles are contiguous there; NULL otherwise or for NULL. */
uint8_t *tess__tile_output_place(const tess__tile_ctl *c, const tess__tile_box *box, void *whole);
/* Input of an item cut from segment s (NULL when the processor must gather
 * or read it) and its chunk. */
void tess__tile_store_item_input(tess__tile_ctl *c, const tess__tile_segment *s,
                                 tess__tile_item *it);
/* A processor finished: handle its output (write() sink) and release chunk. */
int tess__tile_store_done(tess__tile_ctl *c, tess__tile_done *d);
/* On the output rank: every output is in and every slab was checked, so
 * tell all ranks the run ended (once). */
void tess__tile_store_finish_if_done(tess__tile_ctl *c);
/* Every slab checked: hand the held outputs to write(), in order; later
 * ones go straight to it.  TESS_OK or write()'s error. */
int tess__tile_store_slabs_checked(tess__tile_ctl *c);
/* Drop held outputs (a failed run) and their list. */
void tess__tile_store_free_held(tess__tile_ctl *c);

/* stealing (steal.c) */
void tess__tile_steal_maybe(tess__tile_ctl *c);
void tess__tile_steal_on_request(tess__tile_ctl *c, int src, double rate, double queued_s);
void tess__tile_steal_on_give(tess__tile_ctl *c, int src, const tess__tile_wire_seg *segs, int n);
double tess__tile_rank_rate(const tess__tile_ctl *c);
/* The stolen work is ready (its reply came, or its first chunk of input):
 * one sample of how long a steal takes. */
void tess__tile_steal_timed(tess__tile_ctl *c);

/* per-policy work handling (policy.c) */
int tess__tile_policy_setup(tess__tile_ctl *c);
void tess__tile_policy_dispatch(tess__tile_ctl *c);
/* Tell the plan how long each processor's running tile has run (running_s). */
void tess__tile_policy_note_running(tess__tile_ctl *c);
void tess__tile_policy_done(tess__tile_ctl *c, const tess__tile_done *d);
/* Remove up to `cells` cells of work that has not moved yet (local data or
 * not fetched), for a thief; returns the segments in out (malloc'd). */
int tess__tile_policy_give(tess__tile_ctl *c, uint64_t cells, tess__tile_segment **out, int *n);
uint64_t tess__tile_policy_left(const tess__tile_ctl *c); /* cells not handed to a processor */
/* Work whose input is here (local, read, or a fetched chunk). */
int tess__tile_policy_add_work(tess__tile_ctl *c, const tess__tile_segment *s);

/* statistics (stats.c) */
void tess__tile_stats_send(tess__tile_ctl *c);
void tess__tile_stats_on_message(tess__tile_ctl *c, int src, const uint8_t *p, size_t len);
void tess__tile_stats_begin(tess_tile_stats *s, int nranks, const char *policy);
void tess__tile_stats_finish(tess_tile_stats *s);

#endif
