/*
 * stream.c — the bounded stream between two stages of a tiles pipeline
 * (tessera/tile_pipe.h, docs/tiles.md "Pipelines").
 *
 * The writer (stage k's output rank, on its controller's thread) hands in
 * boxes of cells as its tiles finish; readers (stage k+1's processors)
 * ask for boxes that the next stage's own tiling chose, which need not
 * match the writer's.  The stream keeps each written box as a piece and
 * frees it once every one of its cells was read.  A reader waits until
 * the pieces cover its box.  The writer waits while the pieces held pass
 * the window (back-pressure: the first stage slows to the second's pace),
 * unless a reader waits for cells that are not there: they can only come
 * from the writer, and holding it would deadlock the pipeline, so the
 * window gives way (the statistics' peak shows by how much).  A reader
 * whose cells came but that has not woken yet does not count.  A failure
 * anywhere (tess_tile_stream_fail) wakes everyone with its status, so no
 * stage is left waiting for another that stopped.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/internal.h"
#include "tessera/tile_pipe.h"
#include "tile/area.h"

#define DEFAULT_WINDOW ((size_t)64 << 20)

typedef struct piece {
    tess_tile_box box;
    uint64_t cells_left; /* not read yet; freed at 0 */
    size_t bytes;
    uint8_t *data; /* row-major over box */
    struct piece *next;
} piece;

/* A reader waiting for its box (on its stack while it waits). */
typedef struct waiter {
    const tess_tile_box *box;
    uint64_t cells;
    struct waiter *next;
} waiter;

struct tess_tile_stream {
    tess_ctx *ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ndims;
    int64_t extent[TESS_TILE_MAX_DIMS];
    size_t cell_bytes, window, held, peak;
    piece *pieces;
    int ended, status;
    waiter *waiting; /* readers waiting for cells */
    uint64_t cells_in, cells_out;
    double write_wait, read_wait;
};

static uint64_t covered(const tess_tile_stream *s, const tess_tile_box *box);
static int writer_may_go(const tess_tile_stream *s, size_t bytes);

/* The intersection of a and b in *out; 0 when empty. */
static int box_meet(const tess_tile_box *a, const tess_tile_box *b, tess_tile_box *out)
{
    out->ndims = a->ndims;
    for (int d = 0; d < a->ndims; d++) {
        out->lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        out->hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (out->lo[d] >= out->hi[d]) return 0;
    }
    return 1;
}

static int box_fits(const tess_tile_stream *s, const tess_tile_box *b)
{
    if (b == NULL || b->ndims != s->ndims) return 0;
    for (int d = 0; d < s->ndims; d++)
        if (b->lo[d] < 0 || b->hi[d] > s->extent[d] || b->lo[d] >= b->hi[d]) return 0;
    return 1;
}

/* Offset in cells of cell `at` within box b (row-major). */
static uint64_t cell_index(const tess_tile_box *b, const int64_t *at)
{
    uint64_t i = 0;
    for (int d = 0; d < b->ndims; d++)
        i = i * (uint64_t)(b->hi[d] - b->lo[d]) + (uint64_t)(at[d] - b->lo[d]);
    return i;
}

/* Copy the cells of box m (inside both) from piece p into buf (row-major
 * over `into`): a memcpy per run of the last dimension. */
static void copy_meet(const tess_tile_stream *s, const piece *p, const tess_tile_box *m,
                      const tess_tile_box *into, uint8_t *buf)
{
    int nd = m->ndims;
    size_t run = (size_t)(m->hi[nd - 1] - m->lo[nd - 1]) * s->cell_bytes;
    int64_t at[TESS_TILE_MAX_DIMS];
    for (int d = 0; d < nd; d++) at[d] = m->lo[d];
    for (;;) {
        memcpy(buf + cell_index(into, at) * s->cell_bytes,
               p->data + cell_index(&p->box, at) * s->cell_bytes, run);
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++at[d] < m->hi[d]) break;
            at[d] = m->lo[d];
        }
        if (d < 0) return;
    }
}

int tess_tile_stream_open(tess_ctx *ctx, int ndims, const int64_t *extent, size_t cell_bytes,
                          size_t window_bytes, tess_tile_stream **out)
{
    *out = NULL;
    TESS_RETURN_IF(ctx, ndims < 1 || ndims > TESS_TILE_MAX_DIMS || cell_bytes == 0, TESS_ERR_INVAL,
                   "tile stream: %d dimensions, %zu bytes a cell", ndims, cell_bytes);
    tess_tile_stream *s = calloc(1, sizeof *s);
    TESS_RETURN_IF(ctx, s == NULL, TESS_ERR_NOMEM, "out of memory");
    s->ctx = ctx;
    s->ndims = ndims;
    for (int d = 0; d < ndims; d++) s->extent[d] = extent[d];
    s->cell_bytes = cell_bytes;
    s->window = window_bytes > 0 ? window_bytes : DEFAULT_WINDOW;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    *out = s;
    return TESS_OK;
}

/* Wait on the stream's condition (mu held), adding the wait to *spent. */
static void wait_timed(tess_tile_stream *s, double *spent)
{
    double t0 = tess_now();
    pthread_cond_wait(&s->cv, &s->mu);
    *spent += tess_now() - t0;
}

