/*
 * tile_flusher.h — the thread that makes a tiles checkpoint's journal
 * durable (tile_ckpt.h), so that rank 0's controller never waits for the
 * disk: the controller writes each tile's output to tiles.data and queues
 * its record; now and then it hands the queued records over, and this
 * thread syncs tiles.data (every output they name was written before the
 * hand-over), then appends them to tiles.journal and syncs that.  One
 * batch at a time: while one is being written the controller keeps
 * queueing.  The two share only what the mutex guards.
 */
#ifndef TESS_APPS_TILE_FLUSHER_H
#define TESS_APPS_TILE_FLUSHER_H

#include <pthread.h>
#include "tile_journal.h"

typedef struct app_tile_flusher {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fd_data, fd_journal;
    app_tile_record *batch; /* handed over; written while busy */
    int nbatch, cap_batch;
    int busy, stop, started;
    int err;            /* errno of the first failure, or 0 */
    const char *failed; /* the file it failed on */
} app_tile_flusher;

/* Start the thread for the two open files; 0, or an errno. */
int app_tile_flusher_start(app_tile_flusher *f, int fd_data, int fd_journal);
/* Hand over *n queued records if the thread is idle (the arrays are
 * swapped: *recs comes back empty); 1 when handed, 0 when it is busy, -1
 * after an earlier failure (f->err, f->failed). */
int app_tile_flusher_offer(app_tile_flusher *f, app_tile_record **recs, int *n, int *cap);
/* Hand over the rest and wait until all is written; 0, or -1 as above. */
int app_tile_flusher_drain(app_tile_flusher *f, app_tile_record **recs, int *n, int *cap);
/* End the thread (after what it is writing) and free its batch. */
void app_tile_flusher_stop(app_tile_flusher *f);

#endif
