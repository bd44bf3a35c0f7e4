/*
 * store.c — the storage layer of the tiles face: where a tile's input comes
 * from and where its output goes.
 *
 * Work assignments move between ranks as small descriptors (a segment and
 * the rank that owns its input); the input itself moves only when a rank is
 * about to process it.  The rank fetches it straight from the owner, in
 * chunks of about --tile-chunk bytes and with at most two chunks in flight,
 * so the transfer runs as fast as the link takes it and no faster.  A
 * segment given away again before it was fetched carries its owner along,
 * so its data still moves once, from the owner to the rank that processes it.
 */
#include <stdlib.h>
#include <string.h>
#include "comm/comm.h"
#include "tile/tile_internal.h"

int tess__tile_area_contiguous(const tess__tile_area *a) { return a->ncolumns == 1; }

static uint64_t row_cells(const tess__tile_area *a)
{
    return tess__tile_area_cells(a) / (uint64_t)a->extent[0];
}

void tess__tile_copy_box(const tess__tile_area *a, const tess__tile_box *box, size_t cell_bytes,
                         uint8_t *slab, int64_t base, uint8_t *buf, int to_buf)
{
    int nd = box->ndims;
    int64_t stride[TESS_TILE_MAX_DIMS]; /* cells between neighbours in the area */
    stride[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--) stride[d] = stride[d + 1] * a->extent[d + 1];
    size_t run = (size_t)(box->hi[nd - 1] - box->lo[nd - 1]) * cell_bytes;
    int64_t idx[TESS_TILE_MAX_DIMS];
    for (int d = 0; d < nd; d++) idx[d] = box->lo[d];
    for (;;) {
        int64_t off = (idx[0] - base) * stride[0];
        for (int d = 1; d < nd; d++) off += idx[d] * stride[d];
        uint8_t *area_p = slab + (size_t)off * cell_bytes;
        if (to_buf) memcpy(buf, area_p, run);
        else memcpy(area_p, buf, run);
        buf += run;
        int d = nd - 2; /* next run: odometer over every dimension but the last */
        for (; d >= 0; d--) {
            if (++idx[d] < box->hi[d]) break;
            idx[d] = box->lo[d];
        }
        if (d < 0) break;
    }
}

static int needs_data(const tess__tile_ctl *c)
{
    return c->job->in_bytes > 0 && c->job->read == NULL;
}

int tess__tile_store_add_pending(tess__tile_ctl *c, const tess__tile_segment *s)
{
    if (!needs_data(c) || s->owner == c->me) return tess__tile_policy_add_work(c, s);
    if (c->npending == c->cap_pending) {
        int cap = c->cap_pending ? c->cap_pending * 2 : 16;
        tess__tile_segment *p = realloc(c->pending, (size_t)cap * sizeof *p);
        if (p == NULL) return TESS_ERR_NOMEM;
        c->pending = p;
        c->cap_pending = cap;
    }
    c->pending[c->npending++] = *s;
    return TESS_OK;
}

/* Rows of segment s that make about one chunk. */
static int64_t chunk_rows(const tess__tile_ctl *c, const tess__tile_segment *s)
{
    uint64_t row_bytes = tess__tile_column_cross(&c->area, s->column) * c->job->in_bytes;
    int64_t rows = (int64_t)(c->args.chunk / (row_bytes ? row_bytes : 1));
    if (rows < 1) rows = 1;
    return rows < s->r1 - s->r0 ? rows : s->r1 - s->r0;
}

void tess__tile_store_request(tess__tile_ctl *c)
{
    while (c->npending > 0 && c->fetch_bytes_out < 2 * c->args.chunk) {
        tess__tile_segment *s = &c->pending[0];
        int64_t rows = chunk_rows(c, s);
        tess__tile_wire_seg w = {s->column, s->r0, s->r0 + rows, s->owner, 0};
        s->r0 += rows;
        if (s->r0 >= s->r1) memmove(s, s + 1, (size_t)--c->npending * sizeof *s);
        c->fetch_bytes_out +=
            (uint64_t)rows * tess__tile_column_cross(&c->area, w.column) * c->job->in_bytes;
        tess__tile_send(c, w.owner, TILE_FETCH, &w, sizeof w, NULL, 0);
    }
}

