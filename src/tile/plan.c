/*
 * plan.c — a tiles controller's decisions (plan.h).
 */
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"
#include "tile/plan.h"

/* The smallest and largest tile of the area, in cells: the first
 * dimension's fewest and most rows of the widest cross-section (the sizes
 * the search tries; their shape is tess__tile_cut's). */
static void cell_bounds(const tess__tile_area *a, uint64_t *min_out, uint64_t *max_out)
{
    uint64_t cross = tess__tile_area_max_cross(a);
    *min_out = cross * (uint64_t)a->min[0];
    *max_out = cross * (uint64_t)a->max[0];
}

int tess__tile_plan_init_empty(tess__tile_plan *p, const tess__tile_area *area, int nprocs,
                               double queue_s, double threshold_s)
{
    *p = (tess__tile_plan){.area = *area, .nprocs = nprocs, .queue_s = queue_s};
    p->cap = 16;
    p->segs = malloc((size_t)p->cap * sizeof *p->segs);
    p->procs = calloc((size_t)(nprocs > 0 ? nprocs : 1), sizeof *p->procs);
    if (p->segs == NULL || p->procs == NULL) {
        tess__tile_plan_free(p);
        return TESS_ERR_NOMEM;
    }
    cell_bounds(area, &p->min_cells, &p->max_cells);
    for (int i = 0; i < nprocs; i++) {
        tess__tile_model_init(&p->procs[i].model);
        tess__tile_boot_init(&p->procs[i].boot, p->min_cells, p->max_cells, threshold_s);
    }
    return TESS_OK;
}

int tess__tile_plan_init(tess__tile_plan *p, const tess__tile_area *area, int nprocs,
                         double queue_s, double threshold_s)
{
    int rc = tess__tile_plan_init_empty(p, area, nprocs, queue_s, threshold_s);
    tess__tile_segment s = tess__tile_rows_segment(area, 0, area->extent[0], -1);
    return rc == TESS_OK ? tess__tile_plan_push(p, &s) : rc;
}

static int empty(const tess__tile_segment *s) { return tess__tile_box_cells(&s->box) == 0; }

int tess__tile_plan_push(tess__tile_plan *p, const tess__tile_segment *s)
{
    if (empty(s)) return TESS_OK;
    if (p->first > 0 && p->first == p->nsegs) p->first = p->nsegs = 0; /* reuse the room */
    if (p->nsegs == p->cap) {
        int64_t cap = p->cap * 2;
        tess__tile_segment *segs = realloc(p->segs, (size_t)cap * sizeof *segs);
        if (segs == NULL) return TESS_ERR_NOMEM;
        p->segs = segs;
        p->cap = cap;
    }
    p->segs[p->nsegs++] = *s;
    p->remaining += tess__tile_segment_cells(&p->area, s);
    return TESS_OK;
}

/* Room for n segments before the first (the pieces a cut leaves beside its
 * tile are worked on next). */
static int room_in_front(tess__tile_plan *p, int64_t n)
{
    if (p->first >= n) return TESS_OK;
    int64_t shift = n - p->first + 16;
    if (p->nsegs + shift > p->cap) {
        int64_t cap = (p->nsegs + shift) * 2;
        tess__tile_segment *segs = realloc(p->segs, (size_t)cap * sizeof *segs);
        if (segs == NULL) return TESS_ERR_NOMEM;
        p->segs = segs;
        p->cap = cap;
    }
    memmove(p->segs + p->first + shift, p->segs + p->first,
            (size_t)(p->nsegs - p->first) * sizeof *p->segs);
    p->first += shift;
    p->nsegs += shift;
    return TESS_OK;
}

typedef struct owned_rows {
    tess__tile_plan *p;
    int owner;
} owned_rows;

static int push_owned(void *arg, const tess__tile_box *box)
{
    owned_rows *w = arg;
    tess__tile_segment s = {.box = *box, .owner = w->owner};
    return tess__tile_plan_push(w->p, &s);
}

