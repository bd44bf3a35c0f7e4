/*
 * store.c — the storage layer of the tiles face: where a tile's input comes
 * from and where its output goes (store.h).
 *
 * Every rank tells the others which input rows it holds (TILE_HELLO) and
 * starts at once; the slabs are checked when the last one is known.  Work
 * assignments move between ranks as small descriptors (a segment and the
 * rank that owns its input); the input itself moves only when a rank is
 * about to process it.  The rank fetches it straight from the owner, in
 * chunks of about --tile-chunk bytes and with at most two chunks in flight,
 * so the transfer runs as fast as the link takes it and no faster.  A
 * segment given away again before it was fetched carries its owner along,
 * so its data still moves once, from the owner to the rank that processes it.
 * Outputs are gathered on the output rank, which announces the end of the
 * run (TILE_FINISH) when it has them all.
 */
#include <stdlib.h>
#include <string.h>
#include "comm/comm.h"
#include "tile/store.h"

/* An output held for write() until the slabs were checked. */
struct tess__tile_held {
    tess__tile_box box;
    void *out;
};

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

/* ---- slabs ---- */

static int needs_data(const tess__tile_link *l)
{
    return l->job->in_bytes > 0 && l->job->read == NULL;
}

void tess__tile_store_own_slab(const tess__tile_store *s, int64_t *lo, int64_t *hi)
{
    *lo = s->slab_lo[s->link->me];
    *hi = s->slab_hi[s->link->me];
}

/* Rank r's slab lies in the area.  Each rank checks its own before any
 * work (its tiles must not reach outside the output), the others' when
 * their HELLO came. */
static int check_slab(const tess__tile_store *s, int r)
{
    const tess__tile_link *l = s->link;
    TESS_RETURN_IF(l->ctx,
                   needs_data(l) && (s->slab_lo[r] < 0 || s->slab_hi[r] < s->slab_lo[r] ||
                                     s->slab_hi[r] > l->area.extent[0]),
                   TESS_ERR_INVAL,
                   "tile job '%s': rank %d's input rows [%lld, %lld) are outside the area",
                   l->job->name, r, (long long)s->slab_lo[r], (long long)s->slab_hi[r]);
    return TESS_OK;
}

/* Every rank's slab: they must tile the first dimension exactly. */
static int check_slabs(const tess__tile_store *s)
{
    const tess__tile_link *l = s->link;
    if (!needs_data(l)) return TESS_OK;
    uint64_t rows = 0;
    for (int r = 0; r < l->nranks; r++) {
        int rc = check_slab(s, r);
        if (rc != TESS_OK) return rc;
        for (int q = 0; q < r; q++)
            TESS_RETURN_IF(l->ctx, s->slab_lo[r] < s->slab_hi[q] && s->slab_lo[q] < s->slab_hi[r],
                           TESS_ERR_INVAL, "tile job '%s': ranks %d and %d both own input rows",
                           l->job->name, q, r);
        rows += (uint64_t)(s->slab_hi[r] - s->slab_lo[r]);
    }
    TESS_RETURN_IF(l->ctx, rows == 0, TESS_ERR_INVAL,
                   "tile job '%s': in_bytes is %zu but no rank gave input (input with "
                   "input_lo/input_hi, or read)",
                   l->job->name, l->job->in_bytes);
    TESS_RETURN_IF(l->ctx, rows != (uint64_t)l->area.extent[0], TESS_ERR_INVAL,
                   "tile job '%s': the ranks own input for %llu of the %lld rows", l->job->name,
                   (unsigned long long)rows, (long long)l->area.extent[0]);
    return TESS_OK;
}

/* Tell every rank this rank's slab, and start at once: a rank's own work
 * needs nothing from the others.  Waiting for every HELLO first cost
 * milliseconds on ranks sharing cores (4 ranks on 2: a rank started its
 * first tile up to 9 ms after the run began).  The slabs are checked when
 * the last HELLO comes, and the end is not announced before. */
int tess__tile_store_hello(tess__tile_store *s)
{
    if (s->slab_lo == NULL || s->slab_hi == NULL) return TESS_ERR_NOMEM; /* setup failed */
    tess__tile_link *l = s->link;
    int rc = check_slab(s, l->me);
    if (rc != TESS_OK) return rc;
    int64_t rows[2] = {s->slab_lo[l->me], s->slab_hi[l->me]};
    for (int r = 0; r < l->nranks; r++)
        tess__tile_send(l, r, TILE_HELLO, rows, sizeof rows, NULL, 0);
    return l->status;
}

