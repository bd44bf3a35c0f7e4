/*
 * model.h — the tiles face's planning arithmetic, free of threads and
 * messages so it can be tested by hand-worked examples (APC+, Parallel
 * Computing 2012):
 *
 *   - a performance model per processor: its processing rate (cells per
 *     second) as a function of the tile size, learned from every completed
 *     tile (model.c);
 *   - the bootstrap of Algorithm 1: tile sizes grow exponentially from the
 *     minimum until a tile takes at least a threshold time (model.c);
 *   - the work partitioner of Algorithm 2: given the work each processor
 *     still has queued and its rate, share the remaining work so that all
 *     processors finish together (allocate.c).
 *
 * Private to src/tile.
 */
#ifndef TESS_SRC_TILE_MODEL_H
#define TESS_SRC_TILE_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* Sizes are grouped by class = floor(log2(cells)): tiles of 1000 and 1023
 * cells share what they teach, tiles of 1000 and 4000 do not. */
#define TESS__TILE_CLASSES 64

typedef struct tess__tile_model {
    double cells[TESS__TILE_CLASSES];   /* processed, per size class */
    double seconds[TESS__TILE_CLASSES]; /* spent processing them */
    uint32_t tiles[TESS__TILE_CLASSES];
} tess__tile_model;

void tess__tile_model_init(tess__tile_model *m);
/* A tile of `cells` cells took `seconds` (> 0) to process. */
void tess__tile_model_add(tess__tile_model *m, uint64_t cells, double seconds);
/* The processor's speed changed by 1/factor at every size (a tile took
 * factor times its estimate): scale what was measured so far. */
void tess__tile_model_scale(tess__tile_model *m, double factor);
/* A tile that took this many times its estimate: the processor slowed down
 * (another job took its core, a GPU throttled).  Its model is scaled at
 * once (plan.c), the tiles queued for it at its old speed go back to the
 * work (policy.c, recall_if_slowed), and it takes no other before that
 * (proc.c, wait_until_seen). */
#define TESS__TILE_SLOWED 4.0
/* The measured rate of tiles of about `cells` cells (their class), or 0 if
 * no such tile has been measured. */
double tess__tile_model_rate(const tess__tile_model *m, uint64_t cells);
/* The size with the best measured rate: the mean size of the tiles of the
 * largest class whose rate is within TESS__TILE_NEAR of the best class's
 * (larger tiles cost less overhead, and tiny ones measure noisily); 0 when
 * nothing has been measured.  *rate_out (may be NULL) gets its rate. */
#define TESS__TILE_NEAR 0.95
uint64_t tess__tile_model_best_size(const tess__tile_model *m, double *rate_out);
/* The same among tiles of at least floor's class only (0 if none measured). */
uint64_t tess__tile_model_best_from(const tess__tile_model *m, uint64_t floor, double *rate_out);

/* ---- bootstrap (Algorithm 1, first phase) ---- */
typedef struct tess__tile_boot {
    uint64_t next;       /* size of the next tile to try */
    uint64_t max;        /* never larger */
    uint64_t ahead;      /* the size last handed out (tiles go out one ahead) */
    uint32_t handed;     /* bootstrap tiles handed out */
    uint64_t last_cells; /* the last result recorded: its size and seconds */
    double last_seconds;
    uint64_t prev_cells; /* the result before it (a smaller size), 0 if none */
    double prev_seconds;
    double best_rate; /* the best rate of the bootstrap's results, cells/s */
    double threshold; /* seconds a tile must take to end the bootstrap */
    int done;
} tess__tile_boot;

/* Start at min cells (>= 1), doubling up to max (>= min). */
void tess__tile_boot_init(tess__tile_boot *b, uint64_t min, uint64_t max, double threshold);
/* The size of the next bootstrap tile to hand out while `queued` of the
 * processor's tiles are unfinished, or 0: the minimum twice (the first is a
 * warm-up), then doubling.  A tile goes out one ahead while the running one
 * should take under half the threshold (from the last result, at its rate),
 * so the processor need not wait for its controller.  A tile that may end
 * the bootstrap is not followed by one twice its size, which would be
 * measured and, as the largest size near the best rate, settle the
 * processor on tiles twice as long as the bootstrap chose. */
uint64_t tess__tile_boot_want(const tess__tile_boot *b, int queued);
/* A bootstrap tile of `cells` was handed out. */
void tess__tile_boot_handed(tess__tile_boot *b, uint64_t cells);
/* A bootstrap tile of `cells` took `seconds`: the bootstrap ends when it
 * reached the maximum size, or took at least the threshold while its rate
 * no longer rose by TESS__TILE_RISE over the best of the sizes before (a GPU's rate keeps
 * rising long past the threshold: launch and copy costs amortise; a CPU's
 * is flat by then, so it stops where the threshold alone stopped it); else
 * the next tile is twice as large.  Returns b->done. */
#define TESS__TILE_RISE 1.10
int tess__tile_boot_record(tess__tile_boot *b, uint64_t cells, double seconds);
/* The rate a processor still in its bootstrap is heading for: the slope of
 * its last two sizes (a fixed cost per tile, then cells at the peak rate:
 * (n2 - n1) / (t2 - t1)), at least its best rate so far and at most
 * TESS__TILE_POTENTIAL times it; its best rate when there is no slope yet
 * or the bootstrap is done.  A GPU's first tiles are all fixed cost: at
 * 2048 cells its rate was a fifth of its peak (H200, SAR). */
#define TESS__TILE_POTENTIAL 8.0
double tess__tile_boot_potential(const tess__tile_boot *b);

/* ---- work partitioner (Algorithm 2) ---- */
/*
 * Share `work` cells among n processors so that all finish together:
 * processor i, with rate[i] > 0 cells/s and queued[i] seconds of work already
 * queued, gets share_out[i] = max(0, rate[i] * (T - queued[i])) cells, T the
 * common finish time that makes the shares add up to `work` (a processor
 * whose queue already ends after T gets nothing).  Shares are whole cells
 * and add up to `work` exactly; the cells lost to rounding go to the
 * processors with the largest fractions.  Processors with rate 0 (unknown or
 * failed) get nothing unless all have rate 0, in which case the work is split
 * equally.  Returns T (seconds from now), or 0 when work is 0.
 */
double tess__tile_allocate(int n, const double *rate, const double *queued, uint64_t work,
                           uint64_t *share_out);

#endif
