/*
 * stats.h — the statistics of a rank's tiles run: what it measured itself
 * (busy time after the bootstrap), its report to rank 0 at the end, and on
 * rank 0 the reports of every rank (TILE_STATS, routed here) gathered into
 * the caller's tess_tile_stats.  Private to src/tile.
 */
#ifndef TESS_SRC_TILE_STATS_H
#define TESS_SRC_TILE_STATS_H

#include "tile/policy.h"

typedef struct tess__tile_tally {
    tess__tile_link *link;
    double busy_after_boot[TILE_MAX_PROCS]; /* per processor */
    int stats_in;                           /* rank 0: reports received */
} tess__tile_tally;

/* Route the reports (rank 0 keeps them). */
void tess__tile_tally_init(tess__tile_tally *t, tess__tile_link *l);
/* This rank's report to rank 0: rs, the processors' counts and what the
 * policy learnt of them. */
void tess__tile_stats_send(tess__tile_tally *t, const tess_tile_rank_stats *rs, double finish_at,
                           const tess__tile_procs *procs, const tess__tile_policy *pol);

#endif
