/*
 * policy_central.c — the centralised APC (--policy capc, policy_central.h):
 * rank 0's controller plans for every processor of every rank, as the APC+
 * paper's baseline does; the other ranks only queue the tiles it sends and
 * report them done.  Against APC+ it pays a message each way per tile and
 * a transfer for every tile run away from its input, and decides nothing
 * where the processors are; it keeps APC's bootstrap, queues of T seconds
 * and Algorithm 2 (over all processors at once, so no global estimate is
 * needed), but takes no queued tile back (they sit on other ranks).
 *
 * TILE_CENTRAL carries one of:
 *   CENTRAL_PROCS  rank -> 0: its processor count and which are starting
 *   CENTRAL_TILE   0 -> rank: a tile for its processor `proc`
 *   CENTRAL_DONE   rank -> 0: processor `proc` (the plan's numbering)
 *                  finished a tile, or its start-up (warm)
 *   CENTRAL_BOOT   0 -> all: the bootstrap ended
 */
#include <stdlib.h>
#include <string.h>
#include "tile/policy_central.h"

enum { CENTRAL_PROCS = 1, CENTRAL_TILE, CENTRAL_DONE, CENTRAL_BOOT };

typedef struct central_msg {
    int32_t kind;
    int32_t proc;   /* PROCS: the count; TILE: the rank's index; DONE: the plan's */
    int32_t warm;   /* DONE: a start-up, not a tile */
    int32_t owner;  /* TILE: the rank holding its input */
    uint64_t cells; /* PROCS: a bit per processor still starting */
    double est, seconds;
    tess__tile_box box;
} central_msg;

struct tess__tile_central_wait {
    central_msg m;
};

static int needs_data(const tess__tile_link *l)
{
    return l->job->in_bytes > 0 && l->job->read == NULL;
}

static void send_central(tess__tile_central *c, int dst, central_msg *m);
static void on_central(void *state, int src, const uint8_t *p, size_t len);

/* ---- rank 0: the plan of every processor ---- */

static int plan_rank(const tess__tile_central *c, int g)
{
    int r = 0;
    while (r + 1 < c->link->nranks && c->base[r + 1] <= g) r++;
    return r;
}

/* Every rank said how many processors it has: the plan of them all. */
static int plan_start(tess__tile_central *c)
{
    tess__tile_link *l = c->link;
    int total = c->base[l->nranks];
    int rc = tess__tile_plan_init_empty(&c->plan, &l->area, total, l->args.queue_s, l->args.boot_s);
    if (rc != TESS_OK) return rc;
    for (int g = 0; g < total; g++) {
        int r = plan_rank(c, g);
        c->plan.procs[g].starting = (int)((c->starting[r] >> (g - c->base[r])) & 1);
    }
    c->planned = 1;
    return TESS_OK;
}

/* Rows [lo, hi), whose input `owner` holds, as work: the boxes a restored
 * checkpoint has not done. */
static int load_rows(tess__tile_central *c, int64_t lo, int64_t hi, int owner)
{
    return tess__tile_plan_add_rows(&c->plan, c->link->job->done, lo, hi, owner);
}

/* Every rank's rows, once every slab was checked (their owners known). */
static int load_work(tess__tile_central *c)
{
    tess__tile_link *l = c->link;
    int64_t e = l->area.extent[0];
    for (int r = 0; r < l->nranks; r++) {
        int64_t lo = needs_data(l) ? c->store->slab_lo[r] : e * r / l->nranks;
        int64_t hi = needs_data(l) ? c->store->slab_hi[r] : e * (r + 1) / l->nranks;
        int rc = load_rows(c, lo, hi, r);
        if (rc != TESS_OK) return rc;
    }
    c->loaded = 1;
    return TESS_OK;
}

/* Every processor not starting has ended its bootstrap: tiles are at least
 * the largest size any ended it with (APC+'s agreement, here in one
 * place), and every rank hears when. */