/* ---- input for stolen work ---- */

int tess__tile_store_needs_fetch(const tess__tile_store *s, const tess__tile_segment *seg)
{
    return needs_data(s->link) && seg->owner != s->link->me;
}

int tess__tile_store_add_pending(tess__tile_store *s, const tess__tile_segment *seg)
{
    if (tess__grow_items(&s->pending, &s->cap_pending, s->npending, sizeof *s->pending, 16) !=
        TESS_OK)
        return TESS_ERR_NOMEM;
    s->pending[s->npending++] = *seg;
    return TESS_OK;
}

uint64_t tess__tile_store_pending_cells(const tess__tile_store *s)
{
    uint64_t n = 0;
    for (int k = 0; k < s->npending; k++)
        n += tess__tile_segment_cells(&s->link->area, &s->pending[k]);
    return n;
}

uint64_t tess__tile_store_take_pending(tess__tile_store *s, uint64_t cells, tess__tile_segment *out,
                                       int max, int *n)
{
    uint64_t taken = 0;
    while (s->npending > 0 && taken < cells && *n < max) {
        tess__tile_segment *seg = &s->pending[s->npending - 1];
        taken += tess__tile_split_tail(&s->link->area, seg, cells - taken, &out[(*n)++]);
        if (tess__tile_box_cells(&seg->box) == 0) s->npending--;
    }
    return taken;
}

int tess__tile_store_fetching(const tess__tile_store *s) { return s->fetch_bytes_out > 0; }

/* The next box to fetch: about one chunk cut from the first pending
 * segment as a tile is (tess__tile_cut: within the tile bounds, so that
 * the tiles cut from the chunk later are rows of it); the pieces beside it
 * are fetched next. */
static int next_fetch(tess__tile_store *s, tess__tile_wire_seg *w)
{
    const tess__tile_link *l = s->link;
    tess__tile_segment head = s->pending[0], rest[TESS__TILE_MAX_DIMS];
    tess__tile_box box;
    int nrest;
    uint64_t cells = l->args.chunk / (l->job->in_bytes ? l->job->in_bytes : 1);
    tess__tile_cut(&l->area, &head, cells > 0 ? cells : 1, &box, rest, &nrest);
    *w = tess__tile_wire(&(tess__tile_segment){.box = box, .owner = head.owner});
    if (nrest > 0 && tess__tile_box_cells(&head.box) == 0) head = rest[--nrest];
    s->pending[0] = head;
    if (tess__tile_box_cells(&head.box) == 0)
        memmove(s->pending, s->pending + 1, (size_t)--s->npending * sizeof *s->pending);
    for (int k = 0; k < nrest; k++) /* appended, then moved to the front */
        if (tess__tile_store_add_pending(s, &rest[k]) != TESS_OK) return TESS_ERR_NOMEM;
    memmove(rest, s->pending + s->npending - nrest, (size_t)nrest * sizeof *rest);
    memmove(s->pending + nrest, s->pending, (size_t)(s->npending - nrest) * sizeof *s->pending);
    memcpy(s->pending, rest, (size_t)nrest * sizeof *rest);
    return TESS_OK;
}

