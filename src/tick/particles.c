/*
 * particles.c — the 2-D particles state class (tick_particles.h).
 *
 * A version (slot) is an unordered array of particles plus a bitmap of the
 * ids it holds, so merge() and step() can skip particles already present in
 * O(1): the runtime may fill a version over several merge() and step() calls
 * and a particle must never be computed twice.  STEP needs the neighbours of
 * a particle within the application's radius; a uniform grid (counting sort
 * of the particles into square cells of side >= radius) finds them, and the
 * grid is rebuilt only when STEP reads a version that changed since the last
 * build.  Neighbours are handed to STEP sorted by id, whatever order the
 * version was filled in: that order is what makes the application's sums
 * bitwise reproducible across partitions and algorithms.
 *
 * Checking mode (TESS_TICK_CHECK=1, tick.h): a version also records the
 * regions of the plane it holds every particle of — what init() and step()
 * filled in, and what the runtime says of received data (a round's ghost
 * layers, a new partition: tess__particles_held) — and a STEP whose result
 * is kept must have read its neighbourhood (the box of side 2 * radius
 * around the particle) inside one of them; otherwise a neighbour may be
 * missing (an RD too small, an RX or WX too large) and the step fails with
 * TESS_ERR_MISUSE, which process.c reports naming the tick.
 *
 * Packing and counting skip whole blocks of BLOCK consecutive particles
 * whose bounding box misses the region: a slot is filled in STEP's cell
 * order (and merged in its sender's), so a block covers a few neighbouring
 * cells, and a round's border strip costs about its own particles instead
 * of a walk over the partition per neighbour.  The walk keeps the slot's
 * order, so the packed bytes are those of a full scan.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "tick/tick_internal.h"
#include "tessera/tick_particles.h"

/* Checking mode: a region a version holds every particle of — box minus
 * the negs (clipped to it).  Computing ahead per side subtracts one query
 * per late neighbour; beyond HELD_NEGS the rest are dropped, which claims
 * more than is held: a missed error, never a false one. */
#define HELD_NEGS 4
typedef struct held {
    tess_particle_rect box;
    int nneg;
    tess_particle_rect neg[HELD_NEGS];
} held;

/* The closed bounding box of a block of particles (all finite). */
typedef struct block_box {
    double x0, x1, y0, y1;
} block_box;

typedef struct pslot {
    tess_particle *p;
    size_t n, cap;
    /* Boxes of p[b*BLOCK .. (b+1)*BLOCK-1], valid for b < `boxed`: built by
     * the first pack or count after a change, for the packs that follow.
     * Particles appended (ghost data merged between two packs of a round)
     * leave the boxes of the whole blocks before them valid. */
    size_t boxed;
    block_box *blocks;
    size_t blocks_cap;
    uint64_t *present; /* bitmap over ids 0 .. count-1 */
    size_t words;      /* present's */
    tess_particles_view view;
    /* Spatial index, valid while `indexed`: the particles of cell
     * (cx, cy) are p[items[start[c]] .. items[start[c+1]-1]], c = cy*nx + cx. */
    int indexed;
    double ox, oy, cell;
    int64_t nx, ny;
    uint32_t *start, *items;
    size_t start_cap, items_cap;
    held *held; /* checking mode only */
    int nheld, held_cap;
} pslot;

typedef struct pstate {
    const tess_tick_app *app;
    const tess_particle_fns *fns;
    double r2; /* radius * radius */
    int nslots;
    pslot *slots;
    int check;               /* TESS_TICK_CHECK=1: record and check held regions */
    void *nbr_mem;           /* the arrays below, one block (nbrs_reserve) */
    tess_particle *nbrs;     /* STEP's neighbour list, reused */
    tess_particle *near;     /* a cell's candidate neighbours, sorted by id (step_cell) */
    uint64_t *keys;          /* their sort keys */
    uint64_t *keys_tmp;      /* room for the radix sort (sort_by_id) */
    double *near_x, *near_y; /* their positions */
    uint32_t *pick;          /* which of them are one particle's neighbours */
    size_t nbrs_cap;
    tess_query hull; /* create()'s: what any version may hold (presize_slots) */
    int has_hull;
} pstate;

/* ---------------------------------------------------------------- packing */

/* The record is the particle's five fields, little-endian: on a
 * little-endian host with the struct laid out as the record (the usual
 * case), one copy instead of byte shuffles (they were 2.3% of a fish run's
 * instructions on the virtual clock, a third of the runtime's own). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PARTICLE_RAW (sizeof(tess_particle) == TESS_PARTICLE_BYTES)
#else
#define PARTICLE_RAW 0
#endif

/* Inline for pack() and merge(): the exported functions are called through
 * the PLT. */
static inline void encode_record(const tess_particle *p, unsigned char *out)
{
    if (PARTICLE_RAW) {
        memcpy(out, p, TESS_PARTICLE_BYTES);
        return;
    }
    tess__put_le64(out, p->id);
    tess__put_f64(out + 8, p->x);
    tess__put_f64(out + 16, p->y);
    tess__put_f64(out + 24, p->vx);
    tess__put_f64(out + 32, p->vy);
}

void tess_particle_encode(const tess_particle *p, unsigned char *out) { encode_record(p, out); }

static inline void decode_record(const unsigned char *in, tess_particle *out)
{
    if (PARTICLE_RAW) {
        memcpy(out, in, TESS_PARTICLE_BYTES);
        return;
    }
    out->id = tess__get_le64(in);
    out->x = tess__get_f64(in + 8);
    out->y = tess__get_f64(in + 16);
    out->vx = tess__get_f64(in + 24);
    out->vy = tess__get_f64(in + 32);
}

void tess_particle_decode(const unsigned char *in, tess_particle *out) { decode_record(in, out); }

/* v - v is 0 for a finite v and NaN for an infinite or NaN one: one
 * compare for the four (every record merged is checked). */
static int particle_finite(const tess_particle *p)
{
    double z = (p->x - p->x) + (p->y - p->y) + (p->vx - p->vx) + (p->vy - p->vy);
    return z == 0;
}

int tess_particle_region_contains(const tess_region *r, double x, double y)
{
    for (int i = 0; i < r->npos; i++) {
        tess_particle_rect q = tess_particle_rect_of(&r->pos[i]);
        if (!tess_particle_rect_contains(&q, x, y)) return 0;
    }
    for (int i = 0; i < r->nneg; i++) {
        tess_particle_rect q = tess_particle_rect_of(&r->neg[i]);
        if (tess_particle_rect_contains(&q, x, y)) return 0;
    }
    return 1;
}