int tess__tile_plan_add_rows(tess__tile_plan *p, const uint8_t *done, int64_t lo, int64_t hi,
                             int owner)
{
    owned_rows w = {p, owner};
    return tess__tile_undone_boxes(&p->area, done, lo, hi, push_owned, &w);
}

uint64_t tess__tile_plan_cut(tess__tile_plan *p, uint64_t cells, tess__tile_box *box)
{
    while (p->first < p->nsegs && empty(&p->segs[p->first])) p->first++;
    if (p->first == p->nsegs || room_in_front(p, TESS__TILE_MAX_DIMS) != TESS_OK) return 0;
    tess__tile_segment *s = &p->segs[p->first], rest[TESS__TILE_MAX_DIMS];
    int nrest;
    p->last = *s;
    uint64_t got = tess__tile_cut(&p->area, s, cells, box, rest, &nrest);
    p->last.box = *box;
    p->remaining -= got;
    /* the tile took all of s's rows: the piece worked on last takes its
     * place (else the empty ones would pile up behind the first) */
    if (nrest > 0 && empty(s)) *s = rest[--nrest];
    p->first -= nrest;
    for (int k = 0; k < nrest; k++) p->segs[p->first + k] = rest[k];
    return got;
}

/* Can s and t join into one segment (one box, the same owner, input not
 * fetched)?  Then *into's box becomes the join. */
static int joined(const tess__tile_segment *s, const tess__tile_segment *t,
                  tess__tile_segment *into)
{
    return s->owner == t->owner && s->chunk == NULL && t->chunk == NULL &&
           tess__tile_box_join(&s->box, &t->box, &into->box);
}

/* Join s into a segment of the work it borders, and that one into the next
 * it then borders; 0 when it borders none. */
static int join(tess__tile_plan *p, const tess__tile_segment *s)
{
    tess__tile_segment *into = NULL;
    for (int64_t i = p->first; i < p->nsegs && into == NULL; i++)
        if (joined(&p->segs[i], s, &p->segs[i])) into = &p->segs[i];
    if (into == NULL) return 0;
    p->remaining += tess__tile_segment_cells(&p->area, s);
    for (int64_t i = p->first; i < p->nsegs; i++) {
        tess__tile_segment *t = &p->segs[i];
        if (t == into || !joined(into, t, into)) continue;
        t->box.hi[0] = t->box.lo[0];
        break;
    }
    return 1;
}

int tess__tile_plan_give_back(tess__tile_plan *p, const tess__tile_segment *s)
{
    if (empty(s) || join(p, s)) return TESS_OK;
    return tess__tile_plan_push(p, s);
}

static int movable(const tess__tile_segment *s, int owner)
{
    return !empty(s) && s->chunk == NULL && (owner < 0 || s->owner == owner);
}

uint64_t tess__tile_plan_take_tail(tess__tile_plan *p, uint64_t cells, int owner,
                                   tess__tile_segment *out, int max, int *n)
{
    uint64_t taken = 0;
    *n = 0;
    for (int64_t i = p->nsegs - 1; i >= p->first && taken < cells && *n < max; i--) {
        tess__tile_segment *s = &p->segs[i];
        if (!movable(s, owner)) continue;
        uint64_t got = tess__tile_split_tail(&p->area, s, cells - taken, &out[*n]);
        (*n)++;
        taken += got;
    }
    p->remaining -= taken;
    return taken;
}

void tess__tile_plan_free(tess__tile_plan *p)
{
    free(p->segs);
    free(p->procs);
    p->segs = NULL;
    p->procs = NULL;
}

static int all_booted(const tess__tile_plan *p)
{
    for (int i = 0; i < p->nprocs; i++)
        if (!p->procs[i].starting && !p->procs[i].boot.done) return 0;
    return 1;
}

/* Tile size for a processor past its bootstrap: its best size, cut to half
 * of its Algorithm-2 share of what is left; 0 when its share is nothing. */
static uint64_t proc_floor(const tess__tile_plan *p, int i)
{
    uint64_t f = p->procs[i].boot.next;
    return f > p->floor_cells ? f : p->floor_cells;
}

/* Processor i's best size at or above its floor, and that size's rate (or
 * its best rate at any size while nothing that large was measured). */
