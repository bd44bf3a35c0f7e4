/*
 * steal.c — work stealing between the controllers of different ranks.
 *
 * A rank with no work left to hand out asks a random peer, sending its
 * aggregate processing rate.  The victim gives it a share of its remaining
 * work such that both would finish at the same time (the thief's share of
 * the combined rate), in segments as large as possible, taken from the end
 * of its work and only where the data has not moved yet.  A peer that had
 * nothing is not asked again.  Only descriptors move here; the storage
 * layer fetches the input later (store.c).
 */
#include <stdlib.h>
#include "tile/tile_internal.h"

double tile_rank_rate(const tile_ctl *c)
{
    double sum = 0;
    for (int i = 0; i < c->nprocs; i++) {
        double r = 0;
        tess__tile_model_best_size(&c->plan.procs[i].model, &r);
        sum += r;
    }
    return sum;
}

static uint64_t next_random(tile_ctl *c)
{
    c->rng = c->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return c->rng >> 33;
}

void tile_steal_maybe(tile_ctl *c)
{
    if (c->nranks == 1 || c->policy.kind == TILE_STATIC || c->steal_out || c->finished) return;
    if (tile_policy_left(c) > 0 || c->fetch_bytes_out > 0) return;
    int candidates = 0;
    for (int r = 0; r < c->nranks; r++) candidates += r != c->me && !c->peer_empty[r];
    if (candidates == 0) return;
    int pick = (int)(next_random(c) % (uint64_t)candidates);
    for (int r = 0; r < c->nranks; r++) {
        if (r == c->me || c->peer_empty[r]) continue;
        if (pick-- == 0) {
            double rate = tile_rank_rate(c);
            c->steal_out = 1;
            tile_send(c, r, TILE_STEAL, &rate, sizeof rate, NULL, 0);
            return;
        }
    }
}

void tile_steal_on_request(tile_ctl *c, int src, double thief_rate)
{
    double mine = tile_rank_rate(c);
    if (thief_rate <= 0) thief_rate = mine > 0 ? mine : 1.0; /* unknown: as fast as this rank */
    if (mine <= 0) mine = thief_rate;
    uint64_t left = tile_policy_left(c);
    uint64_t share = (uint64_t)((double)left * thief_rate / (thief_rate + mine));
    if (share < c->plan.min_cells) share = 0; /* not worth a tile */
    tess__tile_segment *segs = NULL;
    int n = 0;
    if (tile_policy_give(c, share, &segs, &n) != TESS_OK) n = 0;
    tile_wire_seg *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (w == NULL) n = 0;
    uint64_t cells = 0;
    for (int i = 0; i < n; i++) {
        w[i] = (tile_wire_seg){segs[i].column, segs[i].r0, segs[i].r1, segs[i].owner, 0};
        cells += tess__tile_segment_cells(&c->area, &segs[i]);
    }
    tile_send(c, src, TILE_GIVE, w, (size_t)n * sizeof *w, NULL, 0);
    if (n > 0) {
        c->rs.stolen_out += cells;
        c->rs.steals_out++;
        c->received -= cells;
    }
    free(w);
    free(segs);
}

void tile_steal_on_give(tile_ctl *c, int src, const tile_wire_seg *segs, int n)
{
    c->steal_out = 0;
    if (n == 0) {
        c->peer_empty[src] = 1;
        return;
    }
    uint64_t cells = 0;
    for (int i = 0; i < n; i++) {
        tess__tile_segment s = {
            .column = segs[i].column, .r0 = segs[i].r0, .r1 = segs[i].r1, .owner = segs[i].owner};
        cells += tess__tile_segment_cells(&c->area, &s);
        if (tile_store_add_pending(c, &s) != TESS_OK) {
            tile_abort_all(c, TESS_ERR_NOMEM, "tiles: out of memory for stolen work");
            return;
        }
    }
    c->rs.stolen_in += cells;
    c->rs.steals_in++;
    c->received += cells;
}