/*
 * A region unpacked once for a walk over a slot: the intersection of its
 * pos rectangles (half-open, so the same test) and its negs.  NULL region:
 * everything (merge's "all").  Unpacking every rectangle for every particle
 * was most of pack() and count(), which the runtime calls every round.
 */
#define FLAT_NEGS 4
typedef struct flat_region {
    int all, generic; /* generic: too many negs or a NaN bound, ask r */
    const tess_region *r;
    tess_particle_rect box;
    int nneg;
    tess_particle_rect neg[FLAT_NEGS];
} flat_region;

static int rect_has_nan(const tess_particle_rect *q)
{
    return isnan(q->x0) || isnan(q->x1) || isnan(q->y0) || isnan(q->y1);
}

static flat_region flatten(const tess_region *r)
{
    flat_region f = {.all = r == NULL, .r = r, .box = {-INFINITY, INFINITY, -INFINITY, INFINITY}};
    if (r == NULL) return f;
    if (r->nneg > FLAT_NEGS) f.generic = 1;
    for (int i = 0; i < r->npos && !f.generic; i++) {
        tess_particle_rect q = tess_particle_rect_of(&r->pos[i]);
        f.generic = rect_has_nan(&q);
        if (q.x0 > f.box.x0) f.box.x0 = q.x0;
        if (q.x1 < f.box.x1) f.box.x1 = q.x1;
        if (q.y0 > f.box.y0) f.box.y0 = q.y0;
        if (q.y1 < f.box.y1) f.box.y1 = q.y1;
    }
    for (int i = 0; i < r->nneg && !f.generic; i++) {
        f.neg[i] = tess_particle_rect_of(&r->neg[i]);
        f.generic = rect_has_nan(&f.neg[i]);
    }
    f.nneg = r->nneg;
    return f;
}

static int flat_contains(const flat_region *f, const tess_particle *p)
{
    if (f->all) return 1;
    if (f->generic) return tess_particle_region_contains(f->r, p->x, p->y);
    if (!tess_particle_rect_contains(&f->box, p->x, p->y)) return 0;
    for (int i = 0; i < f->nneg; i++)
        if (tess_particle_rect_contains(&f->neg[i], p->x, p->y)) return 0;
    return 1;
}

/* NULL region: everything (merge's "all"). */
static int in_region(const tess_region *r, const tess_particle *p)
{
    return !r || tess_particle_region_contains(r, p->x, p->y);
}

/* ---------------------------------------------------------------- slots */

static int slot_has(const pslot *s, uint64_t id)
{
    return (int)((s->present[id >> 6] >> (id & 63)) & 1);
}

#define BLOCK 16

/* The view follows the particles' array and count. */
static void slot_moved(pslot *s)
{
    s->view.count = (int64_t)s->n;
    s->view.p = s->p;
}

/* The particles from `from` on changed (or were added, or removed). */
static void slot_changed_from(pslot *s, size_t from)
{
    s->indexed = 0;
    if (s->boxed > from / BLOCK) s->boxed = from / BLOCK;
    slot_moved(s);
}

/* Room for `more` particles; TESS_ERR_NOMEM leaves the slot as it was. */
static int slot_reserve(pslot *s, size_t more)
{
    if (s->n + more <= s->cap) return TESS_OK;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->n + more) cap *= 2;
    tess_particle *p = realloc(s->p, cap * sizeof *p);
    if (!p) return TESS_ERR_NOMEM;
    s->p = p;
    s->cap = cap;
    slot_moved(s); /* the same particles: the index and boxes still hold */
    return TESS_OK;
}

static void slot_mark(pslot *s, uint64_t id) { s->present[id >> 6] |= (uint64_t)1 << (id & 63); }

/* Append a particle the slot does not hold yet (room reserved). */
static void slot_put(pslot *s, const tess_particle *p)
{
    s->p[s->n++] = *p;
    slot_mark(s, p->id);
    slot_changed_from(s, s->n - 1);
}

static int slot_add(pslot *s, const tess_particle *p)
{
    int rc = slot_reserve(s, 1);
    if (rc == TESS_OK) slot_put(s, p);
    return rc;
}

static void slot_clear(pslot *s)
{
    /* Every bit set belongs to a particle being removed: zero whole words,
     * in O(particles) rather than O(count) where the particles are few;
     * else one memset (a scattered store per particle is some 2 ns, a
     * word of memset well under 1: fish at the paper's scale, 39,200 ids
     * and 1,000-2,000 particles a slot, spent 5% of the runtime's own CPU
     * in the loop). */
    if (s->words <= 4 * s->n) memset(s->present, 0, s->words * sizeof *s->present);
    else
        for (size_t i = 0; i < s->n; i++) s->present[s->p[i].id >> 6] = 0;
    s->n = 0;
    s->nheld = 0;
    slot_changed_from(s, 0);
}

static void slot_free(pslot *s)
{
    TESS_FREE_ALL(s->p, s->present, s->start, s->items, s->held, s->blocks);
}

/* ---------------------------------------------------------------- the spatial index */

/* Cell coordinate of v along an axis of `n` cells from origin o; values
 * outside the grid (and ±INFINITY, NaN) clamp to the border cells. */
static int64_t cell_coord(double v, double o, double cell, int64_t n)
{
    double t = (v - o) / cell;
    if (!(t >= 0)) return 0;
    if (t >= (double)(n - 1)) return n - 1;
    return (int64_t)t;
}

/* Pick the cell size (>= radius, and coarse enough that there are not many
 * more cells than particles) and the grid extent for the slot's bounding box. */
static void index_layout(pslot *s, double radius)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < s->n; i++) {
        const tess_particle *p = &s->p[i];
        if (p->x < x0) x0 = p->x;
        if (p->x > x1) x1 = p->x;
        if (p->y < y0) y0 = p->y;
        if (p->y > y1) y1 = p->y;
    }
    double w = x1 - x0, h = y1 - y0, cell = radius > 0 ? radius : 1.0;
    s->ox = x0, s->oy = y0, s->nx = s->ny = 1;
    if (s->n == 0 || !isfinite(w) || !isfinite(h) || !isfinite(cell)) {
        s->cell = INFINITY;
        return;
    }
    double most = 4.0 * (double)s->n + 64.0;
    while ((w / cell + 1.0) * (h / cell + 1.0) > most) cell *= 2.0;
    s->cell = cell;
    s->nx = (int64_t)(w / cell) + 1;
    s->ny = (int64_t)(h / cell) + 1;
}

