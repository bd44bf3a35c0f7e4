/*
 * graph_impl.h — the graph of the graph state class, shared by graph.c (the
 * graph, its hop labels and the query functions) and graph_class.c (regions
 * and the per-process versions).  Private to src/tick.
 */
#ifndef TESS_SRC_TICK_GRAPH_IMPL_H
#define TESS_SRC_TICK_GRAPH_IMPL_H

#include <pthread.h>
#include <stdint.h>
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

/* INNER(p, h) as a term: key[v] = INNER_TOP - min(depth(v), INNER_TOP) for
 * the vertices of p, depth(v) the fewest out-edge hops from a vertex outside
 * p to v (none: infinite), UNSEEN elsewhere; so INNER(p, h) = the vertices
 * with key <= INNER_TOP - h - 1, a prefix of `order` (deepest first). */
#define INNER_TOP (TESS_GRAPH_MAX_HOPS + 1)
typedef struct inner_labels {
    int computed;        /* 1 once complete (atomic) */
    unsigned char *key;  /* nv bytes */
    uint32_t *order;     /* p's vertices by key */
    uint32_t *level_end; /* INNER_TOP: order[0 .. level_end[x]) have key <= x */
    uint64_t *touched;   /* words: p alone */
} inner_labels;

typedef struct pair_entry {
    tess_graph_q a, b;
    int used, disjoint;
} pair_entry;

struct tess_graph {
    uint32_t nv;
    int nparts;
    size_t words;             /* uint64 words of a partition bitmap */
    const uint64_t *in_first; /* borrowed */
    const uint32_t *in_src;   /* borrowed */
    uint64_t *out_first;      /* out-edge CSR, built at creation */
    uint32_t *out_dst;
    int32_t *part;
    hop_labels *labels;  /* nparts * 2: [p * 2 + dir] */
    inner_labels *inner; /* nparts */
    pthread_mutex_t grow_lock;
    pthread_mutex_t cache_lock; /* the DISJOINT cache */
    pair_entry *cache;
    size_t cache_cap, cache_len;
};

static inline unsigned dist_load(const unsigned char *d, uint32_t v)
{
    return __atomic_load_n(&d[v], __ATOMIC_RELAXED);
}

static inline int bit_get(const uint64_t *bits, uint32_t v)
{
    return (int)((bits[v >> 6] >> (v & 63)) & 1u);
}

static inline void bit_set(uint64_t *bits, uint32_t v) { bits[v >> 6] |= (uint64_t)1 << (v & 63); }

/* A query made ready for membership tests: the vertices v with
 * dist[v] <= h (dist NULL: every vertex), `size` of them, listed first in
 * `order`; `touched` the partitions among them. */
typedef struct term {
    const unsigned char *dist;
    const uint32_t *order;
    const uint64_t *touched;
    unsigned h;
    int empty; /* NONE: no vertex, whatever dist says */
    uint32_t size;
    tess_graph_q norm; /* the query, normalised */
} term;

static inline int term_has(const term *t, uint32_t v)
{
    return !t->empty && (t->dist == NULL || dist_load(t->dist, v) <= t->h);
}

/* Make query ready for membership tests (labels grown as needed). */
int tess__graph_term_make(tess_graph *g, const tess_query *query, term *t);

#endif
