/*
 * policy_central.h — the centralised APC (--policy capc), the baseline the
 * APC+ paper compares against (its "APC"): one controller, rank 0's, runs
 * the plan (plan.h) for the processors of every rank and hands each tile
 * to the rank whose processor gets it (TILE_CENTRAL, routed here); ranks
 * report every finished tile back to it, and nobody steals.  A tile whose
 * input another rank holds is fetched whole by the rank that runs it
 * (the storage layer's TILE_FETCH/TILE_DATA).  Each rank's processors,
 * queues and the outputs' way to the output rank are those of APC+.
 * Private to src/tile.
 */
#ifndef TESS_SRC_TILE_POLICY_CENTRAL_H
#define TESS_SRC_TILE_POLICY_CENTRAL_H

#include "tile/policy.h"

typedef struct tess__tile_central_wait tess__tile_central_wait;

typedef struct tess__tile_central {
    tess__tile_link *link;
    tess__tile_store *store;
    tess__tile_procs *procs;
    tess__tile_policy *policy; /* this rank's: its processors' queued tiles */
    /* rank 0: every rank's processors (base[r] is rank r's first, in the
     * plan's numbering), once all ranks said how many; the plan of them all */
    int *base;
    uint64_t *starting; /* per rank: its processors still starting, a bit each */
    int counts_in, planned, loaded;
    tess__tile_plan plan;
    /* the plan's bootstrap ended (rank 0), or rank 0 said so: at boot_seconds */
    int booted;
    double boot_seconds;
    /* tiles handed to this rank whose input is on its way */
    tess__tile_central_wait *wait;
    int nwait, cap_wait;
} tess__tile_central;

/* Route TILE_CENTRAL and tell rank 0 this rank's processors.  TESS_OK or
 * TESS_ERR_NOMEM (error set). */
int tess__tile_central_init(tess__tile_central *c, tess__tile_link *l, tess__tile_store *s,
                            tess__tile_procs *procs, tess__tile_policy *pol);
void tess__tile_central_free(tess__tile_central *c);
/* Rank 0: hand tiles to the processors that want them (once every slab
 * was checked); ends the bootstrap when it ended.  Elsewhere nothing. */
void tess__tile_central_dispatch(tess__tile_central *c);
/* The input of a tile handed to this rank came: queue the tile. */
void tess__tile_central_ready(tess__tile_central *c, const tess__tile_segment *s);
/* A processor of this rank finished a tile or its start-up: tell rank 0. */
void tess__tile_central_done(tess__tile_central *c, const tess__tile_done *d);

#endif