static int64_t cell_of(const pslot *s, const tess_particle *p)
{
    return cell_coord(p->y, s->oy, s->cell, s->ny) * s->nx +
           cell_coord(p->x, s->ox, s->cell, s->nx);
}

static int grow_u32(uint32_t **a, size_t *cap, size_t want)
{
    if (want <= *cap) return TESS_OK;
    uint32_t *p = realloc(*a, want * sizeof *p);
    if (!p) return TESS_ERR_NOMEM;
    *a = p;
    *cap = want;
    return TESS_OK;
}

static int index_build(pslot *s, double radius)
{
    if (s->indexed) return TESS_OK;
    index_layout(s, radius);
    size_t cells = (size_t)(s->nx * s->ny);
    if (grow_u32(&s->start, &s->start_cap, cells + 1) != TESS_OK ||
        grow_u32(&s->items, &s->items_cap, s->n ? s->n : 1) != TESS_OK)
        return TESS_ERR_NOMEM;
    memset(s->start, 0, (cells + 1) * sizeof *s->start);
    for (size_t i = 0; i < s->n; i++) s->start[cell_of(s, &s->p[i]) + 1]++;
    for (size_t c = 0; c < cells; c++) s->start[c + 1] += s->start[c];
    /* Fill using start[c] as a cursor, then shift back. */
    for (size_t i = 0; i < s->n; i++) s->items[s->start[cell_of(s, &s->p[i])]++] = (uint32_t)i;
    memmove(s->start + 1, s->start, cells * sizeof *s->start);
    s->start[0] = 0;
    s->indexed = 1;
    return TESS_OK;
}

/* Cells overlapping [x0, x1] x [y0, y1] (closed; bounds may be infinite). */
typedef struct cell_range {
    int64_t cx0, cx1, cy0, cy1;
} cell_range;

static cell_range cells_of_box(const pslot *s, double x0, double x1, double y0, double y1)
{
    cell_range c = {cell_coord(x0, s->ox, s->cell, s->nx), cell_coord(x1, s->ox, s->cell, s->nx),
                    cell_coord(y0, s->oy, s->cell, s->ny), cell_coord(y1, s->oy, s->cell, s->ny)};
    return c;
}

/* The items of row cy's cells cx0..cx1: one run [k0, k1) of items[], as
 * cells are numbered row by row and start[] is cumulative.  Gathering
 * neighbours and STEP walk a box of cells a row at a time through it. */
typedef struct item_run {
    uint32_t k0, k1;
} item_run;

static inline item_run row_items(const pslot *s, const cell_range *c, int64_t cy)
{
    int64_t row = cy * s->nx;
    return (item_run){s->start[row + c->cx0], s->start[row + c->cx1 + 1]};
}

/* ---------------------------------------------------------------- neighbours */

/* Shell sort (Ciura's gaps): neighbour lists are short, and an inline sort of
 * 8-byte keys is several times faster than qsort over 40-byte particles. */
static void sort_keys(uint64_t *a, size_t n)
{
    static const size_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        size_t gap = gaps[g];
        for (size_t i = gap; i < n; i++) {
            uint64_t v = a[i];
            size_t j = i;
            for (; j >= gap && a[j - gap] > v; j -= gap) a[j] = a[j - gap];
            a[j] = v;
        }
    }
}

/* Sort keys id << 32 | index by id (ids in a slot are distinct) when every
 * id is below 2^(8*b) for the b bytes of idbits: a least-significant-digit
 * radix sort, a byte a pass, through tmp.  A cell's candidates number
 * hundreds where the school gathers; the shell sort of that many was a
 * quarter of a fish run's CPU.  Short lists keep the shell sort. */
