/*
 * tile_ckpt.h — checkpoints of the tiles-face applications
 * (--checkpoint-dir DIR, --checkpoint-every S, --restore,
 * --checkpoint-overwrite; docs/checkpoints.md, "Tiles").
 *
 * Rank 0 holds the job's whole output (the output rank).  With a checkpoint
 * directory its tiles reach it through the job's write() callback, which
 * copies each into the output, appends it to DIR/tiles.data and queues a
 * journal record (the box, where its bytes lie, their checksum).  At most
 * every S seconds a thread of its own (tile_flusher.h) syncs the data file
 * and only then appends the queued records to DIR/tiles.journal (and syncs
 * it): a record never names output that is not on disk.  DIR/tiles.identity names the job (the app,
 * the area and the options that change the output, input files by size and
 * checksum; never processors or policy).  --restore reads the journal on
 * every rank before tess_main, marks the finished cells in the job's `done`
 * bitmap (the runtime then leaves their rows out before it sizes any tile),
 * and rank 0 puts their outputs back in place.
 */
#ifndef TESS_APPS_TILE_CKPT_H
#define TESS_APPS_TILE_CKPT_H

#include <stdint.h>
#include "tile_app.h"
#include "tile_flusher.h"
#include "tile_journal.h"

typedef struct app_tile_ckpt {
    const char *app, *dir;
    const app_tile_cli *cli;
    tess_ctx *ctx;
    tess_tile_job *job;
    char *identity; /* the text of DIR/tiles.identity */
    uint64_t identity_hash;
    int restoring;            /* a journal of this job was read */
    int afresh_note;          /* --restore found nothing to restore: say so */
    uint8_t *done;            /* a bit per cell (tess_tile_job.done) */
    uint64_t restored_cells;  /* cells marked in done */
    uint64_t journal_records; /* valid records read */
    uint8_t *out;             /* rank 0: the whole output */
    int fd_data, fd_journal;  /* rank 0 during the run, else -1 */
    uint64_t data_off;        /* where the next tile's output goes */
    uint64_t data_start;      /* where this run's outputs began */
    app_tile_record *pending; /* written to tiles.data, not yet journaled */
    int npending, cap_pending;
    app_tile_flusher flusher; /* rank 0 during the run */
    double last_flush;        /* the last hand-over to the flusher */
    double busy_s;            /* rank 0's time in the journal: set-up, tiles, flushes */
    uint64_t tiles_written;   /* tiles journaled by this run */
} app_tile_ckpt;

/* Every rank, after the application's prepare, before tess_main: check
 * DIR's identity against this run's, read the journal with --restore,
 * route rank 0's outputs through the journal and let tess_main claim DIR
 * (tess_checkpoint_enable).  0, or -1 after one line from rank 0. */
int app_tile_ckpt_prepare(app_tile_ckpt *k, tess_ctx *ctx, const app_tile_spec *spec);
/* Rank 0, control function, before the run: a fresh journal, or the
 * restored one cut to its valid records.  0, or -1 after one line. */
int app_tile_ckpt_open(app_tile_ckpt *k);
/* Rank 0, after the run: journal what is queued.  0, or -1 after one line. */
int app_tile_ckpt_finish(app_tile_ckpt *k);
void app_tile_ckpt_free(app_tile_ckpt *k);

#endif
