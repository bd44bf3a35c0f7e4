/*
 * tile_internal.h — what the modules of the tiles face (src/tile/) share:
 * the registry, processor and policy specs, what every rank's controller
 * receives, the messages between controllers, and a tile as a processor
 * gets and reports it.
 *
 * One controller per rank runs on the rank's first worker (a kernel
 * instance launched on every worker; the others return at once).  It owns
 * the rank's work and hands tiles to processor threads it starts for the
 * run.  The controller is made of modules, each with its own state and
 * header, each using only those below it:
 *
 *   link.c     the run's facts, its status and its messages (link.h)
 *   store.c    the storage layer: slabs, fetched input, gathered output
 *   proc.c     processor threads
 *   policy.c   how the rank's work is handed to its processors (plan.h)
 *   steal.c    work stealing between ranks
 *   stats.c    the run's statistics
 *   control.c  the controller: builds the others and runs the loop
 *
 * Controllers talk through the worker mailboxes of the message layer
 * (global worker worker_base[rank]); processor threads report finished
 * tiles to their controller the same way, so the controller waits on one
 * queue.  Each module registers the handlers of its own message types with
 * its link (tess__tile_link_route); the controller's thread alone runs them.
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
    tess_tile_stats *result;      /* rank 0: where the run's statistics go, one per stage */
    uint32_t runs;                /* run ids: messages of an earlier run are dropped */
    struct tess__tile_pipe *pipe; /* the pipeline running (pipe.c), else NULL */
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

/* TILE_CAPC: the centralised APC, rank 0's controller hands every rank's
 * processors their tiles (policy_central.c) */
typedef enum { TILE_APC = 0, TILE_DD, TILE_STATIC, TILE_WS, TILE_CAPC } tess__tile_policy_kind;
typedef struct tess__tile_policy_spec {
    tess__tile_policy_kind kind;
    uint64_t cells;                  /* fixed tile size (not apc) */
    int64_t box[TESS_TILE_MAX_DIMS]; /* AxB...: extents, 0 when a cell count */
    int nbox;
} tess__tile_policy_spec;

/* n processors of "cpu*2+cpu@0.25+opencl"; 0: (NULL) one cpu per core.
 * TESS_ERR_INVAL with the error set on ctx. */
int tess__tile_parse_processors(tess_ctx *ctx, const char *spec, tess__tile_proc_spec *out, int *n);
int tess__tile_parse_policy(tess_ctx *ctx, const char *spec, int ndims,
                            tess__tile_policy_spec *out);
/* Move a fixed policy's tile size inside the job's smallest and largest
 * tile (each extent of a box, or a cell count); 1 when it moved.  Call
 * before tess__tile_job_area. */
int tess__tile_policy_fit(const tess_tile_job *job, tess__tile_policy_spec *pol);
/* Set up the area of a job under a policy (a box policy sets the tile
 * extents).  TESS_ERR_INVAL with the error set. */
int tess__tile_job_area(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_policy_spec *pol,
                        tess__tile_area *area);

/* ---- what every controller receives (flat, sent as kernel args) ---- */
typedef struct tess__tile_args {
    int32_t job;
    uint32_t run_id;
    char processors[160];
    char policy[64];
    double queue_s, boot_s, t0;
    uint64_t chunk, seed;
    int32_t progress;
    /* a pipeline's stage (pipe.c): its controller runs on the rank's
     * worker `stage` and talks to the same worker of other ranks; 0 and 1
     * for a plain run */
    int32_t stage, nstages, pad;
} tess__tile_args;

/* ---- messages between controllers and from processors ---- */
enum tess__tile_msg_type {
    TILE_HELLO = 1,    /* slab rows, processor count */
    TILE_DONE,         /* processor -> its controller: a tile finished */
    TILE_STEAL,        /* thief -> victim: its aggregate rate */
    TILE_GIVE,         /* victim -> thief: segments (maybe none) */
    TILE_FETCH,        /* rank -> owner: send the input of a box */
    TILE_DATA,         /* owner -> rank: that input */
    TILE_OUTPUT,       /* rank -> output rank: a tile's output */
    TILE_STATUS,       /* rank -> all: work received, completed, rate */
    TILE_BOOT,         /* rank -> all: its largest bootstrap size */
    TILE_FINISH,       /* output rank -> all: every output is gathered */
    TILE_STATS,        /* rank -> rank 0: its statistics */
    TILE_ABORT,        /* any -> all: the run failed (message follows) */
    TILE_OUTPUT_SHARED /* rank -> output rank: a tile's output is in your shared image */
};
/* capc: rank 0 <-> ranks, a tile handed out or a processor's report
 * (policy_central.c) */