static void sort_by_id(uint64_t *a, uint64_t *tmp, size_t n, uint64_t idbits)
{
    if (n < 96) {
        sort_keys(a, n);
        return;
    }
    uint64_t *src = a, *dst = tmp;
    for (int shift = 32; shift < 64 && (idbits >> (shift - 32)) != 0; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((src[i] >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 255]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

/* Room for n neighbours and for n candidates with their keys, positions and
 * picks: one block, carved into the arrays (the 8-byte ones first). */
static int nbrs_reserve(pstate *st, size_t n)
{
    if (n < st->nbrs_cap) return TESS_OK;
    size_t cap = st->nbrs_cap ? st->nbrs_cap : 64;
    while (cap <= n) cap *= 2;
    size_t each =
        2 * sizeof(tess_particle) + 2 * sizeof(uint64_t) + 2 * sizeof(double) + sizeof(uint32_t);
    unsigned char *m = malloc(cap * each);
    if (!m) return TESS_ERR_NOMEM;
    free(st->nbr_mem);
    st->nbr_mem = m;
    st->nbrs = (tess_particle *)m;
    st->near = st->nbrs + cap;
    st->keys = (uint64_t *)(st->near + cap);
    st->keys_tmp = st->keys + cap;
    st->near_x = (double *)(st->keys_tmp + cap);
    st->near_y = st->near_x + cap;
    st->pick = (uint32_t *)(st->near_y + cap);
    st->nbrs_cap = cap;
    return TESS_OK;
}

/* The particles of slot s in the cells of c, sorted by id, into st->near
 * (and their positions into near_x, near_y); their number, or
 * TESS_ERR_NOMEM.  Sorts keys id << 32 | index (ids and indices are below
 * 2^32, see create), then copies the particles in that order. */
static int64_t gather_sorted(pstate *st, const pslot *s, const cell_range *c)
{
    size_t n = 0;
    for (int64_t cy = c->cy0; cy <= c->cy1; cy++) {
        item_run run = row_items(s, c, cy);
        n += run.k1 - run.k0;
    }
    if (nbrs_reserve(st, n) != TESS_OK) return TESS_ERR_NOMEM; /* keeps no contents */
    n = 0;
    uint64_t idbits = 0;
    for (int64_t cy = c->cy0; cy <= c->cy1; cy++) {
        item_run run = row_items(s, c, cy);
        for (uint32_t k = run.k0; k < run.k1; k++) {
            uint64_t id = s->p[s->items[k]].id;
            idbits |= id;
            st->keys[n++] = id << 32 | s->items[k];
        }
    }
    sort_by_id(st->keys, st->keys_tmp, n, idbits);
    for (size_t i = 0; i < n; i++) {
        const tess_particle *q = &s->p[st->keys[i] & 0xffffffffu];
        st->near[i] = *q;
        st->near_x[i] = q->x;
        st->near_y[i] = q->y;
    }
    return (int64_t)n;
}

/* The neighbours of `self` among the n sorted particles of st->near: the
 * others within the radius, in ascending id order, into st->nbrs.  The test
 * reads the positions alone and picks without a branch (a third or so
 * pass, at random: a branch on it was mispredicted often). */
static size_t pick_neighbours(pstate *st, size_t n, const tess_particle *self)
{
    const double *x = st->near_x, *y = st->near_y, r2 = st->r2;
    const uint64_t *keys = st->keys;
    uint32_t *pick = st->pick;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - self->x, dy = y[i] - self->y;
        pick[m] = (uint32_t)i;
        m += (size_t)((dx * dx + dy * dy <= r2) & ((keys[i] >> 32) != self->id));
    }
    for (size_t j = 0; j < m; j++) st->nbrs[j] = st->near[pick[j]];
    return m;
}

/* ---------------------------------------------------------------- held regions (checking mode) */

static tess_particle_rect rect_clip(tess_particle_rect a, tess_particle_rect b)
{
    return (tess_particle_rect){fmax(a.x0, b.x0), fmin(a.x1, b.x1), fmax(a.y0, b.y0),
                                fmin(a.y1, b.y1)};
}

static int rect_is_empty(const tess_particle_rect *r) { return !(r->x0 < r->x1 && r->y0 < r->y1); }

/* a within b (half-open rectangles; an empty a is within anything). */
static int rect_within(const tess_particle_rect *a, const tess_particle_rect *b)
{
    return rect_is_empty(a) ||
           (a->x0 >= b->x0 && a->x1 <= b->x1 && a->y0 >= b->y0 && a->y1 <= b->y1);
}

/* A neg of an entry that a whole held box covers subtracts nothing. */
static int covered(const pslot *s, const tess_particle_rect *r)
{
    for (int i = 0; i < s->nheld; i++)
        if (s->held[i].nneg == 0 && rect_within(r, &s->held[i].box)) return 1;
    return 0;
}

/* Drop the negs now covered, then entries a whole box contains: a version
 * filled piece by piece (work ahead, then the rest; replica layers ring by
 * ring) ends as one box, and the list stays a few entries long. */
static void held_tidy(pslot *s)
{
    for (int i = 0; i < s->nheld; i++) {
        held *h = &s->held[i];
        for (int j = 0; j < h->nneg;)
            if (covered(s, &h->neg[j])) h->neg[j] = h->neg[--h->nneg];
            else j++;
    }
    for (int i = 0; i < s->nheld;) {
        int inside = 0;
        for (int j = 0; j < s->nheld && !inside; j++)
            inside =
                j != i && s->held[j].nneg == 0 && rect_within(&s->held[i].box, &s->held[j].box) &&
                (s->held[i].nneg > 0 || j < i || !rect_within(&s->held[j].box, &s->held[i].box));
        if (inside) s->held[i] = s->held[--s->nheld];
        else i++;
    }
}

static int held_add(pslot *s, const tess_region *r)
{
    held h = {.box = {-INFINITY, INFINITY, -INFINITY, INFINITY}};
    for (int i = 0; i < r->npos; i++) h.box = rect_clip(h.box, tess_particle_rect_of(&r->pos[i]));
    if (rect_is_empty(&h.box)) return TESS_OK;
    for (int i = 0; i < r->nneg && h.nneg < HELD_NEGS; i++) {
        tess_particle_rect n = rect_clip(tess_particle_rect_of(&r->neg[i]), h.box);
        if (!rect_is_empty(&n)) h.neg[h.nneg++] = n;
    }
    if (covered(s, &h.box)) return TESS_OK; /* told again: nothing new */
    if (s->nheld == s->held_cap) {
        int cap = s->held_cap ? 2 * s->held_cap : 8;
        held *p = realloc(s->held, (size_t)cap * sizeof *p);
        if (!p) return TESS_ERR_NOMEM;
        s->held = p;
        s->held_cap = cap;
    }
    s->held[s->nheld++] = h;
    held_tidy(s);
    return TESS_OK;
}

/* A closed rectangle [x0, x1] x [y0, y1] (a STEP's reads), empty when x0 > x1
 * or y0 > y1. */
typedef struct closed_rect {
    double x0, x1, y0, y1;
} closed_rect;

/* The pieces of closed c that are in the half-open [lo, hi): below it,
 * inside it and from hi on, per axis; the last value below lo is
 * nextafter(lo, -inf), so the pieces stay closed and share no point. */
static double below(double v) { return nextafter(v, -INFINITY); }

static int closed_empty(const closed_rect *c) { return !(c->x0 <= c->x1 && c->y0 <= c->y1); }

static closed_rect closed_clip(closed_rect c, const tess_particle_rect *r)
{
    return (closed_rect){fmax(c.x0, r->x0), fmin(c.x1, below(r->x1)), fmax(c.y0, r->y0),
                         fmin(c.y1, below(r->y1))};
}

#define COVER_PIECES 64

/* Append piece to out[*n] when not empty; 0 when out is full. */
static int add_piece(closed_rect piece, closed_rect *out, int *n)
{
    if (closed_empty(&piece)) return 1;
    if (*n == COVER_PIECES) return 0;
    out[(*n)++] = piece;
    return 1;
}

/* What of c one held entry does not cover: c outside its box (up to four
 * pieces), and c inside its box but in one of its negs. */
static int uncovered_by(closed_rect c, const held *h, closed_rect *out, int *n)
{
    const tess_particle_rect *b = &h->box;
    int ok = add_piece((closed_rect){c.x0, fmin(c.x1, below(b->x0)), c.y0, c.y1}, out, n) &&
             add_piece((closed_rect){fmax(c.x0, b->x1), c.x1, c.y0, c.y1}, out, n);
    closed_rect mid = {fmax(c.x0, b->x0), fmin(c.x1, below(b->x1)), c.y0, c.y1};
    if (closed_empty(&mid)) return ok;
    ok = ok && add_piece((closed_rect){mid.x0, mid.x1, mid.y0, fmin(mid.y1, below(b->y0))}, out, n);
    ok = ok && add_piece((closed_rect){mid.x0, mid.x1, fmax(mid.y0, b->y1), mid.y1}, out, n);
    closed_rect in = closed_clip(c, b);
    for (int j = 0; j < h->nneg && ok && !closed_empty(&in); j++)
        ok = add_piece(closed_clip(in, &h->neg[j]), out, n);
    return ok;
}

/* Does the slot hold every particle a STEP of `self` may read?  The reads
 * may span several held regions (a version's own tuples computed ahead on
 * one side, a neighbour's received ones on the other): what no region
 * covers is cut out region by region.  Too many pieces to follow: held
 * (a missed error, never a false one). */
static int held_covers(const pslot *s, const tess_particle *self, double radius)
{
    closed_rect todo[COVER_PIECES], next[COVER_PIECES];
    int n = 1;
    todo[0] = (closed_rect){self->x - radius, self->x + radius, self->y - radius, self->y + radius};
    for (int i = 0; i < s->nheld && n > 0; i++) {
        int m = 0;
        for (int k = 0; k < n; k++)
            if (!uncovered_by(todo[k], &s->held[i], next, &m)) return 1;
        memcpy(todo, next, (size_t)m * sizeof *todo);
        n = m;
    }
    return n == 0;
}

void tess__particles_held(void *vst, int slot, const tess_region *r)
{
    pstate *st = vst;
    if (st && st->check && slot >= 0 && slot < st->nslots) (void)held_add(&st->slots[slot], r);
}

/* ---------------------------------------------------------------- class operations */

static void *particles_create(const tess_tick_app *app, int nslots, const tess_query *own,
                              const tess_query *hull)
{
    (void)own;
    /* Slot indices and ids must fit the 32-bit halves of the neighbour sort keys. */
    const tess_particle_fns *fns = app ? app->class_fns : NULL;
    if (!fns || !fns->init || !fns->step || !app->wd || nslots < 1 || fns->count >= UINT32_MAX ||
        !(fns->radius >= 0))
        return NULL;
    pstate *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->app = app;
    st->fns = fns;
    st->r2 = fns->radius * fns->radius;
    st->nslots = nslots;
    st->check = tess__tick_check_on();
    if (hull) st->hull = *hull, st->has_hull = 1;
    st->slots = calloc((size_t)nslots, sizeof *st->slots);
    if (!st->slots) goto fail;
    size_t words = (size_t)(fns->count / 64 + 1);
    for (int i = 0; i < nslots; i++) {
        st->slots[i].present = calloc(words, sizeof(uint64_t));
        if (!st->slots[i].present) goto fail;
        st->slots[i].words = words;
    }
    return st;
fail:
    for (int i = 0; st->slots && i < nslots; i++) slot_free(&st->slots[i]);
    free(st->slots);
    free(st);
    return NULL;
}

static void particles_destroy(void *vst)
{
    pstate *st = vst;
    if (!st) return;
    for (int i = 0; i < st->nslots; i++) slot_free(&st->slots[i]);
    free(st->slots);
    free(st->nbr_mem);
    free(st);
}

static pslot *slot_at(pstate *st, int slot)
{
    return slot >= 0 && slot < st->nslots ? &st->slots[slot] : NULL;
}

static void particles_clear(void *vst, int slot)
{
    pslot *s = slot_at(vst, slot);
    if (s) slot_clear(s);
}

/*
 * Give every slot room for `want` particles and write its pages once, at
 * set-up on the process's own thread: each slot otherwise grew from 64
 * particles through reallocs and freshly mapped pages during the first
 * ticks (a 100-tick fish run at the paper's scale: 3,087 reallocs, and
 * page faults under merge and STEP).  Room is only a hint: slots still grow
 * past it.
 */
static int presize_slots(pstate *st, size_t want)
{
    size_t cap = 64;
    while (cap < want + want / 4) cap *= 2;
    for (int i = 0; i < st->nslots; i++) {
        pslot *s = &st->slots[i];
        if (s->cap >= cap) continue;
        if (slot_reserve(s, cap - s->n) != TESS_OK) return TESS_ERR_NOMEM;
        volatile unsigned char *b = (volatile unsigned char *)s->p;
        for (size_t at = s->n * sizeof *s->p; at < s->cap * sizeof *s->p; at += 4096) b[at] = 0;
    }
    return TESS_OK;
}

static int particles_init(void *vst, int slot, const tess_region *r)
{
    pstate *st = vst;
    pslot *s = slot_at(st, slot);
    if (!s || !r) return TESS_ERR_INVAL;
    tess_region hull = {.npos = 1, .pos = &st->hull};
    size_t in_hull = 0;
    for (uint64_t id = 0; id < st->fns->count; id++) {
        tess_particle p;
        st->fns->init(st->app->user, id, &p);
        p.id = id;
        if (!particle_finite(&p)) return TESS_ERR_INVAL;
        if (in_region(r, &p) && !slot_has(s, id) && slot_add(s, &p) != TESS_OK)
            return TESS_ERR_NOMEM;
        in_hull += st->has_hull && in_region(&hull, &p);
    }
    if (presize_slots(st, in_hull) != TESS_OK) return TESS_ERR_NOMEM;
    return st->check ? held_add(s, r) : TESS_OK;
}

/* Whether slot particle i is in f: the plain box test when f is one box
 * (every round's ghost data, every count of a partition), no call for
 * "all" (most merges). */
static inline __attribute__((always_inline)) int flat_has(const flat_region *f,
                                                          const tess_particle *q)
{
    if (f->all) return 1;
    if (!f->generic && f->nneg == 0)
        return q->x >= f->box.x0 && q->x < f->box.x1 && q->y >= f->box.y0 && q->y < f->box.y1;
    return flat_contains(f, q);
}

/* ---------------------------------------------------------------- block boxes */

static block_box block_of(const pslot *s, size_t i0)
{
    size_t i1 = i0 + BLOCK < s->n ? i0 + BLOCK : s->n;
    block_box b = {s->p[i0].x, s->p[i0].x, s->p[i0].y, s->p[i0].y};
    /* Written as x86's minsd/maxsd read (dest < src ? dest : src): one
     * instruction each, no branch. */
    for (size_t i = i0 + 1; i < i1; i++) {
        double x = s->p[i].x, y = s->p[i].y;
        b.x0 = b.x0 < x ? b.x0 : x;
        b.x1 = b.x1 > x ? b.x1 : x;
        b.y0 = b.y0 < y ? b.y0 : y;
        b.y1 = b.y1 > y ? b.y1 : y;
    }
    return b;
}

/* Whether blocks may be skipped for f: its box bounds every particle in it
 * (not "all", no NaN, negs only subtract) and the slot's boxes are built.
 * Out of memory for the boxes: 0, every particle is tested. */
static int blocks_ready(pslot *s, const flat_region *f)
{
    if (f->all || f->generic || s->n == 0) return 0;
    size_t nb = (s->n + BLOCK - 1) / BLOCK;
    if (s->boxed == nb) return 1;
    if (nb > s->blocks_cap) {
        size_t cap = nb > 2 * s->blocks_cap ? nb : 2 * s->blocks_cap;
        block_box *b = realloc(s->blocks, cap * sizeof *b);
        if (!b) return 0;
        s->blocks = b;
        s->blocks_cap = cap;
    }
    for (size_t b = s->boxed; b < nb; b++) s->blocks[b] = block_of(s, b * BLOCK);
    s->boxed = nb;
    return 1;
}

/* Can block b hold a particle of the half-open box? */
static inline int block_meets(const block_box *b, const tess_particle_rect *box)
{
    return b->x1 >= box->x0 && b->x0 < box->x1 && b->y1 >= box->y0 && b->y0 < box->y1;
}

/* Does the half-open box hold every particle of block b? */
static inline int block_within(const block_box *b, const tess_particle_rect *box)
{
    return b->x0 >= box->x0 && b->x1 < box->x1 && b->y0 >= box->y0 && b->y1 < box->y1;
}

/* Encode p[0 .. n-1], all of them, at dst; returns the end.  Replica
 * layers are wide enough that many blocks lie wholly inside what is sent:
 * one copy each instead of a test per particle. */
static unsigned char *pack_all(const tess_particle *p, size_t n, unsigned char *dst)
{
    if (PARTICLE_RAW) {
        memcpy(dst, p, n * TESS_PARTICLE_BYTES);
        return dst + n * TESS_PARTICLE_BYTES;
    }
    for (size_t i = 0; i < n; i++, dst += TESS_PARTICLE_BYTES) encode_record(&p[i], dst);
    return dst;
}

/* The start of the first block from i on (a multiple of BLOCK) that may hold
 * particles of f, s->n if none; *end: that block's end. */
static inline size_t next_block(const pslot *s, const flat_region *f, int skip, size_t i,
                                size_t *end)
{
    if (skip)
        while (i < s->n && !block_meets(&s->blocks[i / BLOCK], &f->box)) i += BLOCK;
    if (i > s->n) i = s->n;
    *end = i + BLOCK < s->n ? i + BLOCK : s->n;
    return i;
}

/* Encode the particles of p[0 .. n-1] that are in f at dst; returns the end.
 * For one box (a round's ghost data) the bounds sit in locals: stores
 * through dst may alias f, whose fields would be reloaded per particle. */
static unsigned char *pack_block(const tess_particle *p, size_t n, const flat_region *f,
                                 unsigned char *dst)
{
    if (f->all || f->generic || f->nneg > 0) {
        for (size_t i = 0; i < n; i++)
            if (flat_contains(f, &p[i])) {
                encode_record(&p[i], dst);
                dst += TESS_PARTICLE_BYTES;
            }
        return dst;
    }
    const double x0 = f->box.x0, x1 = f->box.x1, y0 = f->box.y0, y1 = f->box.y1;
    for (size_t i = 0; i < n; i++) {
        double x = p[i].x, y = p[i].y;
        if (x >= x0 && x < x1 && y >= y0 && y < y1) {
            encode_record(&p[i], dst);
            dst += TESS_PARTICLE_BYTES;
        }
    }
    return dst;
}

static int particles_pack(void *vst, int slot, const tess_region *r, tess_buf *out)
{
    pslot *s = slot_at(vst, slot);
    if (!s || !r) return TESS_ERR_INVAL;
    flat_region f = flatten(r);
    int skip = blocks_ready(s, &f);
    unsigned char *dst = NULL;
    size_t room = 0, end; /* records reserved, 64 at a time: no call per particle */
    for (size_t i0 = next_block(s, &f, skip, 0, &end); i0 < s->n;
         i0 = next_block(s, &f, skip, end, &end)) {
        if (room < BLOCK) {
            dst = tess_buf_reserve(out, 64 * TESS_PARTICLE_BYTES);
            if (!dst) return TESS_ERR_NOMEM;
            room = 64;
        }
        unsigned char *to = skip && f.nneg == 0 && block_within(&s->blocks[i0 / BLOCK], &f.box)
                                ? pack_all(s->p + i0, end - i0, dst)
                                : pack_block(s->p + i0, end - i0, &f, dst);
        size_t bytes = (size_t)(to - dst);
        out->len += bytes;
        room -= bytes / TESS_PARTICLE_BYTES;
        dst = to;
    }
    return TESS_OK;
}

/* A record is well formed: a known id, finite numbers. */
static int record_valid(const pstate *st, const tess_particle *p)
{
    return p->id < st->fns->count && particle_finite(p);
}

/* Undo the particles put since n0 (a malformed record came after them). */
static void slot_truncate(pslot *s, size_t n0)
{
    for (size_t i = n0; i < s->n; i++)
        s->present[s->p[i].id >> 6] &= ~((uint64_t)1 << (s->p[i].id & 63));
    s->n = n0;
    slot_changed_from(s, n0);
}

/* The presence bitmap (a bit per particle of the whole application, 4.9 KB
 * for fish at the paper's scale) is cold when a message is merged, and its
 * words are read in the records' random id order: three quarters of
 * merge's time was the wait for them.  Asked for MERGE_AHEAD records
 * early, they arrive together. */
#define MERGE_AHEAD 8
static inline void prefetch_present(const pstate *st, const pslot *s, uint64_t id)
{
    if (id < st->fns->count) __builtin_prefetch(&s->present[id >> 6]);
}

/*
 * One pass: the records are copied into the slot's free room at once (one
 * memcpy where the wire format is the struct's), then each is checked and
 * kept or not in place, packed down over the ones dropped.  A malformed
 * record undoes the merge, so the slot is as it was.  Per record this is a
 * check and a bit test: copying and testing record by record was a fifth of
 * fish's runtime CPU at the paper's scale.
 */
static int particles_merge(void *vst, int slot, const void *data, size_t len, const tess_region *r)
{
    pstate *st = vst;
    pslot *s = slot_at(st, slot);
    if (!s) return TESS_ERR_INVAL;
    if (len % TESS_PARTICLE_BYTES != 0 || (len && !data)) return TESS_ERR_FORMAT;
    size_t n = len / TESS_PARTICLE_BYTES;
    if (n == 0) return TESS_OK; /* data may be NULL: no memcpy from it */
    /* Reserve first, so running out of memory leaves the slot unchanged. */
    if (slot_reserve(s, n) != TESS_OK) return TESS_ERR_NOMEM;
    flat_region f = flatten(r);
    size_t n0 = s->n;
    tess_particle *in = s->p + n0;
    if (PARTICLE_RAW) memcpy(in, data, len);
    else
        for (size_t i = 0; i < n; i++)
            decode_record((const unsigned char *)data + i * TESS_PARTICLE_BYTES, &in[i]);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + MERGE_AHEAD < n) prefetch_present(st, s, in[i + MERGE_AHEAD].id);
        if (!record_valid(st, &in[i])) {
            s->n = n0 + kept;
            slot_truncate(s, n0);
            return TESS_ERR_FORMAT;
        }
        if (flat_has(&f, &in[i]) && !slot_has(s, in[i].id)) {
            slot_mark(s, in[i].id);
            if (kept != i) in[kept] = in[i];
            kept++;
        }
    }
    s->n = n0 + kept;
    if (kept) slot_changed_from(s, n0); /* nothing kept: the index and boxes still hold */
    return TESS_OK;
}