uint64_t tess__tile_plan_best(const tess__tile_plan *p, int i, double *rate)
{
    uint64_t floor = proc_floor(p, i);
    uint64_t best = tess__tile_model_best_from(&p->procs[i].model, floor, rate);
    if (best == 0) {
        tess__tile_model_best_size(&p->procs[i].model, rate);
        best = floor < p->max_cells ? floor : p->max_cells;
    }
    return best;
}

/* Counting the running tile's whole estimate made the processor that had
 * just started a tile look as busy as one about to finish, and the last
 * shares were off by up to a tile. */
double tess__tile_plan_queue_left(const tess__tile_plan *p, int i)
{
    const tess__tile_proc *q = &p->procs[i];
    double left = q->queued_s - q->running_s;
    return left > 0 ? left : 0.0;
}

/* Processor k's rate in the shares: past its bootstrap its best size's;
 * during it, the rate its results head for (tess__tile_boot_potential).
 * Its best rate so far alone (3779a40) was a fifth of an H200's at its
 * first tiles: the CPUs kept their 33 ms tiles, the GPU did the rest in
 * 30 ms and waited for them (the mix 1.37x the GPU alone). */
static double shares_rate(const tess__tile_plan *p, int k)
{
    double rate;
    tess__tile_plan_best(p, k, &rate);
    if (p->procs[k].boot.done || p->procs[k].starting) return rate;
    double potential = tess__tile_boot_potential(&p->procs[k].boot);
    return potential > rate ? potential : rate;
}

/* Would processor i's smallest tile end after everyone else, were it
 * given nothing more?  Then it gets nothing: at the end of the H200 run
 * the CPUs' one-row tiles (8 ms) ended after the GPU had done the rest. */
static int min_tile_too_late(const tess__tile_plan *p, int i, double *rate, const double *queued)
{
    uint64_t share[64];
    double mine = rate[i];
    rate[i] = 0;
    double without = tess__tile_allocate(p->nprocs, rate, queued, p->remaining, share);
    rate[i] = mine;
    return without > 0 && queued[i] + (double)p->min_cells / mine > without;
}

/* While another processor is still starting (a device opening), a tile
 * takes at most half the bootstrap threshold (not below the minimum): the
 * device may arrive any moment and, when it is a GPU, do everything else
 * in less than a CPU tile, and a running tile cannot be taken back (the
 * fake-CUDA reproduction: the CPUs' 18 ms tiles ended 20 ms after the
 * device had finished).  Tiles of 5 ms still cost a CPU under 1%. */
static int another_starting(const tess__tile_plan *p, int i)
{
    int starting = 0;
    for (int k = 0; k < p->nprocs; k++) starting |= k != i && p->procs[k].starting;
    return starting;
}

static uint64_t cap_while_starting(const tess__tile_plan *p, int i, double rate, uint64_t size)
{
    int starting = another_starting(p, i);
    double cap = rate * p->procs[i].boot.threshold / 2;
    if (!starting || !(rate > 0) || cap >= (double)size) return size;
    return cap > (double)p->min_cells ? (uint64_t)cap : p->min_cells;
}

/* The global estimated end comes before this rank's own finish: half of
 * what processor i can do by then (this rank holds more than its part; what
 * its tiles leave, a thief may take), but not below its floor — the
 * estimate is up to 100 ms old and may be early, and tiles below the floor
 * cost more overhead than they save. */
static uint64_t by_global_end(const tess__tile_plan *p, int i, double rate, double queued,
                              double finish, uint64_t size)
{
    double g = p->global_left_s;
    uint64_t floor = proc_floor(p, i);
    if (!(g > 0) || g >= finish || !(rate > 0) || size <= floor) return size;
    double cells = g > queued ? rate * (g - queued) / 2 : 0.0;
    if (cells < (double)floor) return floor;
    return cells < (double)size ? (uint64_t)cells : size;
}

/* Past its bootstrap, a processor's tiles are its best size, cut to half of
 * its Algorithm-2 share of what is left (every processor at its rate in the
 * shares, shares_rate); 0 when its share is nothing. */