void tess__tile_store_on_fetch(tess__tile_ctl *c, int src, const tess__tile_wire_seg *s)
{
    const tess_tile_job *job = c->job;
    tess__tile_box box;
    tess__tile_column_box(&c->area, s->column, &box);
    box.lo[0] = s->r0;
    box.hi[0] = s->r1;
    uint64_t cells = tess__tile_box_cells(&box);
    size_t bytes = cells * job->in_bytes;
    if (s->r0 < c->slab_lo[c->me] || s->r1 > c->slab_hi[c->me]) {
        tess__tile_abort_all(c, TESS_ERR_INVAL,
                             "tiles: a rank asked for input this rank does not own");
        return;
    }
    if (tess__tile_area_contiguous(&c->area)) {
        const uint8_t *p = (const uint8_t *)job->input + (size_t)(s->r0 - c->slab_lo[c->me]) *
                                                             row_cells(&c->area) * job->in_bytes;
        tess__tile_send(c, src, TILE_DATA, s, sizeof *s, p, bytes);
    } else {
        uint8_t *buf = malloc(bytes ? bytes : 1);
        if (buf == NULL) {
            tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
            return;
        }
        tess__tile_copy_box(&c->area, &box, job->in_bytes, (uint8_t *)job->input, c->slab_lo[c->me],
                            buf, 1);
        tess__tile_send(c, src, TILE_DATA, s, sizeof *s, buf, bytes);
        free(buf);
    }
    c->rs.bytes_out += bytes;
}

void tess__tile_store_on_data(tess__tile_ctl *c, const tess__tile_wire_seg *s, const uint8_t *data,
                              size_t len)
{
    tess__tile_chunk *k = malloc(sizeof *k);
    uint8_t *copy = malloc(len ? len : 1);
    if (k == NULL || copy == NULL) {
        free(k);
        free(copy);
        tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
        return;
    }
    memcpy(copy, data, len);
    *k = (tess__tile_chunk){.column = s->column, .r0 = s->r0, .r1 = s->r1, .data = copy};
    tess__tile_segment seg = {
        .column = s->column, .r0 = s->r0, .r1 = s->r1, .owner = s->owner, .chunk = k};
    k->cells_left = tess__tile_segment_cells(&c->area, &seg);
    c->fetch_bytes_out = c->fetch_bytes_out > len ? c->fetch_bytes_out - len : 0;
    c->rs.bytes_in += len;
    tess__tile_steal_timed(c);
    if (tess__tile_policy_add_work(c, &seg) != TESS_OK)
        tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
}

void tess__tile_store_item_input(tess__tile_ctl *c, const tess__tile_segment *s,
                                 tess__tile_item *it)
{
    const tess_tile_job *job = c->job;
    it->in = NULL;
    it->chunk = s->chunk;
    if (s->chunk != NULL) {
        tess__tile_chunk *k = s->chunk;
        uint64_t cross = tess__tile_column_cross(&c->area, k->column);
        it->in = k->data + (size_t)(it->box.lo[0] - k->r0) * cross * job->in_bytes;
    } else if (needs_data(c) && tess__tile_area_contiguous(&c->area)) {
        it->in = (const uint8_t *)job->input +
                 (size_t)(it->box.lo[0] - c->slab_lo[c->me]) * row_cells(&c->area) * job->in_bytes;
    }
}

/*
 * Outputs for a write() callback: the callback sees a cell only after every
 * rank's slab was checked (a rank starts before the others' slabs are
 * known, and overlapping slabs would hand it cells twice).  Until then they
 * are held, in the order they came.  Takes `out` (malloc'ed).
 */
static int write_or_hold(tess__tile_ctl *c, const tess__tile_box *box, void *out)
{
    if (c->slabs_checked) {
        int rc = c->job->write(box, out, c->job->arg);
        free(out);
        return rc;
    }
    if (c->nheld == c->cap_held) {
        int cap = c->cap_held ? 2 * c->cap_held : 16;
        tess__tile_held *h = realloc(c->held, (size_t)cap * sizeof *h);
        if (h == NULL) {
            free(out);
            return tess_set_error(c->ctx, TESS_ERR_NOMEM, "tiles: out of memory for an output");
        }
        c->held = h;
        c->cap_held = cap;
    }
    c->held[c->nheld++] = (tess__tile_held){*box, out};
    return TESS_OK;
}

/* A message's output held until the slabs are checked: a copy of it. */
static int hold_copy(tess__tile_ctl *c, const tess__tile_box *box, const void *data, size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return tess_set_error(c->ctx, TESS_ERR_NOMEM, "tiles: out of memory for an output");
    memcpy(copy, data, len);
    return write_or_hold(c, box, copy);
}