/* Where a STEP's candidates lie: in `box`, the intersection of WD(pos[i]),
 * and, when the region has negs, in one of wd[0 .. n-1], WD of the pieces
 * of the region (pos less negs, cut into rectangles).  Every particle
 * that lands in the region came from WD of the piece it lands in, so the
 * pieces' WD leave out the particles that can only land in a neg: without
 * them, computing ahead per side would step every particle near a late
 * side and drop it.  n == 0: the box alone (no negs, or too many pieces). */
#define CAND_PIECES 32
typedef struct cand_set {
    tess_particle_rect box;
    int n;
    tess_particle_rect wd[CAND_PIECES];
} cand_set;

/* Cut a less b into at most 4 half-open rectangles (left, right, below,
 * above b's columns); the number written. */
static int rect_minus(tess_particle_rect a, tess_particle_rect b, tess_particle_rect *out)
{
    tess_particle_rect in = rect_clip(a, b);
    if (rect_is_empty(&in)) return out[0] = a, 1;
    tess_particle_rect part[4] = {{a.x0, in.x0, a.y0, a.y1},
                                  {in.x1, a.x1, a.y0, a.y1},
                                  {in.x0, in.x1, a.y0, in.y0},
                                  {in.x0, in.x1, in.y1, a.y1}};
    int n = 0;
    for (int i = 0; i < 4; i++)
        if (!rect_is_empty(&part[i])) out[n++] = part[i];
    return n;
}

