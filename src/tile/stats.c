/*
 * stats.c — the statistics of a tiles run: what each rank's processors and
 * controller spent on the kernel, input, output and transfers after the
 * bootstrap; each rank sends its own to rank 0 when the run is over; rank 0
 * adds the split of the job's time into BOOT, PROC, L-IMB, INIT, TCP, OUT
 * and OVER (tile.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile/stats.h"

typedef struct stats_head {
    tess_tile_rank_stats rank;
    double finish_at;
    int32_t nprocs, pad;
} stats_head;

static void fill_proc(const tess__tile_processor *p, const tess__tile_policy *pol,
                      const tess__tile_tally *t, int i, tess_tile_proc_stats *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->rank = t->link->me;
    snprintf(ps->spec, sizeof ps->spec, "%s", p->spec.text);
    ps->kind = p->spec.kind;
    ps->tiles = p->tiles;
    ps->cells = p->cells;
    ps->ntried = pol->ntried[i];
    memcpy(ps->tried, pol->tried[i], sizeof ps->tried);
    ps->settled = tess__tile_plan_best(&pol->plan, i, &ps->rate);
    ps->busy = p->busy;
    ps->idle = p->idle;
    ps->busy_after_boot = t->busy_after_boot[i];
    ps->init = t->io[i][TALLY_INIT];
    ps->out = t->io[i][TALLY_OUT];
    ps->tcp = t->io[i][TALLY_TCP];
}

void tess__tile_tally_boot(tess__tile_tally *t, const tess__tile_store *s)
{
    if (t->booted) return;
    t->booted = 1;
    t->ctl_at_boot[TALLY_INIT] = s->init_s;
    t->ctl_at_boot[TALLY_OUT] = s->out_s;
    t->ctl_at_boot[TALLY_TCP] = s->tcp_s;
}

void tess__tile_tally_done(tess__tile_tally *t, const tess__tile_done *d, int after_boot)
{
    if (!after_boot || d->proc < 0 || d->proc >= TILE_MAX_PROCS) return;
    double *io = t->io[d->proc];
    t->busy_after_boot[d->proc] += d->seconds - d->input_s;
    io[TALLY_INIT] += d->input_s;
    io[d->out_here ? TALLY_OUT : TALLY_TCP] += d->deliver_s;
}

void tess__tile_tally_controller(const tess__tile_tally *t, const tess__tile_store *s,
                                 tess_tile_rank_stats *rs)
{
    if (!t->booted) return; /* the work ran out first: the whole run is BOOT */
    rs->init_seconds = s->init_s - t->ctl_at_boot[TALLY_INIT];
    rs->out_seconds = s->out_s - t->ctl_at_boot[TALLY_OUT];
    rs->tcp_seconds = s->tcp_s - t->ctl_at_boot[TALLY_TCP];
}

void tess__tile_stats_send(tess__tile_tally *t, const tess_tile_rank_stats *rs, double finish_at,
                           const tess__tile_procs *procs, const tess__tile_policy *pol)
{
    size_t len = sizeof(stats_head) + (size_t)procs->n * sizeof(tess_tile_proc_stats);
    uint8_t *buf = calloc(1, len);
    if (buf == NULL) {
        tess__tile_abort_all(t->link, TESS_ERR_NOMEM, "out of memory for the statistics");
        return;
    }
    stats_head h = {.rank = *rs, .finish_at = finish_at, .nprocs = procs->n};
    for (int i = 0; i < procs->n; i++) h.rank.cells += procs->p[i].cells;
    memcpy(buf, &h, sizeof h);
    for (int i = 0; i < procs->n; i++)
        fill_proc(&procs->p[i], pol, t, i, (tess_tile_proc_stats *)(void *)(buf + sizeof h) + i);
    tess__tile_send(t->link, 0, TILE_STATS, NULL, 0, buf, len);
    free(buf);
}

