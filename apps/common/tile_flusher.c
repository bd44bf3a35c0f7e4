/*
 * tile_flusher.c — the journal's background writer (tile_flusher.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tile_flusher.h"

/* The outputs first, then the records that name them. */
static int write_batch(app_tile_flusher *f, const app_tile_record *recs, int n, const char **failed)
{
    *failed = APP_TILE_DATA;
    if (fdatasync(f->fd_data) != 0) return -1;
    *failed = APP_TILE_JOURNAL;
    off_t off = lseek(f->fd_journal, 0, SEEK_END);
    const uint8_t *p = (const uint8_t *)recs;
    size_t left = (size_t)n * sizeof *recs;
    while (off >= 0 && left > 0) {
        ssize_t w = pwrite(f->fd_journal, p, left, off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        left -= (size_t)w;
        off += w;
    }
    return off < 0 || fdatasync(f->fd_journal) != 0 ? -1 : 0;
}

static void *flusher_main(void *arg)
{
    app_tile_flusher *f = arg;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->busy && !f->stop) pthread_cond_wait(&f->cv, &f->mu);
        if (!f->busy) break; /* stopped, nothing left */
        app_tile_record *recs = f->batch;
        int n = f->nbatch;
        pthread_mutex_unlock(&f->mu);
        const char *failed = NULL;
        int rc = f->err == 0 ? write_batch(f, recs, n, &failed) : 0;
        int err = errno;
        pthread_mutex_lock(&f->mu);
        if (rc != 0 && f->err == 0) {
            f->err = err ? err : EIO;
            f->failed = failed;
        }
        f->nbatch = 0;
        f->busy = 0;
        pthread_cond_broadcast(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

int app_tile_flusher_start(app_tile_flusher *f, int fd_data, int fd_journal)
{
    memset(f, 0, sizeof *f);
    f->fd_data = fd_data;
    f->fd_journal = fd_journal;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    int rc = pthread_create(&f->thread, NULL, flusher_main, f);
    f->started = rc == 0;
    return rc;
}

/* Swap the caller's queue with the idle batch and wake the thread (locked). */
static void hand_over(app_tile_flusher *f, app_tile_record **recs, int *n, int *cap)
{
    app_tile_record *empty = f->batch;
    int empty_cap = f->cap_batch;
    f->batch = *recs;
    f->nbatch = *n;
    f->cap_batch = *cap;
    *recs = empty;
    *n = 0;
    *cap = empty_cap;
    f->busy = 1;
    pthread_cond_broadcast(&f->cv);
}

int app_tile_flusher_offer(app_tile_flusher *f, app_tile_record **recs, int *n, int *cap)
{
    pthread_mutex_lock(&f->mu);
    int rc = f->err ? -1 : f->busy ? 0 : 1;
    if (rc == 1 && *n > 0) hand_over(f, recs, n, cap);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

int app_tile_flusher_drain(app_tile_flusher *f, app_tile_record **recs, int *n, int *cap)
{
    pthread_mutex_lock(&f->mu);
    while (f->busy) pthread_cond_wait(&f->cv, &f->mu);
    if (f->err == 0 && *n > 0) hand_over(f, recs, n, cap);
    while (f->busy) pthread_cond_wait(&f->cv, &f->mu);
    int rc = f->err ? -1 : 0;
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void app_tile_flusher_stop(app_tile_flusher *f)
{
    if (!f->started) return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f->batch);
    f->started = 0;
}
