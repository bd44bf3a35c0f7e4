/*
 * graph.c — the partitioned-graph state class (tick_graph.h): the graph
 * with its partition and hop labels (tess_graph), the Table-1 query
 * functions over those labels, and the per-process versions of vertex
 * values (tess_graph_class).
 *
 * Labels of partition p in one direction are a BFS from p's vertex set, kept
 * as a distance byte per vertex (UNSEEN past the levels computed so far), the
 * vertices ordered by level (so the vertices of a hop set are a prefix of
 * that order and enumerate in time proportional to their number), and per
 * level a bitmap of the partitions the hop set touches (for DISJOINT).
 * Levels grow on demand under g->grow_lock.  Readers take no lock: a reader
 * looks only at levels <= `computed` (an acquire load that pairs with the
 * release store after a level is complete), and distance bytes, which a
 * growing BFS may write while a reader tests them, are accessed atomically
 * (relaxed; a plain byte move on the CPUs we run on).  Either value a racing
 * read can see is above every level the reader asks about.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "tessera/tick_graph.h"

#define UNSEEN 255u /* > TESS_GRAPH_MAX_HOPS */
#define DIR_IN 0
#define DIR_OUT 1
#define STEP_BATCH 256
#define PACK_CHUNK 1024

typedef struct hop_labels {
    int computed;        /* levels 0 .. computed are complete (atomic); -1: none */
    int last;            /* deepest non-empty level once saturated, else -1 */
    uint32_t reached;    /* vertices in `order` so far (grower only) */
    unsigned char *dist; /* nv bytes: level, or UNSEEN */
    uint32_t *order;     /* vertices by level, capacity nv */
    uint32_t *level_end; /* order[0 .. level_end[h]) are within h hops */
    uint64_t *touched;   /* level h: words of partitions within h hops */
} hop_labels;

typedef struct pair_entry {
    tess_graph_q a, b;
    int used, disjoint;
} pair_entry;

struct tess_graph {
    uint32_t nv;
    int nparts;
    size_t words;                /* uint64 words of a partition bitmap */
    const uint64_t *in_first;    /* borrowed */
    const uint32_t *in_src;      /* borrowed */
    uint64_t *out_first;         /* out-edge CSR, built at creation */
    uint32_t *out_dst;
    int32_t *part;
    hop_labels *labels;          /* nparts * 2: [p * 2 + dir] */
    pthread_mutex_t grow_lock;
    pthread_mutex_t cache_lock;  /* the DISJOINT cache */
    pair_entry *cache;
    size_t cache_cap, cache_len;
};

/* ------------------------------------------------------------ small helpers */

static inline unsigned dist_load(const unsigned char *d, uint32_t v)
{
    return __atomic_load_n(&d[v], __ATOMIC_RELAXED);
}

static inline int bit_get(const uint64_t *bits, uint32_t v)
{
    return (int)((bits[v >> 6] >> (v & 63)) & 1u);
}