/* The region's pieces into piece[] (at most CAND_PIECES); -1 if more. */
static int region_pieces(const tess_region *r, tess_particle_rect core, tess_particle_rect *piece)
{
    int n = rect_is_empty(&core) ? 0 : 1;
    piece[0] = core;
    for (int j = 0; j < r->nneg; j++) {
        tess_particle_rect neg = tess_particle_rect_of(&r->neg[j]), cut[CAND_PIECES * 4];
        if (rect_has_nan(&neg)) return -1;
        int m = 0;
        for (int i = 0; i < n; i++) m += rect_minus(piece[i], neg, cut + m);
        if (m > CAND_PIECES) return -1;
        memcpy(piece, cut, (size_t)m * sizeof *cut);
        n = m;
    }
    return n;
}

static cand_set candidates(const pstate *st, const tess_region *r)
{
    cand_set c = {.box = {-INFINITY, INFINITY, -INFINITY, INFINITY}};
    tess_particle_rect core = c.box;
    for (int i = 0; i < r->npos; i++) {
        tess_query wq;
        st->app->wd(st->app->user, &r->pos[i], &wq);
        c.box = rect_clip(c.box, tess_particle_rect_of(&wq));
        core = rect_clip(core, tess_particle_rect_of(&r->pos[i]));
    }
    if (r->nneg == 0 || rect_has_nan(&core) || rect_has_nan(&c.box)) return c;
    tess_particle_rect piece[CAND_PIECES];
    int n = region_pieces(r, core, piece);
    if (n < 0) return c;
    tess_particle_rect hull = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (int i = 0; i < n; i++) {
        tess_query pq = tess_particle_query(piece[i]), wq;
        st->app->wd(st->app->user, &pq, &wq);
        c.wd[i] = tess_particle_rect_of(&wq);
        if (rect_has_nan(&c.wd[i])) return c;
        hull = (tess_particle_rect){fmin(hull.x0, c.wd[i].x0), fmax(hull.x1, c.wd[i].x1),
                                    fmin(hull.y0, c.wd[i].y0), fmax(hull.y1, c.wd[i].y1)};
    }
    c.n = n;
    c.box = n ? rect_clip(c.box, hull) : hull; /* no pieces: an empty box */
    return c;
}

