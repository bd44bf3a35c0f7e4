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
 *              is empty steals half of another's (KAAPI, Cilk);
 *   capc       the centralised APC: rank 0 plans for every rank's
 *              processors (policy_central.c); here only the queues' counts.
 *
 * apc, dd and ws also give work to other ranks when asked (steal.c).
 */
#include <stdlib.h>
#include <string.h>
#include "tile/policy.h"

static int fixed(const tess__tile_policy *pol) { return pol->spec.kind != TILE_APC; }
static int listed(const tess__tile_policy *pol)
{
    return pol->spec.kind == TILE_STATIC || pol->spec.kind == TILE_WS;
}

int tess__tile_policy_shares(const tess__tile_policy *pol) { return pol->spec.kind != TILE_STATIC; }

/* ---- setup ---- */

/* Rows [lo, hi), owned by `owner`, as work: the boxes a restored
 * checkpoint has not done (job->done), before any tile is sized. */
static int add_rows(tess__tile_policy *pol, int64_t lo, int64_t hi, int owner)
{
    return tess__tile_plan_add_rows(&pol->plan, pol->link->job->done, lo, hi, owner);
}

static int list_append(tess__tile_policy *pol, int proc, const tess__tile_segment *s)
{
    int n = pol->list_len[proc];
    if ((n & (n - 1)) == 0 && n >= 16) { /* grow at powers of two */
        tess__tile_segment *l = realloc(pol->lists[proc], (size_t)n * 2 * sizeof *l);
        if (l == NULL) return TESS_ERR_NOMEM;
        pol->lists[proc] = l;
    } else if (n == 0) {
        free(pol->lists[proc]);
        pol->lists[proc] = malloc(16 * sizeof *pol->lists[proc]);
        pol->list_head[proc] = 0;
        if (pol->lists[proc] == NULL) return TESS_ERR_NOMEM;
    }
    pol->lists[proc][pol->list_len[proc]++] = *s;
    return TESS_OK;
}

/* static, ws: cut the plan's work into fixed tiles, dealt to processors in
 * equal contiguous parts. */
static int deal_fixed(tess__tile_policy *pol)
{
    int nprocs = pol->procs->n;
    uint64_t total = pol->plan.remaining, done = 0;
    tess__tile_box box;
    uint64_t got;
    while ((got = tess__tile_plan_cut(&pol->plan, pol->spec.cells, &box)) > 0) {
        int proc = (int)((done * (uint64_t)nprocs) / (total ? total : 1));
        if (proc >= nprocs) proc = nprocs - 1;
        int rc = list_append(pol, proc, &pol->plan.last);
        if (rc != TESS_OK) return rc;
        done += got;
    }
    return TESS_OK;
}

/* The rank's own work: its slab, or an equal share of the rows when the
 * input is anywhere (none, or read). */
static int add_own_work(tess__tile_policy *pol)
{
    const tess__tile_link *l = pol->link;
    if (l->job->in_bytes == 0 || l->job->read) {
        int64_t e = l->area.extent[0];
        return add_rows(pol, e * l->me / l->nranks, e * (l->me + 1) / l->nranks, l->me);
    }
    int64_t lo, hi;
    tess__tile_store_own_slab(pol->store, &lo, &hi);
    return add_rows(pol, lo, hi, l->me);
}

/* TILE_BOOT: a rank's bootstrap ended at `size`; once every rank's did,
 * tiles are at least the largest of them. */
static void on_boot(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_policy *pol = state;
    (void)src;
    uint64_t size = 0;
    if (len >= sizeof size) memcpy(&size, p, sizeof size);
    if (size > pol->boot_agreed) pol->boot_agreed = size;
    if (++pol->boots == pol->link->nranks)
        pol->plan.floor_cells =
            pol->boot_agreed < pol->plan.max_cells ? pol->boot_agreed : pol->plan.max_cells;
}

