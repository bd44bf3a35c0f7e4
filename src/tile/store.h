/*
 * store.h — the storage layer of a rank's tiles run: every rank's input
 * slab (TILE_HELLO), input fetched from other ranks for stolen work
 * (TILE_FETCH, TILE_DATA), and the outputs gathered on the output rank
 * (TILE_OUTPUT, TILE_OUTPUT_SHARED) until it announces the end
 * (TILE_FINISH).  It routes those message types to itself and knows
 * nothing of processors or policies: fetched input goes back to its owner
 * through the `ready` callback.  Private to src/tile.
 */
#ifndef TESS_SRC_TILE_STORE_H
#define TESS_SRC_TILE_STORE_H

#include "tile/link.h"

/* Fetched input is here: segment s (its chunk set) is work for this rank. */
typedef void tess__tile_ready_fn(void *arg, const tess__tile_segment *s);

typedef struct tess__tile_held tess__tile_held;
typedef struct tess__tile_store {
    tess__tile_link *link;
    tess__tile_ready_fn *ready;
    void *ready_arg;
    /* slab ownership of every rank (rows [lo, hi) of dimension 0) */
    int64_t *slab_lo, *slab_hi;
    int hellos;
    int slabs_checked;     /* every slab known and checked: write() may run */
    tess__tile_held *held; /* outputs for write() until then */
    int nheld, cap_held;
    tess__tile_segment *pending; /* stolen segments waiting for their data */
    int npending, cap_pending;
    uint64_t fetch_bytes_out; /* requested and not yet arrived */
    /* the output rank's gathering, and the end of the run */
    uint64_t total_cells, gathered;
    int finished;     /* TILE_FINISH came: every output is gathered */
    int finish_sent;  /* the output rank announced the end */
    double finish_at; /* when the output rank had every output */
    uint64_t bytes_in, bytes_out, output_bytes_shared; /* statistics */
    /* the controller's seconds checking slabs (INIT), in write() and
     * gathering outputs (OUT), moving input for other ranks (TCP) */
    double init_s, out_s, tcp_s;
} tess__tile_store;

/* Set up this rank's slab and route the store's messages.  TESS_OK or
 * TESS_ERR_NOMEM with the error set. */
int tess__tile_store_init(tess__tile_store *s, tess__tile_link *l, tess__tile_ready_fn *ready,
                          void *ready_arg);
void tess__tile_store_free(tess__tile_store *s);
/* Tell every rank this rank's slab (after checking it); the run's status. */
int tess__tile_store_hello(tess__tile_store *s);
/* Rows [lo, hi) of the input this rank holds. */
void tess__tile_store_own_slab(const tess__tile_store *s, int64_t *lo, int64_t *hi);

/* Must segment seg's input be fetched before it can run here? */
int tess__tile_store_needs_fetch(const tess__tile_store *s, const tess__tile_segment *seg);
/* Queue seg for fetching.  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_store_add_pending(tess__tile_store *s, const tess__tile_segment *seg);
/* Cells of the segments waiting for their input. */
uint64_t tess__tile_store_pending_cells(const tess__tile_store *s);
/* Take up to `cells` cells from the end of what waits for its input (for a
 * thief: it was not fetched yet), at most max segments appended to out at
 * *n; returns the cells taken. */
uint64_t tess__tile_store_take_pending(tess__tile_store *s, uint64_t cells, tess__tile_segment *out,
                                       int max, int *n);
/* Is input on its way? */
int tess__tile_store_fetching(const tess__tile_store *s);
/* Ask owners for pending input, at most two chunks in flight. */
void tess__tile_store_request(tess__tile_store *s);

/* Input of an item cut from segment seg (NULL when the processor must
 * gather or read it) and its chunk. */
void tess__tile_store_item_input(const tess__tile_store *s, const tess__tile_segment *seg,
                                 tess__tile_item *it);
/* A processor finished: handle its output (write() sink) and release its
 * chunk.  TESS_OK, the tile's error or write()'s. */
int tess__tile_store_done(tess__tile_store *s, tess__tile_done *d);

/* For processor threads (read only): */
/* Copy a box's cells between the area-row-major slab starting at row base
 * (every cell of its rows) and a buffer row-major within the box. */
void tess__tile_copy_box(const tess__tile_area *a, const tess__tile_box *box, size_t cell_bytes,
                         uint8_t *slab, int64_t base, uint8_t *buf, int to_buf);
/* The output rank's shared image of the run's job's output, or NULL. */
uint8_t *tess__tile_shared_output(const tess__tile_link *l);
/* Where box's output lies in `whole` (the whole area's output, row-major)
 * when it is contiguous there (whole rows); NULL otherwise or for NULL. */
uint8_t *tess__tile_output_place(const tess__tile_link *l, const tess__tile_box *box, void *whole);

#endif
