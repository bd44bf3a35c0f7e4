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
#include <string.h>
#include "tile/steal.h"

static uint64_t next_random(tess__tile_steal *st)
{
    st->rng = st->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return st->rng >> 33;
}

/* Ask when the queues last less than twice the time a steal takes until
 * its work can start (the request, the reply and, when the input moves,
 * its first chunk; at least a millisecond).  Asking as soon as nothing was
 * left to hand out, with up to --tile-queue-ms of tiles still queued, took
 * half a peer's work while this rank had as much again to do (Black-Scholes
 * K=1 on 4 ranks: one rank ended with 360k options of 1M, the last to
 * finish). */
static int queues_run_dry(const tess__tile_steal *st)
{
    double soon = 2 * st->rtt > 1e-3 ? 2 * st->rtt : 1e-3;
    return tess__tile_policy_queued_seconds(st->policy) <= soon;
}

void tess__tile_steal_maybe(tess__tile_steal *st)
{
    tess__tile_link *l = st->link;
    if (l->nranks == 1 || !tess__tile_policy_shares(st->policy) || st->out || st->store->finished)
        return;
    if (tess__tile_policy_left(st->policy) > 0 || tess__tile_store_fetching(st->store) ||
        !queues_run_dry(st))
        return;
    int candidates = 0;
    for (int r = 0; r < l->nranks; r++) candidates += r != l->me && !st->peer_empty[r];
    if (candidates == 0) return;
    int pick = (int)(next_random(st) % (uint64_t)candidates);
    for (int r = 0; r < l->nranks; r++) {
        if (r == l->me || st->peer_empty[r]) continue;
        if (pick-- == 0) {
            double req[2] = {tess__tile_policy_rate(st->policy),
                             tess__tile_policy_queued_seconds(st->policy)};
            st->out = 1;
            st->timing = 1;
            st->sent_at = tess__tile_now(l);
            tess__tile_send(l, r, TILE_STEAL, req, sizeof req, NULL, 0);
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

static void give(tess__tile_steal *st, int src, double thief_rate, double thief_queued)
{
    tess__tile_policy *pol = st->policy;
    double mine = tess__tile_policy_rate(pol);
    if (thief_rate <= 0) thief_rate = mine > 0 ? mine : 1.0; /* unknown: as fast as this rank */
    if (mine <= 0) mine = thief_rate;
    uint64_t left = tess__tile_policy_left(pol);
    uint64_t share =
        thief_share(left, thief_rate, thief_queued, mine, tess__tile_policy_queued_seconds(pol));
    tess__tile_segment *segs = NULL;
    int n = 0;
    if (tess__tile_policy_give(pol, share, &segs, &n) != TESS_OK) n = 0;
    tess__tile_wire_seg *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (w == NULL) n = 0;
    uint64_t cells = 0;
    for (int i = 0; i < n; i++) {
        w[i] = tess__tile_wire(&segs[i]);
        cells += tess__tile_segment_cells(&st->link->area, &segs[i]);
    }
    tess__tile_send(st->link, src, TILE_GIVE, w, (size_t)n * sizeof *w, NULL, 0);
    if (n > 0) {
        st->stolen_out += cells;
        st->steals_out++;
    }
    free(w);
    free(segs);
}

void tess__tile_steal_timed(tess__tile_steal *st)
{
    if (!st->timing) return;
    st->timing = 0;
    double t = tess__tile_now(st->link) - st->sent_at;
    st->rtt = st->rtt > 0 ? 0.75 * st->rtt + 0.25 * t : t;
}

/* Stolen segment s: work now when its input is here, else after a fetch
 * (*fetched 1). */
static int take(tess__tile_steal *st, const tess__tile_segment *s, int *fetched)
{
    if (!tess__tile_store_needs_fetch(st->store, s))
        return tess__tile_policy_add_work(st->policy, s);
    *fetched = 1;
    return tess__tile_store_add_pending(st->store, s);
}

static void receive_work(tess__tile_steal *st, int src, const tess__tile_wire_seg *segs, int n)
{
    st->out = 0;
    int fetched = 0;
    if (n == 0) {
        tess__tile_steal_timed(st);
        st->peer_empty[src] = 1;
        return;
    }
    uint64_t cells = 0;
    for (int i = 0; i < n; i++) {
        tess__tile_segment s = {.box = tess__tile_wire_box(&segs[i], st->link->area.ndims),
                                .owner = segs[i].owner};
        cells += tess__tile_segment_cells(&st->link->area, &s);
        if (take(st, &s, &fetched) != TESS_OK) {
            tess__tile_abort_all(st->link, TESS_ERR_NOMEM, "tiles: out of memory for stolen work");
            return;
        }
    }
    st->stolen_in += cells;
    st->steals_in++;
    if (!fetched) tess__tile_steal_timed(st); /* no input to fetch: ready now */
}

/* TILE_STEAL: the thief's rate and how long its queues last. */
static void on_steal(void *state, int src, const uint8_t *p, size_t len)
{
    double req[2] = {0, 0};
    memcpy(req, p, len < sizeof req ? len : sizeof req);
    give(state, src, req[0], req[1]);
}

/* TILE_GIVE: segments from the victim (maybe none). */
static void on_give(void *state, int src, const uint8_t *p, size_t len)
{
    tess__tile_steal *st = state;
    int n = (int)(len / sizeof(tess__tile_wire_seg));
    tess__tile_wire_seg *w = malloc((size_t)(n ? n : 1) * sizeof *w);
    if (w == NULL) {
        tess__tile_abort_all(st->link, TESS_ERR_NOMEM, "tiles: out of memory");
        return;
    }
    memcpy(w, p, (size_t)n * sizeof *w);
    receive_work(st, src, w, n);
    free(w);
}

int tess__tile_steal_init(tess__tile_steal *st, tess__tile_link *l, tess__tile_store *s,
                          tess__tile_policy *pol)
{
    st->link = l;
    st->store = s;
    st->policy = pol;
    st->rng = l->args.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)l->me + 1;
    st->peer_empty = calloc((size_t)l->nranks, 1);
    TESS_RETURN_IF(l->ctx, st->peer_empty == NULL, TESS_ERR_NOMEM, "out of memory");
    tess__tile_link_route(l, TILE_STEAL, on_steal, st);
    tess__tile_link_route(l, TILE_GIVE, on_give, st);
    return TESS_OK;
}

void tess__tile_steal_free(tess__tile_steal *st)
{
    free(st->peer_empty);
    st->peer_empty = NULL;
}