static int is_candidate(const cand_set *c, const tess_particle *p)
{
    if (!tess_particle_rect_contains(&c->box, p->x, p->y)) return 0;
    if (c->n == 0) return 1;
    for (int i = 0; i < c->n; i++)
        if (tess_particle_rect_contains(&c->wd[i], p->x, p->y)) return 1;
    return 0;
}

/* STEP one particle of `from` whose neighbours are st->nbrs[0 .. n); 1 if
 * kept in `to`, 0 if it left r, or an error. */
static int step_one(pstate *st, pslot *from, pslot *to, const tess_region *r,
                    const tess_particle *self, size_t n, int64_t tick)
{
    tess_particle next = *self;
    st->fns->step(st->app->user, self, st->nbrs, n, tick, &next);
    next.id = self->id;
    if (!particle_finite(&next)) return TESS_ERR_INVAL;
    if (!in_region(r, &next)) return 0;
    if (st->check && !held_covers(from, self, st->fns->radius)) {
        tess__tick_check_note("particle %llu at (%.9g, %.9g) reads its neighbours within %g, "
                              "beyond the regions held",
                              (unsigned long long)self->id, self->x, self->y, st->fns->radius);
        return TESS_ERR_MISUSE;
    }
    return slot_add(to, &next) == TESS_OK ? 1 : TESS_ERR_NOMEM;
}