int tess__tile_store_slabs_checked(tess__tile_ctl *c)
{
    c->slabs_checked = 1;
    int rc = TESS_OK;
    for (int i = 0; i < c->nheld; i++) {
        if (rc == TESS_OK) rc = c->job->write(&c->held[i].box, c->held[i].out, c->job->arg);
        free(c->held[i].out);
    }
    c->nheld = 0;
    return rc;
}

void tess__tile_store_free_held(tess__tile_ctl *c)
{
    for (int i = 0; i < c->nheld; i++) free(c->held[i].out);
    free(c->held);
    c->held = NULL;
    c->nheld = c->cap_held = 0;
}

void tess__tile_store_finish_if_done(tess__tile_ctl *c)
{
    /* Not before every slab was checked and found good: overlapping slabs
     * would count cells twice and end the run early. */
    if (c->gathered != c->total_cells || c->finished || c->finish_sent || !c->slabs_checked) return;
    c->finish_sent = 1;
    double at = tess__tile_now(c);
    for (int r = 0; r < c->nranks; r++) tess__tile_send(c, r, TILE_FINISH, &at, sizeof at, NULL, 0);
}

static void gathered(tess__tile_ctl *c, uint64_t cells)
{
    c->gathered += cells;
    tess__tile_store_finish_if_done(c);
}

int tess__tile_store_done(tess__tile_ctl *c, tess__tile_done *d)
{
    int rc = TESS_OK;
    tess__tile_chunk *k = d->chunk;
    if (k != NULL && (k->cells_left -= d->cells) == 0) {
        free(k->data);
        free(k);
    }
    if (d->status != TESS_OK) {
        free(d->out);
        return d->status;
    }
    if (d->out != NULL) rc = write_or_hold(c, &d->box, d->out);
    if (rc == TESS_OK && c->me == c->job->output_rank) gathered(c, d->cells);
    return rc;
}

uint8_t *tess__tile_output_place(const tess__tile_ctl *c, const tess__tile_box *box, void *whole)
{
    if (whole == NULL || !tess__tile_area_contiguous(&c->area)) return NULL;
    uint64_t first =
        (uint64_t)box->lo[0] * (tess__tile_area_cells(&c->area) / (uint64_t)c->area.extent[0]);
    return (uint8_t *)whole + first * c->job->out_bytes;
}

uint8_t *tess__tile_shared_output(const tess__tile_ctl *c)
{
    const tess__tile_reg *r = c->ctx->tile;
    return r && r->shared_out ? r->shared_out[c->args.job] : NULL;
}

static int box_in_area(const tess__tile_area *a, const tess__tile_box *box)
{
    if (box->ndims != a->ndims) return 0;
    for (int d = 0; d < a->ndims; d++)
        if (box->lo[d] < 0 || box->lo[d] >= box->hi[d] || box->hi[d] > a->extent[d]) return 0;
    return 1;
}

void tess__tile_store_on_shared_output(tess__tile_ctl *c, const tess__tile_box *box)
{
    uint8_t *image = tess__tile_shared_output(c);
    uint64_t cells = tess__tile_box_cells(box);
    size_t len = cells * c->job->out_bytes;
    if (image == NULL || !box_in_area(&c->area, box)) {
        tess__tile_abort_all(c, TESS_ERR_INVAL,
                             "tiles: a shared output names a box outside the area");
        return;
    }
    tess__shared_fence(); /* the notice before the output */
    c->rs.output_bytes_shared += len;
    const uint8_t *in_place = tess__tile_output_place(c, box, image);
    if (in_place != NULL) {
        tess__tile_store_on_output(c, box, in_place, len);
        return;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL) {
        tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory for an output");
        return;
    }
    tess__tile_copy_box(&c->area, box, c->job->out_bytes, image, 0, copy, 1);
    tess__tile_store_on_output(c, box, copy, len);
    free(copy);
}

void tess__tile_store_on_output(tess__tile_ctl *c, const tess__tile_box *box, const uint8_t *data,
                                size_t len)
{
    const tess_tile_job *job = c->job;
    uint64_t cells = tess__tile_box_cells(box);
    if (len != cells * job->out_bytes) {
        tess__tile_abort_all(c, TESS_ERR_INVAL, "tiles: a tile's output arrived with a wrong size");
        return;
    }
    if (job->write) {
        int rc = c->slabs_checked ? job->write(box, data, job->arg) : hold_copy(c, box, data, len);
        if (rc != TESS_OK) {
            tess__tile_abort_all(c, rc, tess_last_error(c->ctx));
            return;
        }
    } else if (job->output) {
        tess__tile_copy_box(&c->area, box, job->out_bytes, job->output, 0, (uint8_t *)data, 0);
    }
    gathered(c, cells);
}
