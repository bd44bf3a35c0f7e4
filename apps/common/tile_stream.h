/*
 * tile_stream.h — streamed input and output of the tiles-face applications
 * (docs/tiles.md, "Streamed input and output"): a tile's input read from
 * its file by region when a processor takes the tile (the job's read(),
 * called on the processor's own thread, so reading overlaps the other
 * processors' work), and its output written at its place in the output
 * file when it arrives (the job's write(), on the output rank), so memory
 * holds the tiles in flight instead of the whole input and output.
 * --in-memory keeps the old way: read everything first, write after.
 */
#ifndef TESS_APPS_TILE_STREAM_H
#define TESS_APPS_TILE_STREAM_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "tile_cli.h"

/* Read exactly len bytes at off (retrying short reads); 0, or -1 with
 * errno set (0 for a file that ended early). */
int app_pread_full(int fd, void *buf, size_t len, off_t off);
/* Write exactly len bytes at off; 0, or -1 with errno set. */
int app_pwrite_full(int fd, const void *buf, size_t len, off_t off);

/* Whether rank 0 writes `path` as tiles finish: a regular file (or one
 * still to be made), not --in-memory, no checkpoint (its journal keeps the
 * whole output) and nothing else asking for the whole output (`whole`: a
 * picture or map drawn from every cell). */
int app_tile_stream_output(const app_tile_cli *c, const char *path, int whole);

/*
 * A file of fixed-size cells in the area's row-major order after a header
 * of `header` bytes: each tile's output is written at its place (one
 * pwrite per row of the tile's box).  `fd` is set by the application when
 * rank 0 opened the file (before the run); every cell is written once, so
 * the file ends bitwise equal to the in-memory output.
 */
typedef struct app_tile_sink {
    tess_ctx *ctx;
    const char *path;  /* for messages */
    int fd;            /* -1 until opened */
    off_t header;      /* bytes before the first cell */
    size_t cell_bytes; /* out_bytes */
    int ndims;
    int64_t extent[TESS_TILE_MAX_DIMS];
} app_tile_sink;

/* Set up a sink for `job`'s area (fd -1). */
void app_tile_sink_init(app_tile_sink *k, tess_ctx *ctx, const tess_tile_job *job, const char *path,
                        off_t header);
/* The job's write() for a sink (arg: the app_tile_sink). */
int app_tile_sink_write(const tess_tile_box *box, const void *out, void *arg);

/* An input file opened once per rank for the job's read(): pread is safe
 * from every processor thread at once.  0, or -1 after rank 0 printed
 * "tessera APP: cannot read PATH: reason". */
int app_tile_input_open(const char *app, const char *path, int rank, int *fd);
/* The read()'s error: TESS_ERR_IO naming the file ("short file" when it
 * ended early: it shrank after it was checked). */
int app_tile_input_error(tess_ctx *ctx, const char *path, int err);

#endif
