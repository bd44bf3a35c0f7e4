/*
 * plan.h — the decisions of a tiles controller (the APC+ paper's Algorithm
 * 1), without threads or messages: which processor gets the next tile, and
 * how large it is.  The controller thread asks tess__tile_plan_next while
 * it has work to hand out and reports each finished tile with
 * tess__tile_plan_done; a test drives the same calls from a simulated clock.
 *
 *   - Bootstrap: each processor gets one tile at a time, its size doubling
 *     from the minimum until a tile takes at least the threshold time.
 *   - Then each processor is kept with no more than T seconds of queued work
 *     (estimated with its own model), and no more than half the estimated
 *     time left, in tiles of the size with its best measured rate;
 *     processors are served round robin.
 *   - Near the end, Algorithm 2 shares the remaining work so that all
 *     processors finish together; a processor's tiles shrink to half of its
 *     share (never below the minimum), so no large last tile sets the finish
 *     time, and a processor whose queue already ends after the common finish
 *     time gets nothing more.  (With more than 64 processors on one rank the
 *     shares are not computed and tiles keep their best size to the end.)
 *
 * Private to src/tile.
 */
#ifndef TESS_SRC_TILE_PLAN_H
#define TESS_SRC_TILE_PLAN_H

#include <stdint.h>
#include "tile/area.h"
#include "tile/model.h"

typedef struct tess__tile_proc {
    tess__tile_model model;
    tess__tile_boot boot;
    double queued_s; /* estimated seconds of the tiles given and not finished */
    /* How much of queued_s is behind it: the seconds its running tile has
     * run (at most that tile's estimate), set by the caller before
     * tess__tile_plan_next; 0 when unknown or idle. */
    double running_s;
    int queued_tiles;
    uint32_t finished; /* tiles done; the first is a warm-up, not measured */
    int last_off;      /* the last tile was far slower (1) or faster (-1) than estimated */
    int stale;         /* tiles still queued that were estimated before the last rescale */
    /* Still starting (a device opening, a program building, in its own
     * thread): it gets no tile, counts in no share and no bootstrap, so the
     * job never waits for it; the caller clears it when it is ready. */
    int starting;
} tess__tile_proc;

typedef struct tess__tile_plan {
    tess__tile_area area;
    tess__tile_segment *segs; /* the work not handed out yet, in order */
    int64_t nsegs, first, cap;
    tess__tile_segment last; /* the last tile cut (owner and chunk of what it was cut from) */
    uint64_t remaining;      /* cells in segs */
    tess__tile_proc *procs;
    int nprocs, next_rr;
    double queue_s; /* T: the most queued work per processor */
    uint64_t min_cells, max_cells;
    /* Past its bootstrap a processor's tiles are at least the size that
     * ended its bootstrap and at least floor_cells (the largest such size
     * over all ranks, once they agreed): below it, tiles are too short to
     * measure or to amortise their overhead.  Only the end game shrinks
     * tiles further, down to min_cells. */
    uint64_t floor_cells;
    /* Seconds from now to the global estimated end time (all ranks' work
     * left over their summed rates, exchanged every 100 ms; control.c), 0
     * when unknown (one rank): near the end a tile is sized to end by it as
     * well, so that a rank holding more than its part keeps the rest in its
     * work, where a thief can take it, not in long tiles. */
    double global_left_s;
} tess__tile_plan;

/* The whole area as work for nprocs processors; queue_s is T, threshold_s
 * the bootstrap's.  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_plan_init(tess__tile_plan *p, const tess__tile_area *area, int nprocs,
                         double queue_s, double threshold_s);
/* The same with no work: segments come from tess__tile_plan_push. */
int tess__tile_plan_init_empty(tess__tile_plan *p, const tess__tile_area *area, int nprocs,
                               double queue_s, double threshold_s);
void tess__tile_plan_free(tess__tile_plan *p);
/* Add work at the end.  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_plan_push(tess__tile_plan *p, const tess__tile_segment *s);
/* Rows [lo, hi) of the area, whose input `owner` holds, as work: the
 * boxes tess__tile_undone_boxes leaves of them (done: a restored
 * checkpoint's cells, or NULL).  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_plan_add_rows(tess__tile_plan *p, const uint8_t *done, int64_t lo, int64_t hi,
                             int owner);
/* A tile taken back from a processor's queue: joined to the work it borders
 * (a late GPU then takes the CPUs' recalled tiles in one, not one by one),
 * else added at the end.  TESS_ERR_NOMEM or TESS_OK. */
int tess__tile_plan_give_back(tess__tile_plan *p, const tess__tile_segment *s);
/* Cut a tile of about `cells` cells from the first segment with work into
 * *box (tess__tile_cut: as square as the bounds allow; p->last describes
 * it, the pieces left beside it are cut next); its cells, 0 when there is
 * no work. */
uint64_t tess__tile_plan_cut(tess__tile_plan *p, uint64_t cells, tess__tile_box *box);
/* Take up to `cells` cells from the end of the work, whole segments first,
 * only from segments whose data has not moved (chunk NULL) and, when owner
 * >= 0, only those of that owner; at most max segments into out.  Returns
 * the cells taken. */
uint64_t tess__tile_plan_take_tail(tess__tile_plan *p, uint64_t cells, int owner,
                                   tess__tile_segment *out, int max, int *n);

/* The next tile to hand out: 1 with its processor, box, cells and estimated
 * seconds (what tess__tile_plan_done must be given back), or 0 when no
 * processor should get work now (all queues full, or no work left). */
int tess__tile_plan_next(tess__tile_plan *p, int *proc_out, tess__tile_box *box_out,
                         uint64_t *cells_out, double *est_out);
/* Processor `proc` finished a tile of `cells` cells, estimated at est
 * seconds, in `seconds`.  A processor's first tile is its warm-up (thread
 * start, caches, an OpenCL program build): it teaches the model nothing
 * and does not end the bootstrap. */
/* The seconds of work processor i still has queued: its running tile's
 * estimate counts only for the part not yet run (running_s). */
double tess__tile_plan_queue_left(const tess__tile_plan *p, int i);
/* The size processor i's tiles have past its bootstrap (its best measured
 * size at or above its floor) and that size's rate. */
uint64_t tess__tile_plan_best(const tess__tile_plan *p, int i, double *rate);
void tess__tile_plan_done(tess__tile_plan *p, int proc, uint64_t cells, double est, double seconds);
/* The processor whose unstarted tiles should go back to the work (through
 * tess__tile_plan_recalled and tess__tile_plan_push) for the plan to share
 * anew, or -1: when `idle` (a processor that just finished a tile, or -1)
 * has nothing queued and nothing is left to hand out, the one with at
 * least two tiles whose queue ends last; and at any time one whose queue,
 * less one of its tiles, ends after Algorithm 2's common finish time (a
 * fast processor arrived late: the queues of the others, filled for T
 * seconds, would end after it had done everything else). */
int tess__tile_plan_victim(const tess__tile_plan *p, int idle);
/* Processor proc's unstarted tile, estimated at est seconds, was taken back. */
void tess__tile_plan_recalled(tess__tile_plan *p, int proc, double est);

#endif
