/*
 * policy.h — how a rank's controller hands its work to its processors
 * (--policy apc, dd, static or ws), the bootstrap the ranks agree on
 * (TILE_BOOT, routed here), and the work it can give a thief.  It owns the
 * rank's plan (plan.h); it queues tiles on the processors (proc.h) and asks
 * the storage layer (store.h) for their input and for the work still
 * waiting for it.  Private to src/tile.
 */
#ifndef TESS_SRC_TILE_POLICY_H
#define TESS_SRC_TILE_POLICY_H

#include "tile/proc.h"

typedef struct tess__tile_policy {
    tess__tile_link *link;
    tess__tile_store *store;
    tess__tile_procs *procs;
    tess__tile_policy_spec spec;
    tess__tile_plan plan;
    /* static and ws policies: a list of fixed tiles per processor */
    tess__tile_segment **lists;
    int *list_len, *list_head;
    uint64_t own_cells; /* the rank's own work, at the start */
    /* the bootstrap: this rank's ended at boot_seconds (booted), and the
     * largest final size over the ranks whose TILE_BOOT came */
    int booted, boots;
    double boot_seconds;
    uint64_t boot_agreed;
    uint64_t tried[TILE_MAX_PROCS][16]; /* bootstrap tile sizes, per processor */
    int ntried[TILE_MAX_PROCS];
    double startup_s[TILE_MAX_PROCS]; /* how long each processor took to start */
} tess__tile_policy;

/* The rank's own work under `spec`, for the started processors; routes
 * TILE_BOOT.  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_policy_init(tess__tile_policy *pol, tess__tile_link *l, tess__tile_store *s,
                           tess__tile_procs *procs, const tess__tile_policy_spec *spec);
void tess__tile_policy_free(tess__tile_policy *pol);
/* Queue tiles on the processors that want them (a failure ends the run). */
void tess__tile_policy_dispatch(tess__tile_policy *pol);
/* Has no processor a tile queued or running? */
int tess__tile_policy_idle(const tess__tile_policy *pol);
/* Tell every rank when this rank's bootstrap ended, once it did. */
void tess__tile_policy_check_boot(tess__tile_policy *pol);
/* A processor finished a tile: teach the plan, and give back the queues
 * that now end too late. */
void tess__tile_policy_done(tess__tile_policy *pol, const tess__tile_done *d);
/* Processor proc's start-up (device, program build) ended after `seconds`:
 * it takes tiles from now on.  Until then no policy hands it any, so the
 * job never waits for a processor that is still starting. */
void tess__tile_policy_started(tess__tile_policy *pol, int proc, double seconds);
/* Work whose input is here (local, read, or a fetched chunk). */
int tess__tile_policy_add_work(tess__tile_policy *pol, const tess__tile_segment *s);
/* Cells not handed to a processor, those waiting for input included. */
uint64_t tess__tile_policy_left(const tess__tile_policy *pol);
/* Does the policy move work between ranks (every one but static)? */
int tess__tile_policy_shares(const tess__tile_policy *pol);
/* Remove up to `cells` cells of work that has not moved yet (local data or
 * not fetched), for a thief, none below a tile's minimum; the segments in
 * out (malloc'd).  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_policy_give(tess__tile_policy *pol, uint64_t cells, tess__tile_segment **out,
                           int *n);
/* The rank's processors' summed best rates, cells per second. */
double tess__tile_policy_rate(const tess__tile_policy *pol);
/* Seconds until the processors run out of queued work, all working
 * together: the queued cells over the aggregate rate. */
double tess__tile_policy_queued_seconds(const tess__tile_policy *pol);

#endif