static uint64_t settled_size(const tess__tile_plan *p, int i)
{
    double rate[64], queued[64], mine;
    uint64_t share[64], best = tess__tile_plan_best(p, i, &mine);
    best = cap_while_starting(p, i, mine, best);
    if (p->nprocs > 64) return best;
    for (int k = 0; k < p->nprocs; k++) {
        rate[k] = shares_rate(p, k);
        queued[k] = tess__tile_plan_queue_left(p, k);
    }
    double finish = tess__tile_allocate(p->nprocs, rate, queued, p->remaining, share);
    /* No queue longer than half the time left: what is queued cannot be
     * shared anew, so on a short job T alone would fix the split early. */
    if (share[i] == 0 || queued[i] >= 0.5 * finish) return 0;
    if (share[i] < p->min_cells && min_tile_too_late(p, i, rate, queued)) return 0;
    uint64_t half = share[i] / 2 > p->min_cells ? share[i] / 2 : p->min_cells;
    half = by_global_end(p, i, rate[i], queued[i], finish, half);
    return half < best ? half : best;
}

/* Does processor i take a tile now, and of how many cells (0: no)? */
static uint64_t wanted(const tess__tile_plan *p, int i)
{
    const tess__tile_proc *q = &p->procs[i];
    if (q->starting) return 0;
    if (!q->boot.done) return tess__tile_boot_want(&q->boot, q->queued_tiles);
    if (q->queued_s >= p->queue_s) return 0;
    /* While a device opens, one tile queued behind the running one and no
     * more: the tile floor (SAR's 4 rows, 25 ms on a CPU) made the 5 ms cap
     * moot, and the 14 CPUs of the H200 run held 100 ms queues each when the
     * GPU arrived, which ended 40 ms after it had done the rest. */
    if (q->queued_tiles >= 2 && another_starting(p, i)) return 0;
    /* Others still bootstrapping: the shares cannot be computed yet, and a
     * long queue handed out now could not be shared anew later. */
    if (q->queued_tiles >= 2 && !all_booted(p)) return 0;
    return settled_size(p, i);
}

static double estimate(const tess__tile_plan *p, int i, uint64_t cells)
{
    double rate = tess__tile_model_rate(&p->procs[i].model, cells);
    if (rate <= 0) tess__tile_model_best_size(&p->procs[i].model, &rate);
    return rate > 0 ? (double)cells / rate : p->queue_s;
}

int tess__tile_plan_next(tess__tile_plan *p, int *proc_out, tess__tile_box *box_out,
                         uint64_t *cells_out, double *est_out)
{
    if (p->remaining == 0) return 0;
    int idle = 1;
    for (int k = 0; k < p->nprocs; k++) idle &= p->procs[k].queued_tiles == 0;
    /* Round robin, idle processors first: at the end a processor waiting
     * for work must not see the last tile go to one that is still busy.
     * Work left and nobody busy: someone must take it, whatever the shares
     * say (rates unknown or too rough for this little work) — but only
     * when no processor wants it (a second pass): a CPU too slow for its
     * smallest tile took one while the GPU beside it was idle too. */
    for (int k = 0; k < (idle ? 4 : 2) * p->nprocs; k++) {
        int i = (p->next_rr + k) % p->nprocs;
        if ((k % (2 * p->nprocs) < p->nprocs) != (p->procs[i].queued_tiles == 0) ||
            p->procs[i].starting)
            continue;
        uint64_t want = wanted(p, i);
        if (want == 0 && k >= 2 * p->nprocs) want = tess__tile_plan_best(p, i, &(double){0});
        if (want == 0) continue;
        uint64_t cells = tess__tile_plan_cut(p, want, box_out);
        if (cells == 0) return 0;
        double est = estimate(p, i, cells);
        if (!p->procs[i].boot.done) tess__tile_boot_handed(&p->procs[i].boot, want);
        p->procs[i].queued_s += est;
        p->procs[i].queued_tiles++;
        p->next_rr = (i + 1) % p->nprocs;
        *proc_out = i;
        *cells_out = cells;
        *est_out = est;
        return 1;
    }
    return 0;
}

