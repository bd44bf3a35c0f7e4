/*
 * stats.h — the statistics of a rank's tiles run: what it measured itself
 * (busy time after the bootstrap), its report to rank 0 at the end, and on
 * rank 0 the reports of every rank (TILE_STATS, routed here) gathered into
 * the caller's tess_tile_stats.  Private to src/tile.
 */
#ifndef TESS_SRC_TILE_STATS_H
#define TESS_SRC_TILE_STATS_H

#include "tile/policy.h"

/* What a thread spent on input, output and transfers (tile.h: INIT, OUT, TCP). */
enum { TALLY_INIT, TALLY_OUT, TALLY_TCP, TALLY_IO };

typedef struct tess__tile_tally {
    tess__tile_link *link;
    double busy_after_boot[TILE_MAX_PROCS]; /* per processor, in the kernel */
    double io[TILE_MAX_PROCS][TALLY_IO];    /* per processor, after the bootstrap */
    double ctl_at_boot[TALLY_IO];           /* the store's counts when the bootstrap ended */
    int booted;                             /* they were taken */
    int stats_in;                           /* rank 0: reports received */
} tess__tile_tally;

/* Route the reports (rank 0 keeps them). */
void tess__tile_tally_init(tess__tile_tally *t, tess__tile_link *l);
/* The rank's bootstrap ended (once): the controller's I/O counts from now. */
void tess__tile_tally_boot(tess__tile_tally *t, const tess__tile_store *s);
/* A processor's finished tile, begun after the bootstrap when after_boot. */
void tess__tile_tally_done(tess__tile_tally *t, const tess__tile_done *d, int after_boot);
/* The controller's INIT, OUT and TCP seconds after the bootstrap into rs. */
void tess__tile_tally_controller(const tess__tile_tally *t, const tess__tile_store *s,
                                 tess_tile_rank_stats *rs);
/* This rank's report to rank 0: rs, the processors' counts and what the
 * policy learnt of them. */
void tess__tile_stats_send(tess__tile_tally *t, const tess_tile_rank_stats *rs, double finish_at,
                           const tess__tile_procs *procs, const tess__tile_policy *pol);

#endif