void tess__tile_store_request(tess__tile_store *s)
{
    tess__tile_link *l = s->link;
    while (s->npending > 0 && s->fetch_bytes_out < 2 * l->args.chunk) {
        tess__tile_wire_seg w;
        if (next_fetch(s, &w) != TESS_OK) {
            tess__tile_abort_all(l, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
            return;
        }
        tess__tile_box box = tess__tile_wire_box(&w, l->area.ndims);
        s->fetch_bytes_out += tess__tile_box_cells(&box) * l->job->in_bytes;
        tess__tile_send(l, w.owner, TILE_FETCH, &w, sizeof w, NULL, 0);
    }
}

static int box_in_area(const tess__tile_area *a, const tess__tile_box *box);

static void answer_fetch(tess__tile_store *s, int src, const tess__tile_wire_seg *w)
{
    tess__tile_link *l = s->link;
    const tess_tile_job *job = l->job;
    tess__tile_box box = tess__tile_wire_box(w, l->area.ndims);
    uint64_t cells = tess__tile_box_cells(&box);
    size_t bytes = cells * job->in_bytes;
    int64_t lo = s->slab_lo[l->me];
    if (w->ndims != l->area.ndims || !box_in_area(&l->area, &box) || box.lo[0] < lo ||
        box.hi[0] > s->slab_hi[l->me]) {
        tess__tile_abort_all(l, TESS_ERR_INVAL,
                             "tiles: a rank asked for input this rank does not own");
        return;
    }
    if (tess__tile_box_whole_rows(&l->area, &box)) {
        const uint8_t *p = (const uint8_t *)job->input +
                           (size_t)(box.lo[0] - lo) * row_cells(&l->area) * job->in_bytes;
        tess__tile_send(l, src, TILE_DATA, w, sizeof *w, p, bytes);
    } else {
        uint8_t *buf = malloc(bytes ? bytes : 1);
        if (buf == NULL) {
            tess__tile_abort_all(l, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
            return;
        }
        tess__tile_copy_box(&l->area, &box, job->in_bytes, (uint8_t *)job->input, lo, buf, 1);
        tess__tile_send(l, src, TILE_DATA, w, sizeof *w, buf, bytes);
        free(buf);
    }
    s->bytes_out += bytes;
}

static void take_data(tess__tile_store *s, const tess__tile_wire_seg *w, const uint8_t *data,
                      size_t len)
{
    tess__tile_chunk *k = malloc(sizeof *k);
    uint8_t *copy = malloc(len ? len : 1);
    if (k == NULL || copy == NULL) {
        free(k);
        free(copy);
        tess__tile_abort_all(s->link, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
        return;
    }
    double t0 = tess_now();
    memcpy(copy, data, len);
    s->tcp_s += tess_now() - t0;
    tess__tile_segment seg = {
        .box = tess__tile_wire_box(w, s->link->area.ndims), .owner = w->owner, .chunk = k};
    *k = (tess__tile_chunk){.box = seg.box, .data = copy};
    k->cells_left = tess__tile_segment_cells(&s->link->area, &seg);
    s->fetch_bytes_out = s->fetch_bytes_out > len ? s->fetch_bytes_out - len : 0;
    s->bytes_in += len;
    s->ready(s->ready_arg, &seg);
}

void tess__tile_store_item_input(const tess__tile_store *s, const tess__tile_segment *seg,
                                 tess__tile_item *it)
{
    const tess__tile_link *l = s->link;
    const tess_tile_job *job = l->job;
    it->in = NULL;
    it->chunk = seg->chunk;
    if (seg->chunk != NULL) {
        tess__tile_chunk *k = seg->chunk; /* its tiles are rows of it (tess__tile_shape) */
        uint64_t cross = tess__tile_box_cells(&k->box) / (uint64_t)(k->box.hi[0] - k->box.lo[0]);
        it->in = k->data + (size_t)(it->box.lo[0] - k->box.lo[0]) * cross * job->in_bytes;
    } else if (needs_data(l) && tess__tile_box_whole_rows(&l->area, &it->box)) {
        it->in = (const uint8_t *)job->input +
                 (size_t)(it->box.lo[0] - s->slab_lo[l->me]) * row_cells(&l->area) * job->in_bytes;
    }
}

/* ---- outputs ---- */

/* The one call of write(): its time is the statistics' OUT. */
static int write_out(tess__tile_store *s, const tess__tile_box *box, const void *out)
{
    const tess_tile_job *job = s->link->job;
    double t0 = tess_now();
    int rc = job->write(box, out, job->write_arg ? job->write_arg : job->arg);
    s->out_s += tess_now() - t0;
    return rc;
}

/*
 * Outputs for a write() callback: the callback sees a cell only after every
 * rank's slab was checked (a rank starts before the others' slabs are
 * known, and overlapping slabs would hand it cells twice).  Until then they
 * are held, in the order they came.  Takes `out` (malloc'ed).
 */
static int write_or_hold(tess__tile_store *s, const tess__tile_box *box, void *out)
{
    if (s->slabs_checked) {
        int rc = write_out(s, box, out);
        free(out);
        return rc;
    }
    if (tess__grow_items(&s->held, &s->cap_held, s->nheld, sizeof *s->held, 16) != TESS_OK) {
        free(out);
        return tess_set_error(s->link->ctx, TESS_ERR_NOMEM, "tiles: out of memory for an output");
    }
    s->held[s->nheld++] = (tess__tile_held){*box, out};
    return TESS_OK;
}

/* A message's output held until the slabs are checked: a copy of it. */
static int hold_copy(tess__tile_store *s, const tess__tile_box *box, const void *data, size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return tess_set_error(s->link->ctx, TESS_ERR_NOMEM, "tiles: out of memory for an output");
    memcpy(copy, data, len);
    return write_or_hold(s, box, copy);
}

/* Every slab checked: hand the held outputs to write(), in order; later
 * ones go straight to it.  TESS_OK or write()'s error. */
static int release_held(tess__tile_store *s)
{
    s->slabs_checked = 1;
    int rc = TESS_OK;
    for (int i = 0; i < s->nheld; i++) {
        if (rc == TESS_OK) rc = write_out(s, &s->held[i].box, s->held[i].out);
        free(s->held[i].out);
    }
    s->nheld = 0;
    return rc;
}

/* On the output rank: every output is in and every slab was checked, so
 * tell all ranks the run ended (once). */
static void finish_if_done(tess__tile_store *s)
{
    /* Not before every slab was checked and found good: overlapping slabs
     * would count cells twice and end the run early. */
    if (s->gathered != s->total_cells || s->finished || s->finish_sent || !s->slabs_checked) return;
    s->finish_sent = 1;
    tess__tile_link *l = s->link;
    double at = tess__tile_now(l);
    for (int r = 0; r < l->nranks; r++) tess__tile_send(l, r, TILE_FINISH, &at, sizeof at, NULL, 0);
}

static void gathered(tess__tile_store *s, uint64_t cells)
{
    s->gathered += cells;
    finish_if_done(s);
}

int tess__tile_store_done(tess__tile_store *s, tess__tile_done *d)
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
    if (d->out != NULL) rc = write_or_hold(s, &d->box, d->out);
    if (rc == TESS_OK && s->link->me == s->link->job->output_rank) gathered(s, d->cells);
    return rc;
}

uint8_t *tess__tile_output_place(const tess__tile_link *l, const tess__tile_box *box, void *whole)
{
    if (whole == NULL || !tess__tile_box_whole_rows(&l->area, box)) return NULL;
    uint64_t first = (uint64_t)box->lo[0] * row_cells(&l->area);
    return (uint8_t *)whole + first * l->job->out_bytes;
}

uint8_t *tess__tile_shared_output(const tess__tile_link *l)
{
    const tess__tile_reg *r = l->ctx->tile;
    return r && r->shared_out ? r->shared_out[l->args.job] : NULL;
}

static int box_in_area(const tess__tile_area *a, const tess__tile_box *box)
{
    if (box->ndims != a->ndims) return 0;
    for (int d = 0; d < a->ndims; d++)
        if (box->lo[d] < 0 || box->lo[d] >= box->hi[d] || box->hi[d] > a->extent[d]) return 0;
    return 1;
}

static void take_output(tess__tile_store *s, const tess__tile_box *box, const uint8_t *data,
                        size_t len)
{
    tess__tile_link *l = s->link;
    const tess_tile_job *job = l->job;
    uint64_t cells = tess__tile_box_cells(box);
    if (len != cells * job->out_bytes) {
        tess__tile_abort_all(l, TESS_ERR_INVAL, "tiles: a tile's output arrived with a wrong size");
        return;
    }
    if (job->write) {
        int rc = s->slabs_checked ? write_out(s, box, data) : hold_copy(s, box, data, len);
        if (rc != TESS_OK) {
            tess__tile_abort_all(l, rc, NULL);
            return;
        }
    } else if (job->output) {
        double t0 = tess_now();
        tess__tile_copy_box(&l->area, box, job->out_bytes, job->output, 0, (uint8_t *)data, 0);
        s->out_s += tess_now() - t0;
    }
    gathered(s, cells);
}

/* The same for a tile whose output a rank of this node wrote into the
 * shared image. */
static void take_shared_output(tess__tile_store *s, const tess__tile_box *box)
{
    tess__tile_link *l = s->link;
    uint8_t *image = tess__tile_shared_output(l);
    uint64_t cells = tess__tile_box_cells(box);
    size_t len = cells * l->job->out_bytes;
    if (image == NULL || !box_in_area(&l->area, box)) {
        tess__tile_abort_all(l, TESS_ERR_INVAL,
                             "tiles: a shared output names a box outside the area");
        return;
    }
    tess__shared_fence(); /* the notice before the output */
    s->output_bytes_shared += len;
    const uint8_t *in_place = tess__tile_output_place(l, box, image);
    if (in_place != NULL) {
        take_output(s, box, in_place, len);
        return;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL) {
        tess__tile_abort_all(l, TESS_ERR_NOMEM, "tiles: out of memory for an output");
        return;
    }
    double t0 = tess_now();
    tess__tile_copy_box(&l->area, box, l->job->out_bytes, image, 0, copy, 1);
    s->out_s += tess_now() - t0;
    take_output(s, box, copy, len);
    free(copy);
}

/* ---- messages ---- */

/* Every rank's slab is known: check that they tile the area, give write()
 * the outputs held so far, and announce the end if the output was complete
 * before. */
static void on_all_hellos(tess__tile_store *s)
{
    double t0 = tess_now();
    int rc = check_slabs(s);
    s->init_s += tess_now() - t0;
    if (rc == TESS_OK) rc = release_held(s);
    if (rc != TESS_OK) tess__tile_abort_all(s->link, rc, NULL);
    else finish_if_done(s);
}

static void on_hello(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_store *s = state;
    int64_t rows[2];
    if (!tess__tile_unpack(p, len, rows, sizeof rows)) return;
    if (src != s->link->me) { /* this rank's own: set at setup, read by its processors */
        s->slab_lo[src] = rows[0];
        s->slab_hi[src] = rows[1];
    }
    if (++s->hellos == s->link->nranks) on_all_hellos(s);
}

static void on_fetch(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_store *s = state;
    tess__tile_wire_seg w;
    double t0 = tess_now();
    if (tess__tile_unpack(p, len, &w, sizeof w)) answer_fetch(s, src, &w);
    s->tcp_s += tess_now() - t0;
}

static void on_data(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_wire_seg w;
    (void)src;
    if (tess__tile_unpack(p, len, &w, sizeof w)) take_data(state, &w, p + sizeof w, len - sizeof w);
}

static void on_output(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_box b;
    (void)src;
    if (tess__tile_unpack(p, len, &b, sizeof b))
        take_output(state, &b, p + sizeof b, len - sizeof b);
}

static void on_shared_output(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_box box;
    (void)src;
    if (tess__tile_unpack(p, len, &box, sizeof box)) take_shared_output(state, &box);
}

static void on_finish(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_store *s = state;
    (void)src;
    if (len >= sizeof s->finish_at) memcpy(&s->finish_at, p, sizeof s->finish_at);
    s->finished = 1;
}

int tess__tile_store_init(tess__tile_store *s, tess__tile_link *l, tess__tile_ready_fn *ready,
                          void *ready_arg)
{
    memset(s, 0, sizeof *s);
    s->link = l;
    s->ready = ready;
    s->ready_arg = ready_arg;
    /* rows a restored checkpoint did are not computed, nor gathered */
    s->total_cells =
        tess__tile_area_cells(&l->area) - tess__tile_area_done_cells(&l->area, l->job->done);
    s->slab_lo = calloc((size_t)l->nranks, sizeof *s->slab_lo);
    s->slab_hi = calloc((size_t)l->nranks, sizeof *s->slab_hi);
    TESS_RETURN_IF(l->ctx, !s->slab_lo || !s->slab_hi, TESS_ERR_NOMEM, "out of memory");
    if (l->job->input != NULL) {
        s->slab_lo[l->me] = l->job->input_lo;
        s->slab_hi[l->me] = l->job->input_hi;
    }
    tess__tile_link_route(l, TILE_HELLO, on_hello, s);
    tess__tile_link_route(l, TILE_FETCH, on_fetch, s);
    tess__tile_link_route(l, TILE_DATA, on_data, s);
    tess__tile_link_route(l, TILE_OUTPUT, on_output, s);
    tess__tile_link_route(l, TILE_OUTPUT_SHARED, on_shared_output, s);
    tess__tile_link_route(l, TILE_FINISH, on_finish, s);
    return TESS_OK;
}

void tess__tile_store_free(tess__tile_store *s)
{
    for (int i = 0; i < s->nheld; i++) free(s->held[i].out);
    free(s->held);
    free(s->pending);
    free(s->slab_lo);
    free(s->slab_hi);
    memset(s, 0, sizeof *s);
}
