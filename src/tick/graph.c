/*
 * graph.c — the partitioned graph of the graph state class (tick_graph.h):
 * the graph with its partition and hop labels (tess_graph) and the Table-1
 * query functions over those labels.  The per-process versions of vertex
 * values (tess_graph_class) are graph_class.c.
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

#include "tick/graph_impl.h"

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
    g->inner = calloc((size_t)nparts, sizeof *g->inner);
    pthread_mutex_init(&g->grow_lock, NULL);
    pthread_mutex_init(&g->cache_lock, NULL);
    if (g->part == NULL || g->labels == NULL || g->inner == NULL || build_out_csr(g) != TESS_OK) {
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
    TESS_FREE_ALL(lab->dist, lab->order, lab->level_end, lab->touched);
}

void tess_graph_destroy(tess_graph *g)
{
    if (g == NULL) return;
    for (int i = 0; g->labels != NULL && i < g->nparts * 2; i++) labels_free(&g->labels[i]);
    for (int i = 0; g->inner != NULL && i < g->nparts; i++)
        TESS_FREE_ALL(g->inner[i].key, g->inner[i].order, g->inner[i].level_end,
                      g->inner[i].touched);
    TESS_FREE_ALL(g->inner, g->labels, g->part, g->out_first, g->out_dst, g->cache);
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
static void neighbours(const tess_graph *g, int dir, uint32_t u, const uint32_t **nb, uint64_t *n)
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

/* ------------------------------------------------------------ inner labels */

/* The depth of every vertex of p from outside p: a BFS along out-edges
 * whose first level is p's vertices with an in-neighbour outside p. */
static int inner_compute(tess_graph *g, inner_labels *in, int p)
{
    uint32_t nv = g->nv;
    uint32_t *depth = malloc(((size_t)nv + 1) * sizeof *depth);
    uint32_t *queue = malloc(((size_t)nv + 1) * sizeof *queue);
    in->key = malloc(nv ? nv : 1);
    in->order = malloc(((size_t)nv + 1) * sizeof *in->order);
    in->level_end = calloc(INNER_TOP + 1, sizeof *in->level_end);
    in->touched = calloc(g->words, sizeof *in->touched);
    if (!depth || !queue || !in->key || !in->order || !in->level_end || !in->touched) {
        free(depth);
        free(queue);
        return TESS_ERR_NOMEM;
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t v = 0; v < nv; v++) {
        depth[v] = UINT32_MAX;
        if (g->part[v] != p) continue;
        for (uint64_t e = g->in_first[v]; e < g->in_first[v + 1]; e++)
            if (g->part[g->in_src[e]] != p) {
                depth[v] = 1;
                queue[tail++] = v;
                break;
            }
    }
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint64_t e = g->out_first[u]; e < g->out_first[u + 1]; e++) {
            uint32_t w = g->out_dst[e];
            if (g->part[w] != p || depth[w] != UINT32_MAX) continue;
            depth[w] = depth[u] + 1;
            queue[tail++] = w;
        }
    }
    /* Keys, and the vertices ordered by key (a counting sort, ascending
     * vertex within a key); level_end counts first, then cumulates. */
    memset(in->key, UNSEEN, nv);
    for (uint32_t v = 0; v < nv; v++)
        if (g->part[v] == p) {
            uint32_t d = depth[v] < INNER_TOP ? depth[v] : INNER_TOP;
            in->key[v] = (unsigned char)(INNER_TOP - d);
            in->level_end[in->key[v]]++;
        }
    uint32_t start[INNER_TOP + 1], sum = 0;
    for (int x = 0; x <= INNER_TOP; x++) {
        start[x] = sum;
        sum += in->level_end[x];
        in->level_end[x] = sum;
    }
    for (uint32_t v = 0; v < nv; v++)
        if (g->part[v] == p) in->order[start[in->key[v]]++] = v;
    in->touched[(size_t)p / 64] |= (uint64_t)1 << (p % 64);
    free(depth);
    free(queue);
    return TESS_OK;
}

