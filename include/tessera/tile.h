/*
 * tile.h — the tiles face: a data-parallel kernel over an n-dimensional work
 * area, cut into tiles whose sizes and placement the runtime tunes by itself
 * across heterogeneous processors (the APC+ design; docs/tiles.md).
 *
 * A job is a box of cells (1 to 4 dimensions, row-major: the last dimension
 * varies fastest) with a minimum and maximum tile extent per dimension.  A
 * kernel maps the input bytes of a tile (in_bytes per cell, row-major within
 * the tile's box) to its output bytes (out_bytes per cell, the same order).
 * Its output must not depend on how the area was tiled: then the job's
 * output is identical for every policy, processor mix and rank count.
 *
 * Lifecycle (SPMD, as the rest of tessera):
 *   tess_init() -> tess_tile_register(job) on every rank -> tess_main(control)
 *   -> control calls tess_tile_run() on rank 0 -> tess_finalize().
 * Workers (tess_config.workers): the first worker of each rank becomes its
 * controller for the run and the processors are threads of their own, so
 * the other workers sit idle while tess_tile_run runs.  Any count works;
 * cfg.workers = 1 spares the idle threads in a program that runs only
 * tiles jobs (one that also runs table kernels keeps its workers).
 * Each rank's controller drives only its own processors (--processors);
 * ranks steal work from each other, and the storage layer moves a stolen
 * tile's input from the rank that owns it to the rank that processes it.
 * (Policy "capc" is the centralised APC instead: rank 0's controller
 * drives every rank's processors.)
 */
#ifndef TESSERA_TILE_H
#define TESSERA_TILE_H

#include <stddef.h>
#include <stdint.h>
#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESS_TILE_MAX_DIMS 4

/* A box of cells: lo[d] <= cell < hi[d] in each of ndims dimensions. */
typedef struct tess_tile_box {
    int ndims;
    int64_t lo[TESS_TILE_MAX_DIMS], hi[TESS_TILE_MAX_DIMS];
} tess_tile_box;

/* Kinds of processor a kernel is written for. */
typedef enum tess_tile_kind {
    TESS_TILE_CPU = 0,    /* a worker thread */
    TESS_TILE_OPENCL = 1, /* an OpenCL device (tessera/tile_opencl.h) */
    TESS_TILE_CUDA = 2,   /* a CUDA device (builds with nvcc only) */
    TESS_TILE_KINDS = 3
} tess_tile_kind;

/*
 * A kernel: compute the output of `box` from its input.  `in` holds
 * in_bytes per cell of the box (NULL when in_bytes is 0), `out` has room for
 * out_bytes per cell; both row-major within the box.  `device` is NULL for
 * a CPU kernel and a `tess_tile_opencl *` for an OpenCL one.  Called on a
 * processor's own thread, concurrently with the other processors.  Returns
 * TESS_OK, or a negative status after tess_set_error() said why; the job
 * then ends with that error on every rank.
 */
typedef int (*tess_tile_kernel_fn)(const tess_tile_box *box, const void *in, void *out,
                                   void *device, void *arg);
/* Input reader: fill `buf` with the input of `box` (in_bytes per cell).
 * Called on the processor's own thread just before its kernel, on the rank
 * that processes the tile, concurrently with the other processors: a
 * reader that reads the box from a file (a streamed source) overlaps
 * reading with their work and holds no more than the tiles in flight
 * (docs/tiles.md, "Streamed input and output").  Returns as a kernel. */
typedef int (*tess_tile_read_fn)(const tess_tile_box *box, void *buf, void *arg);
/* Output writer, called on the output rank for every tile as its output
 * arrives, from the controller's thread (one call at a time) while the
 * processors go on: a writer that puts the box at its place in a file is
 * a streamed sink.  Returns TESS_OK, or a negative status after
 * tess_set_error(), which ends the run. */
typedef int (*tess_tile_write_fn)(const tess_tile_box *box, const void *out, void *arg);

typedef struct tess_tile_job {
    const char *name; /* unique per context */
    int ndims;
    int64_t extent[TESS_TILE_MAX_DIMS];
    int64_t min_tile[TESS_TILE_MAX_DIMS], max_tile[TESS_TILE_MAX_DIMS];
    size_t in_bytes, out_bytes;                  /* per cell; out_bytes >= 1 */
    tess_tile_kernel_fn kernel[TESS_TILE_KINDS]; /* NULL: this kind cannot run the job */
    void *arg;                                   /* handed to kernels, read and write */
    /*
     * Input.  Either an in-memory slab owned by this rank, `input` holding
     * rows [input_lo, input_hi) of the first dimension (every cell of those
     * rows, row-major): the ranks' slabs must not overlap and must cover the
     * area together, and a rank may own none (input_lo == input_hi).  Or
     * `read`, which any rank can call for any box.  Neither: in_bytes is 0.
     */
    const void *input;
    int64_t input_lo, input_hi;
    tess_tile_read_fn read;
    /* Output, on rank output_rank: the whole area's output row-major in
     * `output`, or each tile handed to `write` (neither: it is dropped).
     * Other ranks leave both NULL.  Ranks start before the slabs are
     * checked against each other: `write` sees each cell once, and none
     * before the check passed; after a failed run `output` may hold part
     * of the results. */
    void *output;
    tess_tile_write_fn write;
    int output_rank;
    /* Handed to `write` instead of `arg` when not NULL (a writer with state
     * of its own, such as a checkpoint journal). */
    void *write_arg;
    /* Handed to `read` instead of `arg` when not NULL (a pipeline's stream:
     * tessera/tile_pipe.h). */
    void *read_arg;
    /* Cells whose output is already in place (a restored checkpoint:
     * docs/checkpoints.md, "Tiles"): one bit per cell of the area in
     * row-major order (cell i is bit i % 8 of byte i / 8), the same on every
     * rank; NULL: none.  Boxes whose cells are all marked (found by
     * halving the area, never below the minimum tile extent but in the
     * first dimension) are not computed, and `write` does not see them;
     * `output` must hold them already.  Marked cells in a box that could
     * not be halved further are computed again (a kernel's output does not
     * depend on the tiling). */
    const uint8_t *done;
} tess_tile_job;