int tess_tile_stream_write(const tess_tile_box *box, const void *data, void *stream)
{
    tess_tile_stream *s = stream;
    if (!box_fits(s, box))
        return tess_set_error(s->ctx, TESS_ERR_INVAL, "tile stream: a box outside its area");
    uint64_t cells = tess__tile_box_cells(box);
    size_t bytes = (size_t)cells * s->cell_bytes;
    pthread_mutex_lock(&s->mu);
    while (s->status == TESS_OK && !writer_may_go(s, bytes)) wait_timed(s, &s->write_wait);
    int rc = s->status;
    if (rc == TESS_OK) s->held += bytes; /* reserved: the copy is made unlocked */
    if (s->held > s->peak) s->peak = s->held;
    pthread_mutex_unlock(&s->mu);
    if (rc != TESS_OK) return rc;
    piece *p = malloc(sizeof *p);
    uint8_t *copy = p ? malloc(bytes) : NULL;
    if (copy == NULL) {
        free(p);
        tess_tile_stream_fail(s, TESS_ERR_NOMEM);
        return tess_set_error(s->ctx, TESS_ERR_NOMEM, "tile stream: out of memory for a box");
    }
    memcpy(copy, data, bytes);
    *p = (piece){.box = *box, .cells_left = cells, .bytes = bytes, .data = copy};
    pthread_mutex_lock(&s->mu);
    p->next = s->pieces;
    s->pieces = p;
    s->cells_in += cells;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return TESS_OK;
}

/* Cells of box the pieces hold (mu held). */
static uint64_t covered(const tess_tile_stream *s, const tess_tile_box *box)
{
    uint64_t n = 0;
    tess_tile_box m;
    for (const piece *p = s->pieces; p != NULL; p = p->next)
        if (box_meet(&p->box, box, &m)) n += tess__tile_box_cells(&m);
    return n;
}

/* Is a reader waiting for cells the pieces do not hold (mu held)? */
static int reader_starving(const tess_tile_stream *s)
{
    for (const waiter *w = s->waiting; w != NULL; w = w->next)
        if (covered(s, w->box) < w->cells) return 1;
    return 0;
}

/* May the writer add `bytes` now (mu held)? */
static int writer_may_go(const tess_tile_stream *s, size_t bytes)
{
    return s->held == 0 || s->held + bytes <= s->window || reader_starving(s);
}

/* Copy box out of the pieces and free those fully read (mu held). */
static void take(tess_tile_stream *s, const tess_tile_box *box, uint8_t *buf)
{
    tess_tile_box m;
    for (piece **pp = &s->pieces; *pp != NULL;) {
        piece *p = *pp;
        if (box_meet(&p->box, box, &m)) {
            copy_meet(s, p, &m, box, buf);
            p->cells_left -= tess__tile_box_cells(&m);
        }
        if (p->cells_left > 0) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        s->held -= p->bytes;
        free(p->data);
        free(p);
    }
}

int tess_tile_stream_read(const tess_tile_box *box, void *buf, void *stream)
{
    tess_tile_stream *s = stream;
    if (!box_fits(s, box))
        return tess_set_error(s->ctx, TESS_ERR_INVAL, "tile stream: a box outside its area");
    uint64_t cells = tess__tile_box_cells(box);
    pthread_mutex_lock(&s->mu);
    int rc;
    for (;;) {
        if ((rc = s->status) != TESS_OK) break;
        if (covered(s, box) == cells) {
            take(s, box, buf);
            s->cells_out += cells;
            pthread_cond_broadcast(&s->cv); /* room for the writer */
            break;
        }
        if (s->ended) {
            rc = TESS_ERR_FORMAT;
            break;
        }
        waiter me = {.box = box, .cells = cells, .next = s->waiting};
        s->waiting = &me;
        pthread_cond_broadcast(&s->cv); /* a starving reader lets the writer past the window */
        wait_timed(s, &s->read_wait);
        waiter **w = &s->waiting;
        while (*w != &me) w = &(*w)->next;
        *w = me.next;
    }
    pthread_mutex_unlock(&s->mu);
    if (rc == TESS_ERR_FORMAT)
        tess_set_error(s->ctx, rc,
                       "tile stream: the stage before ended without writing every cell of a "
                       "box read (%llu cells)",
                       (unsigned long long)cells);
    return rc;
}

void tess_tile_stream_end(tess_tile_stream *s)
{
    pthread_mutex_lock(&s->mu);
    s->ended = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void tess_tile_stream_fail(tess_tile_stream *s, int status)
{
    pthread_mutex_lock(&s->mu);
    if (s->status == TESS_OK) s->status = status < 0 ? status : TESS_ERR_KERNEL;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void tess_tile_stream_get_stats(tess_tile_stream *s, tess_tile_stream_stats *st)
{
    pthread_mutex_lock(&s->mu);
    *st = (tess_tile_stream_stats){.window_bytes = s->window,
                                   .peak_bytes = s->peak,
                                   .held_bytes = s->held,
                                   .write_wait = s->write_wait,
                                   .read_wait = s->read_wait,
                                   .cells_in = s->cells_in,
                                   .cells_out = s->cells_out};
    pthread_mutex_unlock(&s->mu);
}

void tess_tile_stream_close(tess_tile_stream *s)
{
    if (s == NULL) return;
    for (piece *p = s->pieces, *next; p != NULL; p = next) {
        next = p->next;
        free(p->data);
        free(p);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