static void check_boot(tess__tile_central *c)
{
    uint64_t largest = 0;
    for (int g = 0; g < c->plan.nprocs; g++) {
        const tess__tile_proc *q = &c->plan.procs[g];
        if (q->starting) continue;
        if (!q->boot.done) return;
        if (q->boot.next > largest) largest = q->boot.next;
    }
    c->plan.floor_cells = largest < c->plan.max_cells ? largest : c->plan.max_cells;
    central_msg m = {.kind = CENTRAL_BOOT};
    for (int r = 0; r < c->link->nranks; r++) send_central(c, r, &m);
}

void tess__tile_central_dispatch(tess__tile_central *c)
{
    tess__tile_link *l = c->link;
    if (l->me != 0 || !c->planned || l->status != TESS_OK) return;
    if (!c->loaded && c->store->slabs_checked && load_work(c) != TESS_OK) {
        tess__tile_abort_all(l, TESS_ERR_NOMEM, "tiles: out of memory for the work");
        return;
    }
    if (!c->loaded) return;
    for (int i = 0; i < c->procs->n; i++) /* the others' are not known here */
        c->plan.procs[i].running_s = tess__tile_proc_running(&c->procs->p[i]);
    int g;
    central_msg m = {.kind = CENTRAL_TILE};
    while (l->status == TESS_OK && tess__tile_plan_next(&c->plan, &g, &m.box, &m.cells, &m.est)) {
        int r = plan_rank(c, g);
        m.proc = g - c->base[r];
        m.owner = c->plan.last.owner;
        send_central(c, r, &m);
    }
    if (!c->booted) check_boot(c);
}

/* CENTRAL_PROCS on rank 0. */
static void on_procs(tess__tile_central *c, int src, const central_msg *m)
{
    if (c->planned || m->proc < 0 || m->proc > TILE_MAX_PROCS) return;
    c->base[src + 1] = m->proc; /* a count for now: summed when all came */
    c->starting[src] = m->cells;
    if (++c->counts_in < c->link->nranks) return;
    for (int r = 0; r < c->link->nranks; r++) c->base[r + 1] += c->base[r];
    if (plan_start(c) != TESS_OK)
        tess__tile_abort_all(c->link, TESS_ERR_NOMEM, "tiles: out of memory for the plan");
}

/* CENTRAL_DONE on rank 0 from rank src: the plan learns what its processor
 * did.  A start-up may end before every rank's count came (its own count
 * came before it: a link keeps the order). */
static void on_report(tess__tile_central *c, int src, const central_msg *m)
{
    int i = m->proc;
    if (i < 0 || i >= TILE_MAX_PROCS) return;
    if (!c->planned) {
        if (m->warm) c->starting[src] &= ~(UINT64_C(1) << i);
        return;
    }
    int g = c->base[src] + i;
    if (g >= c->base[src + 1]) return;
    tess__tile_proc *q = &c->plan.procs[g];
    if (m->warm) { /* started: it takes tiles from now on (policy.c does the same) */
        q->starting = 0;
        q->finished = 1;
        return;
    }
    tess__tile_plan_done(&c->plan, g, m->cells, m->est, m->seconds);
}

/* ---- every rank: the tiles it is handed ---- */

static void queue_tile(tess__tile_central *c, const central_msg *m, const tess__tile_segment *seg)
{
    tess__tile_item it = {.box = m->box, .cells = m->cells, .est = m->est};
    tess__tile_store_item_input(c->store, seg, &it);
    if (tess__tile_proc_push(&c->procs->p[m->proc], &it) != TESS_OK)
        tess__tile_abort_all(c->link, TESS_ERR_NOMEM, "tiles: out of memory for the queues");
}

static int add_wait(tess__tile_central *c, const central_msg *m)
{
    if (tess__grow_items(&c->wait, &c->cap_wait, c->nwait, sizeof *c->wait, 16) != TESS_OK)
        return TESS_ERR_NOMEM;
    c->wait[c->nwait++].m = *m;
    return TESS_OK;
}

/* CENTRAL_TILE: counted queued at once (the rank is not idle while its
 * input comes); queued on the processor when its input is here. */
