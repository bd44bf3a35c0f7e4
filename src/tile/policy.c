/*
 * policy.c — how a controller hands its rank's work to its processors,
 * per --policy:
 *
 *   apc        the APC+ controller (plan.c): bootstrap, queues of at most T
 *              seconds in tiles of each processor's best size, Algorithm 2
 *              near the end;
 *   dd:SIZE    demand-driven: a fixed tile whenever a processor finished
 *              one, with one more queued (DataCutter's default);
 *   static:SIZE  the rank's work split into equal parts per processor
 *              upfront, processed in fixed tiles, never rebalanced
 *              (MapReduce's static split);
 *   ws:SIZE    per-processor deques of fixed tiles; a processor whose deque
 *              is empty steals half of another's (KAAPI, Cilk).
 *
 * apc, dd and ws also give work to other ranks when asked (steal.c).
 */
#include <stdlib.h>
#include <string.h>
#include "tile/tile_internal.h"

static int fixed(const tess__tile_ctl *c) { return c->policy.kind != TILE_APC; }
static int listed(const tess__tile_ctl *c)
{
    return c->policy.kind == TILE_STATIC || c->policy.kind == TILE_WS;
}

/* Rows [lo, hi) of every column, owned by `owner`, as work. */
static int add_rows(tess__tile_ctl *c, int64_t lo, int64_t hi, int owner)
{
    for (int64_t col = 0; col < c->area.ncolumns && lo < hi; col++) {
        tess__tile_segment s = {.column = col, .r0 = lo, .r1 = hi, .owner = owner};
        int rc = tess__tile_plan_push(&c->plan, &s);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static int list_append(tess__tile_ctl *c, int proc, const tess__tile_segment *s)
{
    int n = c->list_len[proc];
    if ((n & (n - 1)) == 0 && n >= 16) { /* grow at powers of two */
        tess__tile_segment *l = realloc(c->lists[proc], (size_t)n * 2 * sizeof *l);
        if (l == NULL) return TESS_ERR_NOMEM;
        c->lists[proc] = l;
    } else if (n == 0) {
        free(c->lists[proc]);
        c->lists[proc] = malloc(16 * sizeof *c->lists[proc]);
        c->list_head[proc] = 0;
        if (c->lists[proc] == NULL) return TESS_ERR_NOMEM;
    }
    c->lists[proc][c->list_len[proc]++] = *s;
    return TESS_OK;
}

/* static, ws: cut the plan's work into fixed tiles, dealt to processors in
 * equal contiguous parts. */
static int deal_fixed(tess__tile_ctl *c)
{
    uint64_t total = c->plan.remaining, done = 0;
    tess__tile_box box;
    uint64_t got;
    while ((got = tess__tile_plan_cut(&c->plan, c->policy.cells, &box)) > 0) {
        int proc = (int)((done * (uint64_t)c->nprocs) / (total ? total : 1));
        if (proc >= c->nprocs) proc = c->nprocs - 1;
        int rc = list_append(c, proc, &c->plan.last);
        if (rc != TESS_OK) return rc;
        done += got;
    }
    return TESS_OK;
}

int tess__tile_policy_setup(tess__tile_ctl *c)
{
    int rc =
        tess__tile_plan_init_empty(&c->plan, &c->area, c->nprocs, c->args.queue_s, c->args.boot_s);
    if (rc != TESS_OK) return rc;
    if (fixed(c))
        for (int i = 0; i < c->nprocs; i++) c->plan.procs[i].boot.done = 1; /* no bootstrap */
    c->lists = calloc((size_t)c->nprocs, sizeof *c->lists);
    c->list_len = calloc((size_t)c->nprocs, sizeof *c->list_len);
    c->list_head = calloc((size_t)c->nprocs, sizeof *c->list_head);
    if (!c->lists || !c->list_len || !c->list_head) return TESS_ERR_NOMEM;
    const tess_tile_job *job = c->job;
    if (job->in_bytes == 0 || job->read) { /* input anywhere: an equal share of rows */
        int64_t e = c->area.extent[0];
        rc = add_rows(c, e * c->me / c->nranks, e * (c->me + 1) / c->nranks, c->me);
    } else {
        rc = add_rows(c, c->slab_lo[c->me], c->slab_hi[c->me], c->me);
    }
    c->received = c->plan.remaining;
    if (rc == TESS_OK && listed(c)) rc = deal_fixed(c);
    return rc;
}

static double estimate(const tess__tile_ctl *c, int proc, uint64_t cells)
{
    double rate = tess__tile_model_rate(&c->plan.procs[proc].model, cells);
    if (rate <= 0) tess__tile_model_best_size(&c->plan.procs[proc].model, &rate);
    return rate > 0 ? (double)cells / rate : 0.0;
}

static int hand(tess__tile_ctl *c, int proc, const tess__tile_segment *seg,
                const tess__tile_box *box, uint64_t cells, double est, int counted)
{
    tess__tile_item it = {.box = *box, .cells = cells, .est = est, .column = seg->column};
    tess__tile_store_item_input(c, seg, &it);
    if (!counted) { /* the plan counts what plan_next hands out itself */
        c->plan.procs[proc].queued_s += est;
        c->plan.procs[proc].queued_tiles++;
    }
    return tess__tile_proc_push(&c->procs[proc], &it);
}

static void seg_box(const tess__tile_ctl *c, const tess__tile_segment *s, tess__tile_box *box)
{
    tess__tile_column_box(&c->area, s->column, box);
    box->lo[0] = s->r0;
    box->hi[0] = s->r1;
}

/* ws: take the back half of the longest other deque. */
static void ws_steal(tess__tile_ctl *c, int thief)
{
    int victim = -1, most = 0;
    for (int i = 0; i < c->nprocs; i++) {
        int left = c->list_len[i] - c->list_head[i];
        if (i != thief && left > most) most = left, victim = i;
    }
    if (victim < 0) return;
    int take = most / 2 > 0 ? most / 2 : 1;
    int from = c->list_len[victim] - take;
    for (int k = 0; k < take; k++)
        if (list_append(c, thief, &c->lists[victim][from + k]) != TESS_OK) return;
    c->list_len[victim] = from;
}

static int dispatch_listed(tess__tile_ctl *c)
{
    for (int i = 0; i < c->nprocs; i++) {
        while (c->plan.procs[i].queued_tiles < 2) {
            if (c->list_head[i] == c->list_len[i] && c->policy.kind == TILE_WS) ws_steal(c, i);
            if (c->list_head[i] == c->list_len[i]) break;
            tess__tile_segment s = c->lists[i][c->list_head[i]++];
            if (c->list_head[i] == c->list_len[i]) c->list_head[i] = c->list_len[i] = 0;
            tess__tile_box box;
            seg_box(c, &s, &box);
            uint64_t cells = tess__tile_box_cells(&box);
            int rc = hand(c, i, &s, &box, cells, estimate(c, i, cells), 0);
            if (rc != TESS_OK) return rc;
        }
    }
    return TESS_OK;
}

static int dispatch_dd(tess__tile_ctl *c)
{
    for (int i = 0; i < c->nprocs; i++) {
        while (c->plan.procs[i].queued_tiles < 2) {
            tess__tile_box box;
            uint64_t cells = tess__tile_plan_cut(&c->plan, c->policy.cells, &box);
            if (cells == 0) return TESS_OK;
            int rc = hand(c, i, &c->plan.last, &box, cells, estimate(c, i, cells), 0);
            if (rc != TESS_OK) return rc;
        }
    }
    return TESS_OK;
}

void tess__tile_policy_note_running(tess__tile_ctl *c)
{
    for (int i = 0; i < c->nprocs; i++)
        c->plan.procs[i].running_s = tess__tile_proc_running(&c->procs[i]);
}

static int dispatch_apc(tess__tile_ctl *c)
{
    int proc;
    tess__tile_box box;
    uint64_t cells;
    double est;
    tess__tile_policy_note_running(c);
    while (tess__tile_plan_next(&c->plan, &proc, &box, &cells, &est)) {
        int rc = hand(c, proc, &c->plan.last, &box, cells, est, 1);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

void tess__tile_policy_dispatch(tess__tile_ctl *c)
{
    int rc = listed(c)                   ? dispatch_listed(c)
             : c->policy.kind == TILE_DD ? dispatch_dd(c)
                                         : dispatch_apc(c);
    if (rc != TESS_OK)
        tess__tile_abort_all(c, rc, "tiles: out of memory for the processors' queues");
}

void tess__tile_policy_done(tess__tile_ctl *c, const tess__tile_done *d)
{
    tess__tile_proc *q = &c->plan.procs[d->proc];
    if (!q->boot.done && c->ntried[d->proc] < 16)
        c->tried[d->proc][c->ntried[d->proc]++] = d->cells;
    tess__tile_plan_done(&c->plan, d->proc, d->cells, d->est, d->seconds);
}

int tess__tile_policy_add_work(tess__tile_ctl *c, const tess__tile_segment *s)
{
    if (c->policy.kind != TILE_WS) return tess__tile_plan_push(&c->plan, s);
    /* ws: cut into fixed tiles, dealt round robin */
    int rc = tess__tile_plan_push(&c->plan, s);
    for (int k = 0; rc == TESS_OK; k++) {
        tess__tile_box box;
        if (tess__tile_plan_cut(&c->plan, c->policy.cells, &box) == 0) break;
        rc = list_append(c, k % c->nprocs, &c->plan.last);
    }
    return rc;
}

uint64_t tess__tile_policy_left(const tess__tile_ctl *c)
{
    uint64_t n = c->plan.remaining;
    for (int i = 0; listed(c) && i < c->nprocs; i++)
        for (int k = c->list_head[i]; k < c->list_len[i]; k++)
            n += tess__tile_segment_cells(&c->area, &c->lists[i][k]);
    for (int k = 0; k < c->npending; k++) n += tess__tile_segment_cells(&c->area, &c->pending[k]);
    return n;
}

static int give_pending(tess__tile_ctl *c, uint64_t cells, tess__tile_segment *out, int max, int *n,
                        uint64_t *taken)
{
    while (c->npending > 0 && *taken < cells && *n < max) {
        tess__tile_segment *s = &c->pending[c->npending - 1];
        *taken += tess__tile_split_tail(&c->area, s, cells - *taken, &out[(*n)++]);
        if (s->r1 <= s->r0) c->npending--;
    }
    return TESS_OK;
}

/* ws: whole fixed tiles from the back of the longest deques. */
static void give_listed(tess__tile_ctl *c, uint64_t cells, tess__tile_segment *out, int max, int *n,
                        uint64_t *taken)
{
    while (*taken < cells && *n < max) {
        int victim = -1, most = 1;
        for (int i = 0; i < c->nprocs; i++) {
            int left = c->list_len[i] - c->list_head[i];
            if (left > most) most = left, victim = i;
        }
        if (victim < 0) return;
        tess__tile_segment *s = &c->lists[victim][c->list_len[victim] - 1];
        if (s->chunk != NULL || s->owner != c->me) return; /* its data moved here: keep it */
        out[(*n)++] = *s;
        *taken += tess__tile_segment_cells(&c->area, s);
        c->list_len[victim]--;
    }
}

int tess__tile_policy_give(tess__tile_ctl *c, uint64_t cells, tess__tile_segment **out, int *n)
{
    *n = 0;
    *out = NULL;
    if (c->policy.kind == TILE_STATIC || cells == 0) return TESS_OK;
    int max = 256;
    tess__tile_segment *segs = malloc((size_t)max * sizeof *segs);
    if (segs == NULL) return TESS_ERR_NOMEM;
    uint64_t taken = 0;
    give_pending(c, cells, segs, max, n, &taken);
    if (c->policy.kind == TILE_WS) {
        give_listed(c, cells, segs, max, n, &taken);
    } else if (taken < cells && *n < max) {
        int got = 0;
        taken +=
            tess__tile_plan_take_tail(&c->plan, cells - taken, c->me, segs + *n, max - *n, &got);
        *n += got;
    }
    *out = segs;
    return TESS_OK;
}