int tess__tile_policy_init(tess__tile_policy *pol, tess__tile_link *l, tess__tile_store *s,
                           tess__tile_procs *procs, const tess__tile_policy_spec *spec)
{
    pol->link = l;
    pol->store = s;
    pol->procs = procs;
    pol->spec = *spec;
    tess__tile_link_route(l, TILE_BOOT, on_boot, pol);
    int n = procs->n;
    int rc = tess__tile_plan_init_empty(&pol->plan, &l->area, n, l->args.queue_s, l->args.boot_s);
    if (rc != TESS_OK) return rc;
    for (int i = 0; i < n; i++) pol->plan.procs[i].starting = procs->p[i].starting;
    if (fixed(pol))
        for (int i = 0; i < n; i++) pol->plan.procs[i].boot.done = 1; /* no bootstrap */
    pol->lists = calloc((size_t)n, sizeof *pol->lists);
    pol->list_len = calloc((size_t)n, sizeof *pol->list_len);
    pol->list_head = calloc((size_t)n, sizeof *pol->list_head);
    if (!pol->lists || !pol->list_len || !pol->list_head) return TESS_ERR_NOMEM;
    rc = pol->spec.kind == TILE_CAPC ? TESS_OK : add_own_work(pol); /* capc: rank 0 plans */
    pol->own_cells = pol->plan.remaining;
    if (rc == TESS_OK && listed(pol)) rc = deal_fixed(pol);
    return rc;
}

void tess__tile_policy_free(tess__tile_policy *pol)
{
    tess__tile_plan_free(&pol->plan);
    for (int i = 0; pol->lists && i < pol->procs->n; i++) free(pol->lists[i]);
    free(pol->lists);
    free(pol->list_len);
    free(pol->list_head);
    pol->lists = NULL;
    pol->list_len = pol->list_head = NULL;
}

/* ---- handing out tiles ---- */

static double estimate(const tess__tile_policy *pol, int proc, uint64_t cells)
{
    double rate = tess__tile_model_rate(&pol->plan.procs[proc].model, cells);
    if (rate <= 0) tess__tile_model_best_size(&pol->plan.procs[proc].model, &rate);
    return rate > 0 ? (double)cells / rate : 0.0;
}

static int hand(tess__tile_policy *pol, int proc, const tess__tile_segment *seg,
                const tess__tile_box *box, uint64_t cells, double est, int counted)
{
    tess__tile_item it = {.box = *box, .cells = cells, .est = est};
    tess__tile_store_item_input(pol->store, seg, &it);
    if (!counted) { /* the plan counts what plan_next hands out itself */
        pol->plan.procs[proc].queued_s += est;
        pol->plan.procs[proc].queued_tiles++;
    }
    return tess__tile_proc_push(&pol->procs->p[proc], &it);
}

/* ws: take the back half of the longest other deque. */
static void ws_steal(tess__tile_policy *pol, int thief)
{
    int victim = -1, most = 0;
    for (int i = 0; i < pol->procs->n; i++) {
        int left = pol->list_len[i] - pol->list_head[i];
        if (i != thief && left > most) most = left, victim = i;
    }
    if (victim < 0) return;
    int take = most / 2 > 0 ? most / 2 : 1;
    int from = pol->list_len[victim] - take;
    for (int k = 0; k < take; k++)
        if (list_append(pol, thief, &pol->lists[victim][from + k]) != TESS_OK) return;
    pol->list_len[victim] = from;
}

static int dispatch_listed(tess__tile_policy *pol)
{
    for (int i = 0; i < pol->procs->n; i++) {
        while (!pol->plan.procs[i].starting && pol->plan.procs[i].queued_tiles < 2) {
            if (pol->list_head[i] == pol->list_len[i] && pol->spec.kind == TILE_WS)
                ws_steal(pol, i);
            if (pol->list_head[i] == pol->list_len[i]) break;
            tess__tile_segment s = pol->lists[i][pol->list_head[i]++];
            if (pol->list_head[i] == pol->list_len[i]) pol->list_head[i] = pol->list_len[i] = 0;
            tess__tile_box box = s.box;
            uint64_t cells = tess__tile_box_cells(&box);
            int rc = hand(pol, i, &s, &box, cells, estimate(pol, i, cells), 0);
            if (rc != TESS_OK) return rc;
        }
    }
    return TESS_OK;
}

static int dispatch_dd(tess__tile_policy *pol)
{
    for (int i = 0; i < pol->procs->n; i++) {
        while (!pol->plan.procs[i].starting && pol->plan.procs[i].queued_tiles < 2) {
            tess__tile_box box;
            uint64_t cells = tess__tile_plan_cut(&pol->plan, pol->spec.cells, &box);
            if (cells == 0) return TESS_OK;
            int rc = hand(pol, i, &pol->plan.last, &box, cells, estimate(pol, i, cells), 0);
            if (rc != TESS_OK) return rc;
        }
    }
    return TESS_OK;
}

