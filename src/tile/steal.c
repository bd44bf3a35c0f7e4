/*
 * steal.c — work stealing between the controllers of different ranks.
 *
 * A rank with no work left to hand out, and whose processors' queues are
 * about to run dry, asks a random peer, sending its aggregate processing
 * rate and how long its queues still last.  The victim gives it a share of
 * its remaining work such that both would finish at the same time, their
 * queued work counted, in segments as large as possible, taken from the
 * end of its work and only where the data has not moved yet.  A peer that
 * had nothing is not asked again.  Only descriptors move here; the storage
 * layer fetches the input later (store.c).
 */
#include <stdlib.h>
#include "tile/tile_internal.h"

double tess__tile_rank_rate(const tess__tile_ctl *c)
{
    double sum = 0;
    for (int i = 0; i < c->nprocs; i++) {
        double r = 0;
        tess__tile_model_best_size(&c->plan.procs[i].model, &r);
        sum += r;
    }
    return sum;
}

static uint64_t next_random(tess__tile_ctl *c)
{
    c->rng = c->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return c->rng >> 33;
}

/* Seconds until this rank's processors run out of queued work, all working
 * together: the queued cells over the aggregate rate. */
static double queued_seconds(const tess__tile_ctl *c)
{
    double cells = 0, rate = 0, longest = 0;
    for (int i = 0; i < c->nprocs; i++) {
        double r = 0, q = c->plan.procs[i].queued_s;
        tess__tile_model_best_size(&c->plan.procs[i].model, &r);
        cells += q * r;
        rate += r;
        longest = q > longest ? q : longest;
    }
    return rate > 0 ? cells / rate : longest;
}

/* Ask when the queues last less than twice the time a steal takes until
 * its work can start (the request, the reply and, when the input moves,
 * its first chunk; at least a millisecond).  Asking as soon as nothing was
 * left to hand out, with up to --tile-queue-ms of tiles still queued, took
 * half a peer's work while this rank had as much again to do (Black-Scholes
 * K=1 on 4 ranks: one rank ended with 360k options of 1M, the last to
 * finish). */
static int queues_run_dry(const tess__tile_ctl *c)
{
    double soon = 2 * c->steal_rtt > 1e-3 ? 2 * c->steal_rtt : 1e-3;
    return queued_seconds(c) <= soon;
}

void tess__tile_steal_maybe(tess__tile_ctl *c)
{
    if (c->nranks == 1 || c->policy.kind == TILE_STATIC || c->steal_out || c->finished) return;
    if (tess__tile_policy_left(c) > 0 || c->fetch_bytes_out > 0 || !queues_run_dry(c)) return;
    int candidates = 0;
    for (int r = 0; r < c->nranks; r++) candidates += r != c->me && !c->peer_empty[r];
    if (candidates == 0) return;
    int pick = (int)(next_random(c) % (uint64_t)candidates);
    for (int r = 0; r < c->nranks; r++) {
        if (r == c->me || c->peer_empty[r]) continue;
        if (pick-- == 0) {
            double req[2] = {tess__tile_rank_rate(c), queued_seconds(c)};
            c->steal_out = 1;
            c->steal_timing = 1;
            c->steal_sent_at = tess__tile_now(c);
            tess__tile_send(c, r, TILE_STEAL, req, sizeof req, NULL, 0);
            return;
        }
    }
}

/* The thief's share of `left` cells so that both end together: the thief
 * after its queued q_t seconds and s cells at r_t, this rank after its
 * q_v and the other left - s at r_v:
 *   q_t + s / r_t = q_v + (left - s) / r_v
 *   s = (q_v - q_t + left / r_v) r_t r_v / (r_t + r_v)
 * (left r_t / (r_t + r_v) when neither has anything queued). */
static uint64_t thief_share(uint64_t left, double r_t, double q_t, double r_v, double q_v)
{
    double s = (q_v - q_t + (double)left / r_v) * r_t * r_v / (r_t + r_v);
    return s <= 0 ? 0 : s >= (double)left ? left : (uint64_t)s;
}

void tess__tile_steal_on_request(tess__tile_ctl *c, int src, double thief_rate, double thief_queued)
{
    double mine = tess__tile_rank_rate(c);
    if (thief_rate <= 0) thief_rate = mine > 0 ? mine : 1.0; /* unknown: as fast as this rank */
    if (mine <= 0) mine = thief_rate;
    uint64_t left = tess__tile_policy_left(c);
    uint64_t share = thief_share(left, thief_rate, thief_queued, mine, queued_seconds(c));
    if (share < c->plan.min_cells) share = 0; /* not worth a tile */
    tess__tile_segment *segs = NULL;
    int n = 0;
    if (tess__tile_policy_give(c, share, &segs, &n) != TESS_OK) n = 0;
    tess__tile_wire_seg *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (w == NULL) n = 0;
    uint64_t cells = 0;
    for (int i = 0; i < n; i++) {
        w[i] = (tess__tile_wire_seg){segs[i].column, segs[i].r0, segs[i].r1, segs[i].owner, 0};
        cells += tess__tile_segment_cells(&c->area, &segs[i]);
    }
    tess__tile_send(c, src, TILE_GIVE, w, (size_t)n * sizeof *w, NULL, 0);
    if (n > 0) {
        c->rs.stolen_out += cells;
        c->rs.steals_out++;
        c->received -= cells;
    }
    free(w);
    free(segs);
}

void tess__tile_steal_timed(tess__tile_ctl *c)
{
    if (!c->steal_timing) return;
    c->steal_timing = 0;
    double t = tess__tile_now(c) - c->steal_sent_at;
    c->steal_rtt = c->steal_rtt > 0 ? 0.75 * c->steal_rtt + 0.25 * t : t;
}

void tess__tile_steal_on_give(tess__tile_ctl *c, int src, const tess__tile_wire_seg *segs, int n)
{
    c->steal_out = 0;
    int fetches = c->npending;
    if (n == 0) {
        tess__tile_steal_timed(c);
        c->peer_empty[src] = 1;
        return;
    }
    uint64_t cells = 0;
    for (int i = 0; i < n; i++) {
        tess__tile_segment s = {
            .column = segs[i].column, .r0 = segs[i].r0, .r1 = segs[i].r1, .owner = segs[i].owner};
        cells += tess__tile_segment_cells(&c->area, &s);
        if (tess__tile_store_add_pending(c, &s) != TESS_OK) {
            tess__tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory for stolen work");
            return;
        }
    }
    c->rs.stolen_in += cells;
    c->rs.steals_in++;
    c->received += cells;
    if (c->npending == fetches) tess__tile_steal_timed(c); /* no input to fetch: ready now */
}