static inline void bit_set(uint64_t *bits, uint32_t v)
{
    bits[v >> 6] |= (uint64_t)1 << (v & 63);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------ construction */

/* Out-edges grouped by source, by a counting sort over the in-edge CSR. */
static int build_out_csr(tess_graph *g)
{
    uint32_t nv = g->nv;
    uint64_t ne = g->in_first[nv];
    g->out_first = calloc((size_t)nv + 1, sizeof *g->out_first);
    g->out_dst = malloc((ne ? ne : 1) * sizeof *g->out_dst);
    if (g->out_first == NULL || g->out_dst == NULL) return TESS_ERR_NOMEM;
    for (uint64_t e = 0; e < ne; e++) g->out_first[g->in_src[e] + 1]++;
    for (uint32_t v = 0; v < nv; v++) g->out_first[v + 1] += g->out_first[v];
    uint64_t *fill = malloc(((size_t)nv + 1) * sizeof *fill);
    if (fill == NULL) return TESS_ERR_NOMEM;
    memcpy(fill, g->out_first, ((size_t)nv + 1) * sizeof *fill);
    for (uint32_t v = 0; v < nv; v++)
        for (uint64_t e = g->in_first[v]; e < g->in_first[v + 1]; e++)
            g->out_dst[fill[g->in_src[e]]++] = v;
    free(fill);
    return TESS_OK;
}

static int check_inputs(uint32_t nv, const uint64_t *in_first, const uint32_t *in_src,
                        const int32_t *part, int nparts)
{
    if (nparts < 1 || in_first == NULL || (nv > 0 && part == NULL)) return TESS_ERR_INVAL;
    if (in_first[0] != 0 || (in_first[nv] > 0 && in_src == NULL)) return TESS_ERR_INVAL;
    for (uint32_t v = 0; v < nv; v++)
        if (part[v] < 0 || part[v] >= nparts || in_first[v + 1] < in_first[v])
            return TESS_ERR_INVAL;
    for (uint64_t e = 0; e < in_first[nv]; e++)
        if (in_src[e] >= nv) return TESS_ERR_INVAL;
    return TESS_OK;
}

int tess_graph_create(uint32_t nv, const uint64_t *in_first, const uint32_t *in_src,
                      const int32_t *part, int nparts, tess_graph **out)
{
    int rc = check_inputs(nv, in_first, in_src, part, nparts);
    if (rc != TESS_OK) return rc;
    tess_graph *g = calloc(1, sizeof *g);
    if (g == NULL) return TESS_ERR_NOMEM;
    g->nv = nv;
    g->nparts = nparts;
    g->words = ((size_t)nparts + 63) / 64;
    g->in_first = in_first;
    g->in_src = in_src;
    g->part = malloc(((size_t)nv + 1) * sizeof *g->part);
    g->labels = calloc((size_t)nparts * 2, sizeof *g->labels);
    pthread_mutex_init(&g->grow_lock, NULL);
    pthread_mutex_init(&g->cache_lock, NULL);
    if (g->part == NULL || g->labels == NULL || build_out_csr(g) != TESS_OK) {
        tess_graph_destroy(g);
        return TESS_ERR_NOMEM;
    }
    if (nv > 0) memcpy(g->part, part, (size_t)nv * sizeof *g->part);
    for (int i = 0; i < nparts * 2; i++) {
        g->labels[i].computed = -1;
        g->labels[i].last = -1;
    }
    *out = g;
    return TESS_OK;
}

static void labels_free(hop_labels *lab)
{
    free(lab->dist);
    free(lab->order);
    free(lab->level_end);
    free(lab->touched);
}

void tess_graph_destroy(tess_graph *g)
{
    if (g == NULL) return;
    for (int i = 0; g->labels != NULL && i < g->nparts * 2; i++) labels_free(&g->labels[i]);
    free(g->labels);
    free(g->part);
    free(g->out_first);
    free(g->out_dst);
    free(g->cache);
    pthread_mutex_destroy(&g->grow_lock);
    pthread_mutex_destroy(&g->cache_lock);
    free(g);
}

uint32_t tess_graph_vertices(const tess_graph *g) { return g->nv; }
int tess_graph_parts(const tess_graph *g) { return g->nparts; }

/* ------------------------------------------------------------ labels (BFS) */

/* Level 0: the partition's own vertices, in ascending order. */
static int labels_start(tess_graph *g, hop_labels *lab, int p)
{
    uint32_t nv = g->nv;
    lab->dist = malloc(nv ? nv : 1);
    lab->order = malloc(((size_t)nv + 1) * sizeof *lab->order);
    lab->level_end = calloc(TESS_GRAPH_MAX_HOPS + 1, sizeof *lab->level_end);
    lab->touched = calloc((size_t)(TESS_GRAPH_MAX_HOPS + 1) * g->words, sizeof *lab->touched);
    if (!lab->dist || !lab->order || !lab->level_end || !lab->touched) {
        labels_free(lab);
        memset(lab, 0, sizeof *lab);
        lab->computed = lab->last = -1;
        return TESS_ERR_NOMEM;
    }
    memset(lab->dist, UNSEEN, nv);
    uint32_t n = 0;
    for (uint32_t v = 0; v < nv; v++)
        if (g->part[v] == p) {
            lab->dist[v] = 0;
            lab->order[n++] = v;
        }
    lab->reached = n;
    lab->level_end[0] = n;
    if (n > 0) lab->touched[(size_t)p / 64] |= (uint64_t)1 << (p % 64);
    return TESS_OK;
}

/* Neighbours one hop further along direction dir: in-neighbours for in-hops
 * (w -> u: w's value reaches u next tick), out-neighbours for out-hops. */
static void neighbours(const tess_graph *g, int dir, uint32_t u, const uint32_t **nb,
                       uint64_t *n)
{
    if (dir == DIR_IN) {
        *nb = g->in_src + g->in_first[u];
        *n = g->in_first[u + 1] - g->in_first[u];
    } else {
        *nb = g->out_dst + g->out_first[u];
        *n = g->out_first[u + 1] - g->out_first[u];
    }
}

/* Order a new level ascending (a CSR-friendly enumeration order): sort a
 * small one, collect a big one by scanning the distance bytes. */
static void level_sort(const tess_graph *g, hop_labels *lab, uint32_t first, unsigned level)
{
    uint32_t n = lab->reached - first;
    if ((uint64_t)n * 16 < g->nv) {
        qsort(lab->order + first, n, sizeof *lab->order, cmp_u32);
        return;
    }
    uint32_t at = first;
    for (uint32_t v = 0; v < g->nv; v++)
        if (lab->dist[v] == level) lab->order[at++] = v;
}

/* Compute level h from level h-1 (h >= 1); returns the new vertices' count. */
static uint32_t labels_extend(tess_graph *g, hop_labels *lab, int dir, int h)
{
    uint32_t begin = h >= 2 ? lab->level_end[h - 2] : 0, end = lab->level_end[h - 1];
    uint32_t first = lab->reached;
    uint64_t *touched = lab->touched + (size_t)h * g->words;
    memcpy(touched, touched - g->words, g->words * sizeof *touched);
    for (uint32_t i = begin; i < end; i++) {
        const uint32_t *nb;
        uint64_t n;
        neighbours(g, dir, lab->order[i], &nb, &n);
        for (uint64_t j = 0; j < n; j++) {
            uint32_t w = nb[j];
            if (lab->dist[w] != UNSEEN) continue;
            __atomic_store_n(&lab->dist[w], (unsigned char)h, __ATOMIC_RELAXED);
            lab->order[lab->reached++] = w;
            touched[(size_t)g->part[w] / 64] |= (uint64_t)1 << (g->part[w] % 64);
        }
    }
    level_sort(g, lab, first, (unsigned)h);
    lab->level_end[h] = lab->reached;
    return lab->reached - first;
}

/* No vertex at level h: every further level equals level h-1. */
static void labels_saturate(tess_graph *g, hop_labels *lab, int h)
{
    for (int l = h; l <= TESS_GRAPH_MAX_HOPS; l++) {
        lab->level_end[l] = lab->level_end[h - 1];
        memcpy(lab->touched + (size_t)l * g->words, lab->touched + (size_t)(h - 1) * g->words,
               g->words * sizeof *lab->touched);
    }
    __atomic_store_n(&lab->last, h - 1, __ATOMIC_RELAXED);
}

static int labels_grow(tess_graph *g, hop_labels *lab, int p, int dir, int hops)
{
    int computed = lab->computed;
    if (computed < 0) {
        int rc = labels_start(g, lab, p);
        if (rc != TESS_OK) return rc;
        computed = 0;
        if (lab->level_end[0] == 0 || g->nv == 0) { /* empty partition */
            labels_saturate(g, lab, 1);
            computed = TESS_GRAPH_MAX_HOPS;
        }
        __atomic_store_n(&lab->computed, computed, __ATOMIC_RELEASE);
    }
    while (computed < hops) {
        uint32_t added = labels_extend(g, lab, dir, computed + 1);
        if (added == 0) {
            labels_saturate(g, lab, computed + 1);
            computed = TESS_GRAPH_MAX_HOPS;
        } else {
            computed++;
        }
        __atomic_store_n(&lab->computed, computed, __ATOMIC_RELEASE);
    }
    return TESS_OK;
}

/* The labels of (p, dir), complete up to `hops` levels; NULL without memory. */
static hop_labels *labels_get(tess_graph *g, int p, int dir, int hops)
{
    hop_labels *lab = &g->labels[p * 2 + dir];
    if (hops > TESS_GRAPH_MAX_HOPS) hops = TESS_GRAPH_MAX_HOPS;
    if (__atomic_load_n(&lab->computed, __ATOMIC_ACQUIRE) >= hops) return lab;
    pthread_mutex_lock(&g->grow_lock);
    int rc = labels_grow(g, lab, p, dir, hops);
    pthread_mutex_unlock(&g->grow_lock);
    return rc == TESS_OK ? lab : NULL;
}

int tess_graph_prepare(tess_graph *g, int hops)
{
    if (hops < 0) hops = 0;
    for (int p = 0; p < g->nparts; p++)
        for (int dir = DIR_IN; dir <= DIR_OUT; dir++)
            if (labels_get(g, p, dir, hops) == NULL) return TESS_ERR_NOMEM;
    return TESS_OK;
}

int tess_graph_hops(tess_graph *g, int part, int kind, uint32_t v)
{
    if (part < 0 || part >= g->nparts || v >= g->nv) return -1;
    if (kind != TESS_GRAPH_IN_HOPS && kind != TESS_GRAPH_OUT_HOPS) return -1;
    int dir = kind == TESS_GRAPH_IN_HOPS ? DIR_IN : DIR_OUT;
    hop_labels *lab = labels_get(g, part, dir, TESS_GRAPH_MAX_HOPS);
    if (lab == NULL) return -1;
    unsigned d = dist_load(lab->dist, v);
    return d == UNSEEN ? -1 : (int)d;
}

/* ------------------------------------------------------------ queries */

/* A query made ready for membership tests: the vertices v with
 * dist[v] <= h (dist NULL: every vertex), `size` of them, listed first in
 * `order`; `touched` the partitions among them. */
typedef struct term {
    const unsigned char *dist;
    const uint32_t *order;
    const uint64_t *touched;
    unsigned h;
    uint32_t size;
    tess_graph_q norm; /* the query, normalised */
} term;

static int query_valid(const tess_graph *g, const tess_graph_q *q)
{
    if (q->kind == TESS_GRAPH_ALL) return 1;
    if (q->part < 0 || q->part >= g->nparts) return 0;
    if (q->kind == TESS_GRAPH_OWN) return 1;
    return (q->kind == TESS_GRAPH_IN_HOPS || q->kind == TESS_GRAPH_OUT_HOPS) && q->hops >= 0 &&
           q->hops <= TESS_GRAPH_MAX_HOPS;
}

/* Same set, canonical spelling: ALL {0,ALL,0}; OWN {p,OWN,0}; hop counts past
 * the last non-empty level lowered to it; zero hops are OWN. */
static tess_graph_q normalise(const hop_labels *lab, tess_graph_q q)
{
    if (q.kind == TESS_GRAPH_ALL) return (tess_graph_q){0, TESS_GRAPH_ALL, 0};
    if (q.kind == TESS_GRAPH_OWN) q.hops = 0;
    int last = lab != NULL ? __atomic_load_n(&lab->last, __ATOMIC_RELAXED) : -1;
    if (last >= 0 && q.hops > last) q.hops = last;
    if (q.hops == 0) q.kind = TESS_GRAPH_OWN;
    return q;
}

static int term_make(tess_graph *g, const tess_query *query, term *t)
{
    tess_graph_q q = tess_graph_q_of(query);
    if (!query_valid(g, &q)) return TESS_ERR_INVAL;
    memset(t, 0, sizeof *t);
    if (q.kind == TESS_GRAPH_ALL) {
        t->size = g->nv;
        t->norm = normalise(NULL, q);
        return TESS_OK;
    }
    int hops = q.kind == TESS_GRAPH_OWN ? 0 : q.hops;
    hop_labels *lab = labels_get(g, q.part, q.kind == TESS_GRAPH_OUT_HOPS ? DIR_OUT : DIR_IN, hops);
    if (lab == NULL) return TESS_ERR_NOMEM;
    t->dist = lab->dist;
    t->order = lab->order;
    t->h = (unsigned)hops;
    t->size = lab->level_end[hops];
    t->touched = lab->touched + (size_t)hops * g->words;
    t->norm = normalise(lab, q);
    return TESS_OK;
}

static inline int term_has(const term *t, uint32_t v)
{
    return t->dist == NULL || dist_load(t->dist, v) <= t->h;
}

int64_t tess_graph_query_size(tess_graph *g, const tess_query *q)
{
    term t;
    int rc = term_make(g, q, &t);
    return rc == TESS_OK ? (int64_t)t.size : rc;
}

/* RD/RX: one hop further in direction `kind` for OWN and that kind; ALL else. */
static void grow_query(tess_graph *g, const tess_query *q, int kind, tess_query *out)
{
    tess_graph_q in = tess_graph_q_of(q);
    int ok = query_valid(g, &in) && (in.kind == TESS_GRAPH_OWN || in.kind == kind);
    int hops = ok ? (in.kind == TESS_GRAPH_OWN ? 0 : in.hops) + 1 : 0;
    hop_labels *lab = NULL;
    if (ok && hops <= TESS_GRAPH_MAX_HOPS) {
        lab = labels_get(g, in.part, kind == TESS_GRAPH_IN_HOPS ? DIR_IN : DIR_OUT, hops);
        in = (tess_graph_q){in.part, kind, hops};
    }
    tess_graph_q r = lab != NULL ? normalise(lab, in) : (tess_graph_q){0, TESS_GRAPH_ALL, 0};
    *out = tess_graph_query(r.part, r.kind, r.hops);
}

void tess_graph_rd(tess_graph *g, const tess_query *q, tess_query *out)
{
    grow_query(g, q, TESS_GRAPH_IN_HOPS, out);
}

void tess_graph_rx(tess_graph *g, const tess_query *q, tess_query *out)
{
    grow_query(g, q, TESS_GRAPH_OUT_HOPS, out);
}

void tess_graph_same(const tess_query *q, tess_query *out)
{
    *out = *q;
}

int tess_graph_part(tess_ctx *ctx, tess_graph *g, int n, tess_query *parts)
{
    TESS_RETURN_IF(ctx, n != g->nparts, TESS_ERR_INVAL,
                   "the graph was partitioned into %d parts, not %d", g->nparts, n);
    for (int p = 0; p < n; p++) parts[p] = tess_graph_query(p, TESS_GRAPH_OWN, 0);
    return 0;
}

/* ------------------------------------------------------------ DISJOINT */

static size_t pair_hash(const tess_graph_q *a, const tess_graph_q *b)
{
    uint64_t h = 1469598103934665603ull;
    const int32_t f[6] = {a->part, a->kind, a->hops, b->part, b->kind, b->hops};
    for (int i = 0; i < 6; i++) h = (h ^ (uint32_t)f[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static int q_equal(const tess_graph_q *x, const tess_graph_q *y)
{
    return x->part == y->part && x->kind == y->kind && x->hops == y->hops;
}

/* Under cache_lock: the slot of (a, b), or an unused slot for it. */
static pair_entry *cache_slot(tess_graph *g, const tess_graph_q *a, const tess_graph_q *b)
{
    size_t mask = g->cache_cap - 1;
    for (size_t i = pair_hash(a, b) & mask;; i = (i + 1) & mask) {
        pair_entry *e = &g->cache[i];
        if (!e->used || (q_equal(&e->a, a) && q_equal(&e->b, b))) return e;
    }
}

static int cache_reserve(tess_graph *g)
{
    if (g->cache_cap != 0 && (g->cache_len + 1) * 2 <= g->cache_cap) return TESS_OK;
    size_t cap = g->cache_cap ? g->cache_cap * 2 : 256;
    pair_entry *old = g->cache, *fresh = calloc(cap, sizeof *fresh);
    if (fresh == NULL) return TESS_ERR_NOMEM;
    size_t old_cap = g->cache_cap;
    g->cache = fresh;
    g->cache_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used) *cache_slot(g, &old[i].a, &old[i].b) = old[i];
    free(old);
    return TESS_OK;
}

/* -1 when not cached. */
static int cache_lookup(tess_graph *g, const tess_graph_q *a, const tess_graph_q *b)
{
    int r = -1;
    pthread_mutex_lock(&g->cache_lock);
    if (g->cache_cap > 0) {
        pair_entry *e = cache_slot(g, a, b);
        if (e->used) r = e->disjoint;
    }
    pthread_mutex_unlock(&g->cache_lock);
    return r;
}

static void cache_store(tess_graph *g, const tess_graph_q *a, const tess_graph_q *b, int disjoint)
{
    pthread_mutex_lock(&g->cache_lock);
    if (cache_reserve(g) == TESS_OK) {
        pair_entry *e = cache_slot(g, a, b);
        if (!e->used) g->cache_len++;
        *e = (pair_entry){*a, *b, 1, disjoint};
    }
    pthread_mutex_unlock(&g->cache_lock);
}

static int touched_overlap(const tess_graph *g, const term *a, const term *b)
{
    for (size_t w = 0; w < g->words; w++)
        if (a->touched[w] & b->touched[w]) return 1;
    return 0;
}

/* Two hop sets: scan the smaller for a member of the other. */
static int scan_disjoint(const term *a, const term *b)
{
    const term *small = a->size <= b->size ? a : b, *big = small == a ? b : a;
    for (uint32_t i = 0; i < small->size; i++)
        if (term_has(big, small->order[i])) return 0;
    return 1;
}

int tess_graph_disjoint(tess_graph *g, const tess_query *qa, const tess_query *qb)
{
    term a, b;
    if (term_make(g, qa, &a) != TESS_OK || term_make(g, qb, &b) != TESS_OK) return 0;
    if (a.size == 0 || b.size == 0) return 1;
    if (a.dist == NULL || b.dist == NULL) return 0;
    if (!touched_overlap(g, &a, &b)) return 1;
    /* OWN(p) is all of partition p, and the other set has a vertex in p. */
    if (a.h == 0 || b.h == 0) return 0;
    const term *x = &a, *y = &b;
    if (memcmp(&a.norm, &b.norm, sizeof a.norm) > 0) x = &b, y = &a;
    int r = cache_lookup(g, &x->norm, &y->norm);
    if (r >= 0) return r;
    r = scan_disjoint(x, y);
    cache_store(g, &x->norm, &y->norm, r);
    return r;
}

/* ------------------------------------------------------------ regions */

/* A region ready to enumerate: every vertex of pos[src] (of all vertices
 * when src < 0) that the other terms accept. */
typedef struct cregion {
    int npos, nneg, src;
    term *terms; /* npos pos terms, then nneg neg terms */
    term local[8];
} cregion;

static void region_free(cregion *c)
{
    if (c->terms != c->local) free(c->terms);
}

static int region_make(tess_graph *g, const tess_region *r, cregion *c)
{
    c->npos = r->npos;
    c->nneg = r->nneg;
    c->src = -1;
    size_t n = (size_t)r->npos + (size_t)r->nneg;
    if (r->npos < 1 || r->nneg < 0) return TESS_ERR_INVAL;
    c->terms = n <= 8 ? c->local : malloc(n * sizeof *c->terms);
    if (c->terms == NULL) return TESS_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const tess_query *q = i < (size_t)r->npos ? &r->pos[i] : &r->neg[i - (size_t)r->npos];
        int rc = term_make(g, q, &c->terms[i]);
        if (rc != TESS_OK) {
            region_free(c);
            return rc;
        }
    }
    for (int i = 0; i < c->npos; i++)
        if (c->terms[i].dist != NULL && (c->src < 0 || c->terms[i].size < c->terms[c->src].size))
            c->src = i;
    return TESS_OK;
}

static inline uint32_t region_span(const cregion *c, uint32_t nv)
{
    return c->src >= 0 ? c->terms[c->src].size : nv;
}

static inline uint32_t region_at(const cregion *c, uint32_t i)
{
    return c->src >= 0 ? c->terms[c->src].order[i] : i;
}

/* Is v (taken from the enumeration) accepted by every other term? */
static inline int region_accepts(const cregion *c, uint32_t v)
{
    for (int i = 0; i < c->npos; i++)
        if (i != c->src && !term_has(&c->terms[i], v)) return 0;
    for (int i = c->npos; i < c->npos + c->nneg; i++)
        if (term_has(&c->terms[i], v)) return 0;
    return 1;
}

int tess_graph_region_contains(tess_graph *g, const tess_region *r, uint32_t v)
{
    if (v >= g->nv) return 0;
    cregion c;
    int rc = region_make(g, r, &c);
    if (rc != TESS_OK) return rc;
    int in = (c.src < 0 || term_has(&c.terms[c.src], v)) && region_accepts(&c, v);
    region_free(&c);
    return in;
}

/* ------------------------------------------------------------ the class */

typedef struct version {
    double *val;       /* nv values; valid where present */
    uint64_t *present; /* nv bits */
    tess_graph_view view;
} version;

typedef struct graph_state {
    const tess_graph_fns *fns;
    tess_graph *g;
    void *user;
    int nslots;
    size_t words; /* of a presence bitmap */
    version *v;
    uint32_t batch[STEP_BATCH];
    double out[STEP_BATCH];
} graph_state;

static void gs_destroy(void *p)
{
    graph_state *s = p;
    if (s == NULL) return;
    for (int i = 0; s->v != NULL && i < s->nslots; i++) {
        free(s->v[i].val);
        free(s->v[i].present);
    }
    free(s->v);
    free(s);
}

static void *gs_create(const tess_tick_app *app, int nslots, const tess_query *own,
                       const tess_query *hull)
{
    (void)own, (void)hull;
    const tess_graph_fns *fns = app->class_fns;
    if (fns == NULL || fns->graph == NULL || fns->init == NULL || fns->step == NULL || nslots < 1)
        return NULL;
    graph_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->fns = fns;
    s->g = fns->graph;
    s->user = app->user;
    s->nslots = nslots;
    s->words = ((size_t)s->g->nv + 63) / 64;
    s->v = calloc((size_t)nslots, sizeof *s->v);
    for (int i = 0; s->v != NULL && i < nslots; i++) {
        /* Values are malloc'd, not zeroed: pages never written stay untouched. */
        s->v[i].val = malloc(((size_t)s->g->nv + 1) * sizeof(double));
        s->v[i].present = calloc(s->words + 1, sizeof(uint64_t));
        if (s->v[i].val == NULL || s->v[i].present == NULL) break;
        s->v[i].view = (tess_graph_view){s->v[i].val, s->v[i].present, s->g->nv};
        if (i == nslots - 1) return s;
    }
    gs_destroy(s);
    return NULL;
}

static version *slot_of(graph_state *s, int slot)
{
    return slot >= 0 && slot < s->nslots ? &s->v[slot] : NULL;
}

static void gs_clear(void *p, int slot)
{
    graph_state *s = p;
    version *v = slot_of(s, slot);
    if (v != NULL) memset(v->present, 0, s->words * sizeof *v->present);
}

static int gs_init(void *p, int slot, const tess_region *r)
{
    graph_state *s = p;
    version *ver = slot_of(s, slot);
    if (ver == NULL) return TESS_ERR_INVAL;
    cregion c;
    int rc = region_make(s->g, r, &c);
    if (rc != TESS_OK) return rc;
    for (uint32_t i = 0, n = region_span(&c, s->g->nv); i < n; i++) {
        uint32_t v = region_at(&c, i);
        if (!region_accepts(&c, v)) continue;
        ver->val[v] = s->fns->init(s->user, v);
        bit_set(ver->present, v);
    }
    region_free(&c);
    return TESS_OK;
}

static int gs_pack(void *p, int slot, const tess_region *r, tess_buf *out)
{
    graph_state *s = p;
    version *ver = slot_of(s, slot);
    if (ver == NULL) return TESS_ERR_INVAL;
    cregion c;
    int rc = region_make(s->g, r, &c);
    if (rc != TESS_OK) return rc;
    unsigned char *dst = NULL;
    size_t room = 0;
    for (uint32_t i = 0, n = region_span(&c, s->g->nv); i < n; i++) {
        uint32_t v = region_at(&c, i);
        if (!bit_get(ver->present, v) || !region_accepts(&c, v)) continue;
        if (room == 0) {
            dst = tess_buf_reserve(out, PACK_CHUNK * TESS_GRAPH_RECORD_BYTES);
            if (dst == NULL) {
                rc = TESS_ERR_NOMEM;
                break;
            }
            room = PACK_CHUNK;
        }
        memcpy(dst, &v, 4);
        memcpy(dst + 4, &ver->val[v], 8);
        dst += TESS_GRAPH_RECORD_BYTES;
        out->len += TESS_GRAPH_RECORD_BYTES;
        room--;
    }
    region_free(&c);
    return rc;
}

static int records_valid(const unsigned char *d, size_t len, uint32_t nv)
{
    if (len % TESS_GRAPH_RECORD_BYTES != 0 || (len > 0 && d == NULL)) return 0;
    for (size_t at = 0; at < len; at += TESS_GRAPH_RECORD_BYTES) {
        uint32_t v;
        memcpy(&v, d + at, 4);
        if (v >= nv) return 0;
    }
    return 1;
}

static int gs_merge(void *p, int slot, const void *data, size_t len, const tess_region *r)
{
    graph_state *s = p;
    version *ver = slot_of(s, slot);
    const unsigned char *d = data;
    if (ver == NULL) return TESS_ERR_INVAL;
    if (!records_valid(d, len, s->g->nv)) return TESS_ERR_FORMAT;
    cregion c = {0};
    if (r != NULL) {
        int rc = region_make(s->g, r, &c);
        if (rc != TESS_OK) return rc;
    }
    for (size_t at = 0; at < len; at += TESS_GRAPH_RECORD_BYTES) {
        uint32_t v;
        memcpy(&v, d + at, 4);
        if (bit_get(ver->present, v)) continue;
        if (r != NULL && !((c.src < 0 || term_has(&c.terms[c.src], v)) && region_accepts(&c, v)))
            continue;
        memcpy(&ver->val[v], d + at + 4, 8);
        bit_set(ver->present, v);
    }
    if (r != NULL) region_free(&c);
    return TESS_OK;
}

/* Every in-neighbour of v present in `from` (the runtime's promise, checked
 * because a wrong label would otherwise read garbage silently). */
static int reads_present(const graph_state *s, const version *from, uint32_t v)
{
    const tess_graph *g = s->g;
    for (uint64_t e = g->in_first[v]; e < g->in_first[v + 1]; e++)
        if (!bit_get(from->present, g->in_src[e])) return 0;
    return 1;
}

static void step_flush(graph_state *s, const version *from, version *to, size_t n, int64_t tick)
{
    s->fns->step(s->user, from->val, s->batch, n, tick, s->out);
    for (size_t i = 0; i < n; i++) {
        to->val[s->batch[i]] = s->out[i];
        bit_set(to->present, s->batch[i]);
    }
}

static int64_t gs_step(void *p, int from_slot, int to_slot, const tess_region *r, int64_t tick)
{
    graph_state *s = p;
    version *from = slot_of(s, from_slot), *to = slot_of(s, to_slot);
    if (from == NULL || to == NULL || from == to) return TESS_ERR_INVAL;
    cregion c;
    int rc = region_make(s->g, r, &c);
    if (rc != TESS_OK) return rc;
    int64_t done = 0;
    size_t n = 0;
    for (uint32_t i = 0, span = region_span(&c, s->g->nv); i < span; i++) {
        uint32_t v = region_at(&c, i);
        if (bit_get(to->present, v) || !region_accepts(&c, v)) continue;
        if (!reads_present(s, from, v)) {
            rc = TESS_ERR_MISUSE;
            break;
        }
        s->batch[n++] = v;
        if (n == STEP_BATCH) {
            step_flush(s, from, to, n, tick);
            done += (int64_t)n;
            n = 0;
        }
    }
    if (n > 0) step_flush(s, from, to, n, tick);
    done += (int64_t)n;
    region_free(&c);
    return rc != TESS_OK ? rc : done;
}

static int64_t gs_count(void *p, int slot, const tess_region *r)
{
    graph_state *s = p;
    version *ver = slot_of(s, slot);
    if (ver == NULL) return TESS_ERR_INVAL;
    cregion c;
    int rc = region_make(s->g, r, &c);
    if (rc != TESS_OK) return rc;
    int64_t count = 0;
    for (uint32_t i = 0, n = region_span(&c, s->g->nv); i < n; i++) {
        uint32_t v = region_at(&c, i);
        count += bit_get(ver->present, v) && region_accepts(&c, v);
    }
    region_free(&c);
    return count;
}

static const void *gs_snapshot(void *p, int slot)
{
    graph_state *s = p;
    version *ver = slot_of(s, slot);
    return ver != NULL ? &ver->view : NULL;
}

const tess_state_class tess_graph_class = {
    .name = "graph",
    .create = gs_create,
    .destroy = gs_destroy,
    .clear = gs_clear,
    .init = gs_init,
    .pack = gs_pack,
    .merge = gs_merge,
    .step = gs_step,
    .count = gs_count,
    .snapshot = gs_snapshot,
};

/* ------------------------------------------------------------ unpacking */

int tess_graph_unpack(const void *packed, size_t len, uint32_t nv, double *out,
                      uint64_t *count_out)
{
    const unsigned char *d = packed;
    if (!records_valid(d, len, nv)) return TESS_ERR_FORMAT;
    uint64_t *seen = calloc(((size_t)nv + 63) / 64 + 1, sizeof *seen);
    if (seen == NULL) return TESS_ERR_NOMEM;
    uint64_t count = 0;
    int rc = TESS_OK;
    for (size_t at = 0; at < len; at += TESS_GRAPH_RECORD_BYTES) {
        uint32_t v;
        memcpy(&v, d + at, 4);
        if (bit_get(seen, v)) {
            rc = TESS_ERR_FORMAT;
            break;
        }
        bit_set(seen, v);
        memcpy(&out[v], d + at + 4, 8);
        count++;
    }
    free(seen);
    if (rc == TESS_OK && count_out != NULL) *count_out = count;
    return rc;
}