/* Tell the plan how long each processor's running tile has run (running_s). */
static void note_running(tess__tile_policy *pol)
{
    for (int i = 0; i < pol->procs->n; i++)
        pol->plan.procs[i].running_s = tess__tile_proc_running(&pol->procs->p[i]);
}

static int dispatch_apc(tess__tile_policy *pol)
{
    int proc;
    tess__tile_box box;
    uint64_t cells;
    double est;
    note_running(pol);
    while (tess__tile_plan_next(&pol->plan, &proc, &box, &cells, &est)) {
        int rc = hand(pol, proc, &pol->plan.last, &box, cells, est, 1);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

void tess__tile_policy_dispatch(tess__tile_policy *pol)
{
    int rc = listed(pol)                 ? dispatch_listed(pol)
             : pol->spec.kind == TILE_DD ? dispatch_dd(pol)
                                         : dispatch_apc(pol);
    if (rc != TESS_OK)
        tess__tile_abort_all(pol->link, rc, "tiles: out of memory for the processors' queues");
}

int tess__tile_policy_idle(const tess__tile_policy *pol)
{
    for (int i = 0; i < pol->procs->n; i++)
        if (pol->plan.procs[i].queued_tiles > 0) return 0;
    return 1;
}

void tess__tile_policy_check_boot(tess__tile_policy *pol)
{
    if (pol->booted) return;
    uint64_t largest = 0;
    for (int i = 0; i < pol->procs->n; i++) {
        if (pol->plan.procs[i].starting) continue; /* it bootstraps when it is ready */
        if (!pol->plan.procs[i].boot.done) return;
        uint64_t s = pol->plan.procs[i].boot.next;
        if (s > largest) largest = s;
    }
    tess__tile_link *l = pol->link;
    pol->booted = 1;
    pol->boot_seconds = pol->spec.kind == TILE_APC ? tess__tile_now(l) : 0.0;
    for (int r = 0; r < l->nranks; r++)
        tess__tile_send(l, r, TILE_BOOT, &largest, sizeof largest, NULL, 0);
}

/* ---- finished tiles ---- */

/* Processor proc's unstarted tiles go back to the work, for the plan to
 * share anew. */
static void recall_queue(tess__tile_policy *pol, int proc)
{
    tess__tile_item back[64];
    int n = tess__tile_proc_recall(&pol->procs->p[proc], back, 64);
    for (int k = 0; k < n; k++) {
        tess__tile_segment s = {.box = back[k].box, .owner = pol->link->me, .chunk = back[k].chunk};
        tess__tile_plan_recalled(&pol->plan, proc, back[k].est);
        if (tess__tile_plan_give_back(&pol->plan, &s) != TESS_OK)
            tess__tile_abort_all(pol->link, TESS_ERR_NOMEM, "tiles: out of memory");
    }
}

/* A tile took far longer than its processor's model said: the processor
 * slowed down (another job took its core, a GPU throttled).  Its queue,
 * estimated at the old speed, would now end long after everyone else's, so
 * its unstarted tiles go back to the work and the plan shares them anew. */
static void recall_if_slowed(tess__tile_policy *pol, const tess__tile_done *d)
{
    if (pol->spec.kind != TILE_APC || !(d->est > 0) || d->seconds < TESS__TILE_SLOWED * d->est)
        return;
    recall_queue(pol, d->proc);
}

/*
 * The end game, on this rank (tess__tile_plan_victim): processor `idle`
 * has nothing queued and no work is left to hand out, while another still
 * has tiles it has not started (handed out on estimates, and the last
 * one's processor ran slower than estimated); or a processor's queue ends
 * well after the common finish time (a fast processor arrived late).  That
 * queue goes back to the work, so that the plan shares it anew; without
 * this the idle processor waited for up to a tile (3-5 ms in the texture
 * runs), and a late GPU for the CPUs' whole queues.
 */
static void rebalance(tess__tile_policy *pol, int idle)
{
    if (pol->spec.kind != TILE_APC) return;
    note_running(pol);
    for (int victim, k = 0; k < pol->procs->n; k++) {
        if ((victim = tess__tile_plan_victim(&pol->plan, idle)) < 0) return;
        recall_queue(pol, victim);
        note_running(pol);
    }
}

void tess__tile_policy_done(tess__tile_policy *pol, const tess__tile_done *d)
{
    recall_if_slowed(pol, d);
    tess__tile_proc *q = &pol->plan.procs[d->proc];
    if (!q->boot.done && pol->ntried[d->proc] < 16)
        pol->tried[d->proc][pol->ntried[d->proc]++] = d->cells;
    tess__tile_plan_done(&pol->plan, d->proc, d->cells, d->est, d->seconds);
    rebalance(pol, d->proc);
}

void tess__tile_policy_started(tess__tile_policy *pol, int proc, double seconds)
{
    tess__tile_proc *q = &pol->plan.procs[proc];
    q->starting = 0;
    q->finished = 1; /* the start-up was its warm-up: its first tile is measured */
    pol->startup_s[proc] = seconds;
}

/* ---- work between ranks ---- */

int tess__tile_policy_add_work(tess__tile_policy *pol, const tess__tile_segment *s)
{
    if (pol->spec.kind != TILE_WS) return tess__tile_plan_push(&pol->plan, s);
    /* ws: cut into fixed tiles, dealt round robin */
    int rc = tess__tile_plan_push(&pol->plan, s);
    for (int k = 0; rc == TESS_OK; k++) {
        tess__tile_box box;
        if (tess__tile_plan_cut(&pol->plan, pol->spec.cells, &box) == 0) break;
        rc = list_append(pol, k % pol->procs->n, &pol->plan.last);
    }
    return rc;
}

uint64_t tess__tile_policy_left(const tess__tile_policy *pol)
{
    uint64_t n = pol->plan.remaining;
    for (int i = 0; listed(pol) && i < pol->procs->n; i++)
        for (int k = pol->list_head[i]; k < pol->list_len[i]; k++)
            n += tess__tile_segment_cells(&pol->link->area, &pol->lists[i][k]);
    return n + tess__tile_store_pending_cells(pol->store);
}

/* ws: whole fixed tiles from the back of the longest deques. */
static void give_listed(tess__tile_policy *pol, uint64_t cells, tess__tile_segment *out, int max,
                        int *n, uint64_t *taken)
{
    while (*taken < cells && *n < max) {
        int victim = -1, most = 1;
        for (int i = 0; i < pol->procs->n; i++) {
            int left = pol->list_len[i] - pol->list_head[i];
            if (left > most) most = left, victim = i;
        }
        if (victim < 0) return;
        tess__tile_segment *s = &pol->lists[victim][pol->list_len[victim] - 1];
        if (s->chunk != NULL || s->owner != pol->link->me)
            return; /* its data moved here: keep it */
        out[(*n)++] = *s;
        *taken += tess__tile_segment_cells(&pol->link->area, s);
        pol->list_len[victim]--;
    }
}

int tess__tile_policy_give(tess__tile_policy *pol, uint64_t cells, tess__tile_segment **out, int *n)
{
    *n = 0;
    *out = NULL;
    if (cells < pol->plan.min_cells) cells = 0; /* not worth a tile */
    if (pol->spec.kind == TILE_STATIC || cells == 0) return TESS_OK;
    int max = 256;
    tess__tile_segment *segs = malloc((size_t)max * sizeof *segs);
    if (segs == NULL) return TESS_ERR_NOMEM;
    uint64_t taken = tess__tile_store_take_pending(pol->store, cells, segs, max, n);
    if (pol->spec.kind == TILE_WS) {
        give_listed(pol, cells, segs, max, n, &taken);
    } else if (taken < cells && *n < max) {
        int got = 0;
        taken += tess__tile_plan_take_tail(&pol->plan, cells - taken, pol->link->me, segs + *n,
                                           max - *n, &got);
        *n += got;
    }
    *out = segs;
    return TESS_OK;
}

double tess__tile_policy_rate(const tess__tile_policy *pol)
{
    double sum = 0;
    for (int i = 0; i < pol->procs->n; i++) {
        double r = 0;
        tess__tile_model_best_size(&pol->plan.procs[i].model, &r);
        sum += r;
    }
    return sum;
}

double tess__tile_policy_queued_seconds(const tess__tile_policy *pol)
{
    double cells = 0, rate = 0, longest = 0;
    for (int i = 0; i < pol->procs->n; i++) {
        double r = 0, q = pol->plan.procs[i].queued_s;
        tess__tile_model_best_size(&pol->plan.procs[i].model, &r);
        cells += q * r;
        rate += r;
        longest = q > longest ? q : longest;
    }
    return rate > 0 ? cells / rate : longest;
}