/* TILE_STATS on rank 0: a rank's report joins the run's statistics. */
static void on_stats(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_tally *t = state;
    tess_ctx *ctx = t->link->ctx;
    tess_tile_stats *s =
        ctx->tile && ctx->tile->result ? ctx->tile->result + t->link->args.stage : NULL;
    stats_head h;
    if (s == NULL || len < sizeof h) return;
    memcpy(&h, p, sizeof h);
    if (h.nprocs < 0 || len != sizeof h + (size_t)h.nprocs * sizeof(tess_tile_proc_stats)) return;
    tess_tile_proc_stats *procs = realloc(s->procs, (size_t)(s->nprocs + h.nprocs) * sizeof *procs);
    if (procs == NULL) {
        tess__tile_abort_all(t->link, TESS_ERR_NOMEM, "out of memory for the statistics");
        return;
    }
    memcpy(procs + s->nprocs, p + sizeof h, (size_t)h.nprocs * sizeof *procs);
    s->procs = procs;
    s->nprocs += h.nprocs;
    s->ranks[src] = h.rank;
    if (h.finish_at > s->seconds) s->seconds = h.finish_at;
    t->stats_in++;
}

void tess__tile_tally_init(tess__tile_tally *t, tess__tile_link *l)
{
    t->link = l;
    tess__tile_link_route(l, TILE_STATS, on_stats, t);
}

void tess__tile_stats_begin(tess_tile_stats *s, int nranks, const char *policy)
{
    memset(s, 0, sizeof *s);
    s->nranks = nranks;
    s->ranks = calloc((size_t)nranks, sizeof *s->ranks);
    snprintf(s->policy, sizeof s->policy, "%s", policy && *policy ? policy : "apc");
}

static int by_rank(const void *a, const void *b)
{
    const tess_tile_proc_stats *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static double most(double a, double b) { return a > b ? a : b; }

/* INIT, TCP and OUT: the most seconds one thread spent on each, a
 * processor or a controller, after the bootstrap. */
static void most_io(const tess_tile_stats *s, double io[TALLY_IO])
{
    io[TALLY_INIT] = io[TALLY_OUT] = io[TALLY_TCP] = 0;
    for (int i = 0; i < s->nprocs; i++) {
        const tess_tile_proc_stats *p = &s->procs[i];
        io[TALLY_INIT] = most(io[TALLY_INIT], p->init);
        io[TALLY_OUT] = most(io[TALLY_OUT], p->out);
        io[TALLY_TCP] = most(io[TALLY_TCP], p->tcp);
    }
    for (int r = 0; r < s->nranks; r++) {
        const tess_tile_rank_stats *k = &s->ranks[r];
        io[TALLY_INIT] = most(io[TALLY_INIT], k->init_seconds);
        io[TALLY_OUT] = most(io[TALLY_OUT], k->out_seconds);
        io[TALLY_TCP] = most(io[TALLY_TCP], k->tcp_seconds);
    }
}

/* Part `want` of what is left (*left), cut to it: overlapped time counts once. */
static double take_part(double want, double *left)
{
    double got = want < *left ? want : *left;
    got = got > 0 ? got : 0;
    *left -= got;
    return got;
}

void tess__tile_stats_finish(tess_tile_stats *s)
{
    qsort(s->procs, (size_t)s->nprocs, sizeof *s->procs, by_rank);
    double lo = 0, hi = 0, io[TALLY_IO];
    for (int r = 0; r < s->nranks; r++)
        if (s->ranks[r].boot_seconds > s->boot) s->boot = s->ranks[r].boot_seconds;
    for (int i = 0; i < s->nprocs; i++) {
        const tess_tile_proc_stats *p = &s->procs[i];
        s->cells += p->cells;
        s->tiles += p->tiles;
        if (i == 0 || p->busy_after_boot < lo) lo = p->busy_after_boot;
        if (i == 0 || p->busy_after_boot > hi) hi = p->busy_after_boot;
    }
    most_io(s, io);
    if (s->boot > s->seconds) s->boot = s->seconds;
    double after = s->seconds - s->boot;
    if (hi > after) { /* a tile begun just before the bootstrap ended: clamp */
        lo = lo * after / hi;
        hi = after;
    }
    s->proc = lo;
    s->limb = hi - lo;
    double left = after - hi;
    s->init = take_part(io[TALLY_INIT], &left);
    s->tcp = take_part(io[TALLY_TCP], &left);
    s->out = take_part(io[TALLY_OUT], &left);
    s->over = left;
}

void tess_tile_stats_free(tess_tile_stats *s)
{
    if (s == NULL) return;
    free(s->procs);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}