enum { TILE_CENTRAL = TILE_OUTPUT_SHARED + 1 };

typedef struct tess__tile_hdr {
    uint32_t run_id, type;
    int32_t src, pad;
} tess__tile_hdr;

/* A segment as sent in messages (its box and owner). */
typedef struct tess__tile_wire_seg {
    int64_t lo[TESS_TILE_MAX_DIMS], hi[TESS_TILE_MAX_DIMS];
    int32_t ndims, owner;
} tess__tile_wire_seg;

static inline tess__tile_wire_seg tess__tile_wire(const tess__tile_segment *s)
{
    tess__tile_wire_seg w = {.ndims = s->box.ndims, .owner = s->owner};
    for (int d = 0; d < TESS_TILE_MAX_DIMS; d++) w.lo[d] = s->box.lo[d], w.hi[d] = s->box.hi[d];
    return w;
}

/* The box of a segment received (ndims checked against the area's). */
static inline tess__tile_box tess__tile_wire_box(const tess__tile_wire_seg *w, int ndims)
{
    tess__tile_box b = {.ndims = ndims};
    for (int d = 0; d < ndims; d++) b.lo[d] = w->lo[d], b.hi[d] = w->hi[d];
    return b;
}

/* ---- a tile handed to a processor ---- */
typedef struct tess__tile_chunk tess__tile_chunk;
typedef struct tess__tile_item {
    tess__tile_box box;
    uint64_t cells;
    double est;              /* the plan's estimate, given back when done */
    const void *in;          /* input, or NULL: the processor gathers or reads it */
    tess__tile_chunk *chunk; /* holds `in` while the tile runs */
} tess__tile_item;

/* Input fetched from another rank (store.c); the tiles cut from it hold it. */
struct tess__tile_chunk {
    tess__tile_box box;  /* the cells it holds */
    uint8_t *data;       /* row-major over box */
    uint64_t cells_left; /* freed when every cell was processed */
};

/* A processor's report to its controller (TILE_DONE): a tile finished. */
typedef struct tess__tile_done {
    int32_t proc, status;
    int32_t warm; /* 1: not a tile but the processor's start-up, done (proc.c) */
    uint64_t cells;
    double est, seconds, started; /* started: seconds since t0 */
    /* input_s: the part of `seconds` spent getting the input (read(), a
     * copy from the slab); deliver_s: after `seconds`, putting the output
     * in place on the output rank (out_here 1) or sending it there (the
     * statistics' INIT, OUT and TCP) */
    double input_s, deliver_s;
    int32_t out_here, pad;
    tess__tile_chunk *chunk;
    void *out; /* output handed to the controller (write() sink), or NULL */
    tess__tile_box box;
} tess__tile_done;

/* statistics of a run, on rank 0 (stats.c, called by run.c) */
void tess__tile_stats_begin(tess_tile_stats *s, int nranks, const char *policy);
void tess__tile_stats_finish(tess_tile_stats *s);
/* The controller of one rank (control.c); returns TESS_OK or the run's error. */
int tess__tile_control_run(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_args *a);

/* ---- shared by run.c and pipe.c ---- */
#define TESS__TILE_KERNEL "tess.tile"
/* The registered index of job, or -1. */
int tess__tile_find_job(tess_ctx *ctx, const tess_tile_job *job);
/* The flat arguments of a run from its options. */
int tess__tile_args_from_options(tess_ctx *ctx, const tess_tile_options *o, tess__tile_args *a);
/* The job a stage's controller runs (pipe.c: a copy with its streams
 * attached), and what happens when it ended; a plain run has no pipe. */
const tess_tile_job *tess__tile_pipe_job(tess_ctx *ctx, const tess__tile_args *a);
void tess__tile_pipe_stage_ended(tess_ctx *ctx, const tess__tile_args *a, int rc);
/* A stage failed (its link's abort): wake and fail every stream, so no
 * stage waits for one that stopped. */
void tess__tile_pipe_fail(tess_ctx *ctx, int status);

#endif