/* Register a job: before tess_main(), identically on every rank (the name
 * and area must agree; the input slab is each rank's own). */
TESS_API int tess_tile_register(tess_ctx *ctx, const tess_tile_job *job);

typedef struct tess_tile_options {
    /* Processors of every rank (docs/tiles.md): "cpu*N" N worker threads,
     * "cpu@F" a worker slowed to the fraction F of its speed, "cpu@F/S" one
     * that slows to F after S seconds, "opencl[:N]" OpenCL device N,
     * "cuda[:N]"; joined with '+'.  NULL: one CPU worker per core. */
    const char *processors;
    /* "apc" (NULL), "capc" (the centralised APC: rank 0's controller hands
     * every rank's processors their tiles, no stealing; docs/tiles.md),
     * "dd:SIZE", "static:SIZE", "ws:SIZE"; SIZE a cell count
     * or a box AxB[xC[xD]], moved within the job's min_tile and max_tile
     * when outside them (tess_config.verbose logs it). */
    const char *policy;
    double queue_ms;    /* T: most queued work per processor; 0: 100 */
    double boot_ms;     /* a bootstrap tile taking this long ends it; 0: 10 */
    size_t chunk_bytes; /* storage layer transfer unit; 0: 1 MiB */
    int progress;       /* 1: a progress line on stderr about once a second */
    uint64_t seed;      /* victim choice when stealing */
} tess_tile_options;

/* Check processors and policy for `job` without running it: TESS_OK or
 * TESS_ERR_INVAL with tess_last_error() naming what is wrong (any thread
 * of rank 0 before or during tess_main). */
TESS_API int tess_tile_options_check(tess_ctx *ctx, const tess_tile_job *job,
                                     const tess_tile_options *opt);

typedef struct tess_tile_proc_stats {
    int rank;
    char spec[32];       /* "cpu", "cpu@0.25", "opencl:0" */
    tess_tile_kind kind; /* what ran the kernel */
    uint64_t tiles, cells;
    uint64_t tried[16]; /* bootstrap tile sizes in cells, in order */
    int ntried;
    uint64_t settled;  /* the size with the best measured rate */
    double rate;       /* its rate, cells per second */
    double busy, idle; /* seconds processing tiles / waiting for one */
    /* after the bootstrap: seconds in the kernel (busy less the input),
     * getting tiles' input (read(), copies from the slab), putting their
     * output in place on the output rank, sending it there */
    double busy_after_boot, init, out, tcp;
} tess_tile_proc_stats;

typedef struct tess_tile_rank_stats {
    uint64_t cells;                 /* processed on this rank */
    uint64_t stolen_in, stolen_out; /* cells of work received / given by stealing */
    uint64_t steals_in, steals_out; /* successful steals as thief / victim */
    uint64_t bytes_in, bytes_out;   /* input moved by the storage layer */
    uint64_t output_bytes_shared;   /* output rank: outputs that ranks of its node wrote into
                                       its node-shared image instead of sending them */
    double boot_seconds;            /* when its bootstrap ended */
    double est_end;                 /* last global estimated end time it computed */
    /* its controller's seconds after the bootstrap: checking slabs (init),
     * write() and gathering outputs (out), moving input for others (tcp) */
    double init_seconds, out_seconds, tcp_seconds;
} tess_tile_rank_stats;

typedef struct tess_tile_stats {
    /* Wall time from the start of the run to the last output gathered, and
     * its split as the APC+ paper's charts split it: BOOT (until every
     * processor's bootstrap ended), PROC (the least time a processor spent
     * in the kernel after that), L-IMB (the most minus the least), INIT
     * (reading input: read(), copies from slabs, checking them), TCP
     * (transfers: input fetched for other ranks, outputs sent to the output
     * rank), OUT (writing output: write(), gathering outputs on the output
     * rank) and OVER (the rest: the runtime and waiting).  INIT, TCP and
     * OUT are each the most seconds one thread (a processor or a
     * controller) spent on it after the bootstrap.  Parts that overlapped
     * (on different threads at once) are counted once: in the order PROC,
     * L-IMB, INIT, TCP, OUT each is cut to what the ones before left of
     * seconds - boot, so that
     * boot + proc + limb + init + tcp + out + over == seconds. */
    double seconds, boot, proc, limb, over;
    double init, out, tcp;
    uint64_t cells, tiles;
    char policy[64];
    int nprocs, nranks;
    tess_tile_proc_stats *procs; /* every rank's processors, by rank */
    tess_tile_rank_stats *ranks;
} tess_tile_stats;

/* Run a registered job (from the control function, rank 0).  On success
 * the output is complete on the output rank and *stats filled (free with
 * tess_tile_stats_free); on failure every rank has stopped and *stats is
 * empty. */
TESS_API int tess_tile_run(tess_ctx *ctx, const tess_tile_job *job, const tess_tile_options *opt,
                           tess_tile_stats *stats);
TESS_API void tess_tile_stats_free(tess_tile_stats *stats);

/* Processors a spec describes on one rank, or TESS_ERR_INVAL. */
TESS_API int tess_tile_count_processors(const char *spec);

#ifdef __cplusplus
}
#endif

#endif