/* A particle of `from` to step: a candidate that `to` does not hold yet. */
static int to_step(const cand_set *cand, const pslot *to, const tess_particle *p)
{
    return is_candidate(cand, p) && !slot_has(to, p->id);
}

/*
 * STEP the particles of one cell of `from` that are to be stepped.  The
 * particles of the cells their radius boxes meet are gathered and sorted by
 * id once for the cell, and each particle's neighbours picked from that
 * list in order: one sort per cell instead of one per particle (the sorts
 * were about two thirds of a fish run's CPU, the school being tens of
 * particles a cell where it gathers).  The union of the boxes holds each
 * one's box, so every neighbour is found.
 */
static int64_t step_cell(pstate *st, pslot *from, pslot *to, const tess_region *r,
                         const cand_set *cand, size_t cell, int64_t tick)
{
    uint32_t k0 = from->start[cell], k1 = from->start[cell + 1];
    double rad = st->fns->radius;
    cell_range u = {INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN};
    for (uint32_t k = k0; k < k1; k++) {
        const tess_particle *p = &from->p[from->items[k]];
        if (!to_step(cand, to, p)) continue;
        cell_range b = cells_of_box(from, p->x - rad, p->x + rad, p->y - rad, p->y + rad);
        if (b.cx0 < u.cx0) u.cx0 = b.cx0;
        if (b.cx1 > u.cx1) u.cx1 = b.cx1;
        if (b.cy0 < u.cy0) u.cy0 = b.cy0;
        if (b.cy1 > u.cy1) u.cy1 = b.cy1;
    }
    if (u.cx0 > u.cx1) return 0;
    int64_t n = gather_sorted(st, from, &u);
    if (n < 0) return n;
    int64_t kept = 0;
    for (uint32_t k = k0; k < k1; k++) {
        const tess_particle *p = &from->p[from->items[k]];
        if (!to_step(cand, to, p)) continue;
        int rc = step_one(st, from, to, r, p, pick_neighbours(st, (size_t)n, p), tick);
        if (rc < 0) return rc;
        kept += rc;
    }
    return kept;
}

static int64_t particles_step(void *vst, int from_slot, int to_slot, const tess_region *r,
                              int64_t tick)
{
    pstate *st = vst;
    pslot *from = slot_at(st, from_slot), *to = slot_at(st, to_slot);
    if (!from || !to || from == to || !r || r->npos < 1) return TESS_ERR_INVAL;
    cand_set cand = candidates(st, r);
    const tess_particle_rect box = cand.box;
    if (!(box.x0 < box.x1 && box.y0 < box.y1) || from->n == 0)
        return st->check ? held_add(to, r) : 0; /* nothing reaches r: it holds all of r */
    if (index_build(from, st->fns->radius) != TESS_OK) return TESS_ERR_NOMEM;
    cell_range c = cells_of_box(from, box.x0, box.x1, box.y0, box.y1);
    int64_t kept = 0;
    for (int64_t cy = c.cy0; cy <= c.cy1; cy++)
        for (int64_t cx = c.cx0; cx <= c.cx1; cx++) {
            int64_t rc = step_cell(st, from, to, r, &cand, (size_t)(cy * from->nx + cx), tick);
            if (rc < 0) return rc;
            kept += rc;
        }
    if (st->check && held_add(to, r) != TESS_OK) return TESS_ERR_NOMEM;
    return kept;
}

static int64_t particles_count(void *vst, int slot, const tess_region *r)
{
    pslot *s = slot_at(vst, slot);
    if (!s) return TESS_ERR_INVAL;
    flat_region f = flatten(r);
    int skip = blocks_ready(s, &f);
    int64_t n = 0;
    size_t end;
    for (size_t i0 = next_block(s, &f, skip, 0, &end); i0 < s->n;
         i0 = next_block(s, &f, skip, end, &end))
        for (size_t i = i0; i < end; i++) n += flat_has(&f, &s->p[i]);
    return n;
}

static const void *particles_snapshot(void *vst, int slot)
{
    pslot *s = slot_at(vst, slot);
    if (!s) return NULL;
    s->view.count = (int64_t)s->n;
    s->view.p = s->p;
    return &s->view;
}

const tess_state_class tess_particles_class = {
    .name = "particles",
    .create = particles_create,
    .destroy = particles_destroy,
    .clear = particles_clear,
    .init = particles_init,
    .pack = particles_pack,
    .merge = particles_merge,
    .step = particles_step,
    .count = particles_count,
    .snapshot = particles_snapshot,
    /* Checkpoints: the packed form is already global (particles with their global ids), so
     * any partition of a restoring run loads it. */
    .save = particles_pack,
    .load = particles_merge,
};

/* ---------------------------------------------------------------- final state */

int tess_particles_unpack(const void *packed, size_t len, uint64_t count, tess_particle *out)
{
    if (len % TESS_PARTICLE_BYTES != 0 || len / TESS_PARTICLE_BYTES != count || (len && !packed))
        return TESS_ERR_FORMAT;
    uint64_t *seen = calloc((size_t)(count / 64 + 1), sizeof *seen);
    if (!seen) return TESS_ERR_NOMEM;
    int rc = TESS_OK;
    for (size_t off = 0; off < len && rc == TESS_OK; off += TESS_PARTICLE_BYTES) {
        tess_particle p;
        tess_particle_decode((const unsigned char *)packed + off, &p);
        if (p.id >= count || (seen[p.id >> 6] >> (p.id & 63)) & 1) rc = TESS_ERR_FORMAT;
        else {
            seen[p.id >> 6] |= (uint64_t)1 << (p.id & 63);
            out[p.id] = p;
        }
    }
    free(seen);
    return rc; /* count records, no id twice, all < count: none missing */
}