static void on_tile(tess__tile_central *c, const central_msg *m)
{
    tess__tile_link *l = c->link;
    if (m->proc < 0 || m->proc >= c->procs->n) return;
    tess__tile_proc *q = &c->policy->plan.procs[m->proc];
    q->queued_s += m->est;
    q->queued_tiles++;
    tess__tile_segment seg = {.box = m->box, .owner = m->owner};
    if (!tess__tile_store_needs_fetch(c->store, &seg)) {
        queue_tile(c, m, &seg);
        return;
    }
    if (add_wait(c, m) != TESS_OK) {
        tess__tile_abort_all(l, TESS_ERR_NOMEM, "tiles: out of memory for a transfer");
        return;
    }
    tess__tile_wire_seg w = tess__tile_wire(&seg);
    tess__tile_send(l, seg.owner, TILE_FETCH, &w, sizeof w, NULL, 0);
}

static int same_box(const tess__tile_box *a, const tess__tile_box *b)
{
    for (int d = 0; d < a->ndims; d++)
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d]) return 0;
    return a->ndims == b->ndims;
}

void tess__tile_central_ready(tess__tile_central *c, const tess__tile_segment *s)
{
    for (int k = 0; k < c->nwait; k++) {
        const central_msg *m = &c->wait[k].m;
        if (!same_box(&m->box, &s->box)) continue;
        queue_tile(c, m, s);
        c->wait[k] = c->wait[--c->nwait];
        return;
    }
    tess__tile_abort_all(c->link, TESS_ERR_INVAL, "tiles: input came for no tile (capc)");
}

void tess__tile_central_done(tess__tile_central *c, const tess__tile_done *d)
{
    central_msg m = {.kind = CENTRAL_DONE,
                     .proc = d->proc, /* rank 0 adds the rank's base */
                     .warm = d->warm,
                     .cells = d->cells,
                     .est = d->est,
                     .seconds = d->seconds};
    send_central(c, 0, &m);
}

/* ---- messages ---- */

/* To rank dst's central module: rank 0 calls its own directly (its tiles
 * and reports need no trip through the mailbox). */
static void send_central(tess__tile_central *c, int dst, central_msg *m)
{
    tess__tile_link *l = c->link;
    if (dst != l->me) tess__tile_send(l, dst, TILE_CENTRAL, m, sizeof *m, NULL, 0);
    else on_central(c, dst, (const uint8_t *)m, sizeof *m);
}

/* TILE_CENTRAL: dispatch by kind (the plan's are rank 0's alone). */
static void on_central(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_central *c = state;
    central_msg m;
    if (!tess__tile_unpack(p, len, &m, sizeof m)) return;
    int zero = c->link->me == 0;
    if (m.kind == CENTRAL_PROCS && zero) on_procs(c, src, &m);
    else if (m.kind == CENTRAL_TILE) on_tile(c, &m);
    else if (m.kind == CENTRAL_DONE && zero) on_report(c, src, &m);
    else if (m.kind == CENTRAL_BOOT && !c->booted) {
        c->booted = 1;
        c->boot_seconds = tess__tile_now(c->link);
    }
}

int tess__tile_central_init(tess__tile_central *c, tess__tile_link *l, tess__tile_store *s,
                            tess__tile_procs *procs, tess__tile_policy *pol)
{
    memset(c, 0, sizeof *c);
    c->link = l;
    c->store = s;
    c->procs = procs;
    c->policy = pol;
    tess__tile_link_route(l, TILE_CENTRAL, on_central, c);
    if (l->me == 0) {
        c->base = calloc((size_t)l->nranks + 1, sizeof *c->base);
        c->starting = calloc((size_t)l->nranks, sizeof *c->starting);
        TESS_RETURN_IF(l->ctx, !c->base || !c->starting, TESS_ERR_NOMEM, "out of memory");
    }
    central_msg m = {.kind = CENTRAL_PROCS, .proc = procs->n};
    for (int i = 0; i < procs->n; i++)
        if (procs->p[i].starting) m.cells |= UINT64_C(1) << i;
    send_central(c, 0, &m);
    return l->status;
}

void tess__tile_central_free(tess__tile_central *c)
{
    if (c->planned) tess__tile_plan_free(&c->plan);
    free(c->base);
    free(c->starting);
    free(c->wait);
    memset(c, 0, sizeof *c);
}
