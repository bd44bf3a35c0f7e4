/*
 * steal.h — work stealing between the controllers of different ranks
 * (TILE_STEAL, TILE_GIVE, routed here): when to ask, whom, and how much a
 * victim gives.  The work itself is the policy's (policy.h); stolen work
 * whose input lies elsewhere waits in the storage layer (store.h).
 * Private to src/tile.
 */
#ifndef TESS_SRC_TILE_STEAL_H
#define TESS_SRC_TILE_STEAL_H

#include "tile/policy.h"

typedef struct tess__tile_steal {
    tess__tile_link *link;
    tess__tile_store *store;
    tess__tile_policy *policy;
    uint8_t *peer_empty;            /* per rank: it had nothing to give */
    int out;                        /* a request is out */
    double sent_at;                 /* when it left */
    int timing;                     /* its work is not ready yet (reply or first chunk to come) */
    double rtt;                     /* request to work ready, a moving average (0: none yet) */
    uint64_t rng;                   /* victim choice */
    uint64_t stolen_in, stolen_out; /* cells of work received / given */
    uint64_t steals_in, steals_out; /* successful steals as thief / victim */
} tess__tile_steal;

/* Route the steal messages.  TESS_ERR_NOMEM (error set) or TESS_OK. */
int tess__tile_steal_init(tess__tile_steal *st, tess__tile_link *l, tess__tile_store *s,
                          tess__tile_policy *pol);
void tess__tile_steal_free(tess__tile_steal *st);
/* Ask a peer for work when this rank is about to run dry. */
void tess__tile_steal_maybe(tess__tile_steal *st);
/* The stolen work is ready (its reply came, or its first chunk of input):
 * one sample of how long a steal takes. */
void tess__tile_steal_timed(tess__tile_steal *st);

#endif