/* The common finish time of Algorithm 2 over what is queued and left, each
 * processor at its rate in the shares; 0 when nothing is left or known. */
static double common_finish(const tess__tile_plan *p)
{
    double rate[64], queued[64];
    uint64_t share[64];
    if (p->nprocs > 64 || p->remaining == 0) return 0.0;
    for (int k = 0; k < p->nprocs; k++) {
        rate[k] = shares_rate(p, k);
        queued[k] = tess__tile_plan_queue_left(p, k);
    }
    return tess__tile_allocate(p->nprocs, rate, queued, p->remaining, share);
}

/* How far past the common finish time a queue may end before its unstarted
 * tiles are taken back: a quarter of its mean tile (at least 1 ms), so that
 * estimates' noise does not shuffle tiles.  A whole tile (7ab64ae) left a CPU's
 * queued 40 ms tile in place while the GPU finished the rest in 10 ms. */
static double late_margin(const tess__tile_proc *q)
{
    double m = 0.25 * q->queued_s / q->queued_tiles;
    return m > 0.001 ? m : 0.001;
}

int tess__tile_plan_victim(const tess__tile_plan *p, int idle)
{
    int victim = -1;
    double latest = 0, finish = common_finish(p);
    for (int i = 0; i < p->nprocs; i++) {
        const tess__tile_proc *q = &p->procs[i];
        double left = tess__tile_plan_queue_left(p, i);
        if (i == idle || q->queued_tiles < 2 || left <= latest) continue;
        /* The end game on this rank (idle has nothing queued, nothing is
         * left to hand out): the queue that ends last; or a queue that,
         * less one of its tiles, still ends after the common finish time. */
        int dry = p->remaining == 0 && idle >= 0 && p->procs[idle].queued_tiles == 0;
        int late = finish > 0 && left - finish > late_margin(q);
        if (dry || late) latest = left, victim = i;
    }
    return victim;
}

void tess__tile_plan_recalled(tess__tile_plan *p, int proc, double est)
{
    tess__tile_proc *q = &p->procs[proc];
    q->queued_s = q->queued_s > est ? q->queued_s - est : 0.0;
    q->queued_tiles--;
}

void tess__tile_plan_done(tess__tile_plan *p, int proc, uint64_t cells, double est, double seconds)
{
    tess__tile_proc *q = &p->procs[proc];
    q->queued_s = q->queued_s > est ? q->queued_s - est : 0.0;
    q->running_s = 0.0; /* that was the running tile */
    q->queued_tiles--;
    if (q->finished++ == 0) return;
    /* Two tiles in a row far off their estimates, the same way: the
     * processor itself changed speed (slowed by another job, throttled), not
     * just this size class.  One alone is noise (a preempted tile). */
    int off = !(q->boot.done && est > 0) ? 0 : seconds > 2 * est ? 1 : seconds < 0.5 * est ? -1 : 0;
    /* The tiles queued when the model was rescaled were estimated before:
     * each of them, off the same way, rescaled it again (2.2 x 2.6 x 3.0 x
     * 2.9 x 3.2 x 4.2 in one run on a loaded machine), until the model's
     * rates were 0 and the processor got no share. */
    int stale = q->stale > 0;
    if (stale) q->stale--, off = 0;
    /* Far beyond what a preemption costs, one is enough: the next tile at
     * the old estimate would run at the slowed speed too, and at the end of
     * a job it ends long after everyone else (one CPU of two slowed to 5%:
     * 0.37 s against the 0.04 s a single slow tile's weight in the model
     * predicted).  A false alarm costs a few small tiles, until two in a
     * row run fast and scale the model back. */
    int slowed = !stale && q->boot.done && est > 0 && seconds >= TESS__TILE_SLOWED * est;
    if (slowed || (off != 0 && off == q->last_off)) {
        tess__tile_model_scale(&q->model, seconds / est);
        q->stale = q->queued_tiles;
        off = 0;
    }
    q->last_off = off;
    tess__tile_model_add(&q->model, cells, seconds);
    if (!q->boot.done) tess__tile_boot_record(&q->boot, cells, seconds);
}
