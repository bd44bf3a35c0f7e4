/*
 * tile_pipe.h — pipelines of tile jobs (docs/tiles.md, "Pipelines"): two or
 * more jobs over the same area whose stages run at once, each on its own
 * processors with its tiles sized by APC+, stage k's output cells flowing
 * to stage k+1's input through a bounded stream.
 *
 * A stage hands its output to the next by naming tess_tile_stream_write as
 * its job's `write`, and takes its input from the one before by naming
 * tess_tile_stream_read as its `read`; tess_tile_pipeline_run connects
 * them (it sets write_arg and read_arg to the stream between them).  Every
 * stage is registered as any job (tess_tile_register, before tess_main);
 * the stages share ndims and extent, and stage k+1's in_bytes is stage k's
 * out_bytes.  The stream holds the cells written and not yet read: a
 * writer waits while they pass the window (back-pressure), a reader waits
 * until every cell of its box was written.
 *
 * Pipelines run in embedded mode (one rank) for now: under mpirun
 * tess_tile_pipeline_run refuses with TESS_ERR_UNSUPPORTED.  The context
 * needs a worker per stage (tess_config.workers >= nstages): each stage's
 * controller runs on its own worker.
 */
#ifndef TESSERA_TILE_PIPE_H
#define TESSERA_TILE_PIPE_H

#include "tessera/tile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESS_TILE_MAX_STAGES 8

/* ---- the bounded stream between two stages ---- */
typedef struct tess_tile_stream tess_tile_stream;

/* A stream of cells of an area (ndims, extent; cell_bytes each) that holds
 * at most about window_bytes written and not yet read (0: 64 MiB).  A
 * writer goes past the window only when a reader waits for cells not yet
 * written: the window then cannot make the pipeline deadlock.  ctx (may be
 * NULL) receives the stream's error messages.  TESS_OK or an error. */
TESS_API int tess_tile_stream_open(tess_ctx *ctx, int ndims, const int64_t *extent,
                                   size_t cell_bytes, size_t window_bytes, tess_tile_stream **out);
/* A tess_tile_write_fn (arg: the stream): keep a copy of box's cells,
 * waiting while the window is full.  Every cell is written once. */
TESS_API int tess_tile_stream_write(const tess_tile_box *box, const void *data, void *stream);
/* A tess_tile_read_fn (arg: the stream): wait until every cell of box was
 * written, copy them row-major into buf and let them go (every cell is
 * read once).  A box whose cells will not all come (the stream ended or
 * failed) returns an error instead of waiting. */
TESS_API int tess_tile_stream_read(const tess_tile_box *box, void *buf, void *stream);
/* The writer is done: readers of cells never written fail from now on. */
TESS_API void tess_tile_stream_end(tess_tile_stream *s);
/* End the stream with `status` (< 0): every waiting and later read and
 * write returns it (without a message of its own: the failure that
 * called this said why). */
TESS_API void tess_tile_stream_fail(tess_tile_stream *s, int status);

typedef struct tess_tile_stream_stats {
    size_t window_bytes, peak_bytes; /* the most bytes it held at once */
    size_t held_bytes;               /* held now */
    double write_wait, read_wait;    /* seconds writers / readers waited */
    uint64_t cells_in, cells_out;
} tess_tile_stream_stats;
TESS_API void tess_tile_stream_get_stats(tess_tile_stream *s, tess_tile_stream_stats *st);
TESS_API void tess_tile_stream_close(tess_tile_stream *s);

/* ---- a pipeline ---- */
typedef struct tess_tile_pipeline {
    int nstages;
    const tess_tile_job *stage[TESS_TILE_MAX_STAGES]; /* registered jobs, in order */
    tess_tile_options opt[TESS_TILE_MAX_STAGES];      /* each stage's processors, policy */
    size_t window_bytes;                              /* per stream; 0: 64 MiB */
} tess_tile_pipeline;

typedef struct tess_tile_pipeline_stats {
    double seconds; /* from the start to the last stage's last output */
    int nstages;
    tess_tile_stats stage[TESS_TILE_MAX_STAGES];
    tess_tile_stream_stats stream[TESS_TILE_MAX_STAGES - 1]; /* after stage k */
} tess_tile_pipeline_stats;

/* Run the stages at once (from the control function).  On success every
 * stage finished and *stats is filled (free with
 * tess_tile_pipeline_stats_free); on failure of any stage the others stop
 * too, the first failure's message is the context's error and *stats is
 * empty.  The last stage's output is complete only on success. */
TESS_API int tess_tile_pipeline_run(tess_ctx *ctx, const tess_tile_pipeline *p,
                                    tess_tile_pipeline_stats *stats);
TESS_API void tess_tile_pipeline_stats_free(tess_tile_pipeline_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