static inner_labels *inner_get(tess_graph *g, int p)
{
    inner_labels *in = &g->inner[p];
    if (__atomic_load_n(&in->computed, __ATOMIC_ACQUIRE)) return in;
    pthread_mutex_lock(&g->grow_lock);
    int rc = TESS_OK;
    if (!in->computed) {
        rc = inner_compute(g, in, p);
        if (rc == TESS_OK) __atomic_store_n(&in->computed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g->grow_lock);
    return rc == TESS_OK ? in : NULL;
}

int tess_graph_prepare(tess_graph *g, int hops)
{
    if (hops < 0) hops = 0;
    for (int p = 0; p < g->nparts; p++)
        if (labels_get(g, p, DIR_IN, hops) == NULL || inner_get(g, p) == NULL)
            return TESS_ERR_NOMEM;
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

static int query_valid(const tess_graph *g, const tess_graph_q *q)
{
    if (q->kind == TESS_GRAPH_ALL || q->kind == TESS_GRAPH_NONE) return 1;
    if (q->part < 0 || q->part >= g->nparts) return 0;
    if (q->kind == TESS_GRAPH_OWN) return 1;
    if (q->kind == TESS_GRAPH_INNER) return q->hops >= 1 && q->hops <= TESS_GRAPH_MAX_HOPS;
    return (q->kind == TESS_GRAPH_IN_HOPS || q->kind == TESS_GRAPH_OUT_HOPS) && q->hops >= 0 &&
           q->hops <= TESS_GRAPH_MAX_HOPS;
}

/* Same set, canonical spelling: ALL {0,ALL,0}; OWN {p,OWN,0}; hop counts past
 * the last non-empty level lowered to it; zero hops are OWN. */
static tess_graph_q normalise(const hop_labels *lab, tess_graph_q q)
{
    if (q.kind == TESS_GRAPH_ALL) return (tess_graph_q){0, TESS_GRAPH_ALL, 0};
    if (q.kind == TESS_GRAPH_NONE) return (tess_graph_q){0, TESS_GRAPH_NONE, 0};
    if (q.kind == TESS_GRAPH_INNER) return q;
    if (q.kind == TESS_GRAPH_OWN) q.hops = 0;
    int last = lab != NULL ? __atomic_load_n(&lab->last, __ATOMIC_RELAXED) : -1;
    if (last >= 0 && q.hops > last) q.hops = last;
    if (q.hops == 0) q.kind = TESS_GRAPH_OWN;
    return q;
}

int tess__graph_term_make(tess_graph *g, const tess_query *query, term *t)
{
    tess_graph_q q = tess_graph_q_of(query);
    if (!query_valid(g, &q)) return TESS_ERR_INVAL;
    memset(t, 0, sizeof *t);
    if (q.kind == TESS_GRAPH_ALL) {
        t->size = g->nv;
        t->norm = normalise(NULL, q);
        return TESS_OK;
    }
    if (q.kind == TESS_GRAPH_NONE || q.kind == TESS_GRAPH_INNER) {
        /* NONE: a term no vertex passes (an empty INNER of partition 0). */
        inner_labels *in = inner_get(g, q.kind == TESS_GRAPH_NONE ? 0 : q.part);
        if (in == NULL) return TESS_ERR_NOMEM;
        t->dist = in->key;
        t->order = in->order;
        t->touched = in->touched;
        t->empty = q.kind == TESS_GRAPH_NONE;
        t->h = t->empty ? 0 : (unsigned)(INNER_TOP - q.hops - 1);
        t->size = t->empty ? 0 : in->level_end[t->h];
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

int64_t tess_graph_query_size(tess_graph *g, const tess_query *q)
{
    term t;
    int rc = tess__graph_term_make(g, q, &t);
    return rc == TESS_OK ? (int64_t)t.size : rc;
}

/* RD: one hop further in direction `kind` for OWN and that kind; ALL else. */
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

/* RX: the vertices of q whose in-neighbours all lie in q, or a subset. */
void tess_graph_rx(tess_graph *g, const tess_query *q, tess_query *out)
{
    tess_graph_q in = tess_graph_q_of(q);
    tess_graph_q r = {0, TESS_GRAPH_NONE, 0};
    if (!query_valid(g, &in)) in.kind = TESS_GRAPH_NONE;
    if (in.kind == TESS_GRAPH_IN_HOPS && in.hops == 0) in.kind = TESS_GRAPH_OWN;
    switch (in.kind) {
    case TESS_GRAPH_ALL: r = in; break;
    case TESS_GRAPH_OWN:
    case TESS_GRAPH_OUT_HOPS: r = (tess_graph_q){in.part, TESS_GRAPH_INNER, 1}; break;
    case TESS_GRAPH_IN_HOPS:
        r = (tess_graph_q){in.part, in.hops > 1 ? TESS_GRAPH_IN_HOPS : TESS_GRAPH_OWN,
                           in.hops > 1 ? in.hops - 1 : 0};
        break;
    case TESS_GRAPH_INNER:
        if (in.hops < TESS_GRAPH_MAX_HOPS)
            r = (tess_graph_q){in.part, TESS_GRAPH_INNER, in.hops + 1};
        break;
    default: break;
    }
    *out = tess_graph_query(r.part, r.kind, r.hops);
}

void tess_graph_same(const tess_query *q, tess_query *out) { *out = *q; }

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

/* INNER(p, h) counts as OWN(p) in DISJOINT: a superset, so "disjoint" stays true. */
static tess_query disjoint_form(const tess_query *q)
{
    tess_graph_q x = tess_graph_q_of(q);
    return x.kind == TESS_GRAPH_INNER ? tess_graph_query(x.part, TESS_GRAPH_OWN, 0) : *q;
}

int tess_graph_disjoint(tess_graph *g, const tess_query *qa, const tess_query *qb)
{
    term a, b;
    tess_query xa = disjoint_form(qa), xb = disjoint_form(qb);
    if (tess__graph_term_make(g, &xa, &a) != TESS_OK ||
        tess__graph_term_make(g, &xb, &b) != TESS_OK)
        return 0;
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
