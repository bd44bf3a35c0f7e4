/*
 * tick_graph.h — the partitioned-graph state class of the tick face: one
 * tuple per vertex (id = dense vertex index 0 .. nv-1) holding a double, for
 * graph programs whose STEP reads a vertex's in-neighbours (PageRank on the
 * tick face, the SoCC 2011 paper's Appendix B.2).
 *
 * The graph and its partition are described once by a tess_graph (built by
 * the application on every rank from identical data before tess_main()); it
 * also holds the vertex *labels* the queries are evaluated with:
 *
 *   for every partition p and every vertex v
 *     in_hops(p, v)  = the fewest in-edge hops from v to a vertex of p — the
 *                      number of ticks until v's value reaches p
 *                      (v -> ... -> w, w in p; 0 for p's own vertices);
 *     out_hops(p, v) = the fewest out-edge hops from a vertex of p to v — the
 *                      number of ticks until p's values reach v.
 *
 * Labels are BFS levels from p's vertex set along reversed (in) or forward
 * (out) edges, capped at TESS_GRAPH_MAX_HOPS, and computed lazily, per
 * (partition, direction) and level by level, up to the largest hop count a
 * query asks for; tess_graph_prepare() computes them eagerly up front.
 *
 * Queries (tess_graph_q packed into a tess_query with tess_graph_query):
 *   OWN(p)          the vertices of partition p
 *   IN_HOPS(p, h)   the vertices v with in_hops(p, v) <= h  (includes OWN(p))
 *   OUT_HOPS(p, h)  the vertices v with out_hops(p, v) <= h (includes OWN(p))
 *   INNER(p, h)     the vertices of p that no vertex outside p reaches in h
 *                   out-edge hops or fewer (1 <= h <= MAX_HOPS): whose value
 *                   h ticks on depends on p's values alone
 *   ALL             every vertex;   NONE   no vertex
 * and the Table-1 functions (the SoCC 2011 paper's PageRank, Appendix B)
 * the helpers below implement:
 *   RD(OWN p) = RD(IN_HOPS p,h-1) = IN_HOPS(p, h)     WD = identity
 *   RX(OWN p) = INNER(p, 1), RX(INNER p,h) = INNER(p, h+1),
 *   RX(IN_HOPS p,h) = IN_HOPS(p, h-1), RX(OUT_HOPS p,h) = INNER(p, 1)
 *                                                     WX = identity
 *   RD of anything else: ALL (a superset); RX of ALL: ALL; RX of anything
 *   else: NONE (a subset) — the directions tick.h allows.
 *   DISJOINT: exact, from the labels, except that INNER(p, h) counts as all
 *   of OWN(p) there (it may say 0 when unsure).
 *
 * Storage: every version (slot) of every process is a dense array of nv
 * doubles plus an nv-bit presence bitmap — simple and fast, at a cost of
 * about 8 bytes per vertex, per slot, per process (pages a process never
 * writes are never touched).  Labels cost 5 bytes per vertex per
 * (partition, direction) actually queried, shared by every process of a rank.
 */
#ifndef TESSERA_TICK_GRAPH_H
#define TESSERA_TICK_GRAPH_H

#include "tessera/tick.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest hop count a label records; RD/RX beyond it give ALL. */
#define TESS_GRAPH_MAX_HOPS 250

enum {
    TESS_GRAPH_OWN = 0,
    TESS_GRAPH_IN_HOPS = 1,
    TESS_GRAPH_OUT_HOPS = 2,
    TESS_GRAPH_ALL = 3,
    TESS_GRAPH_INNER = 4,
    TESS_GRAPH_NONE = 5
};

/* A query: OWN uses part; IN/OUT_HOPS use part and hops (0 .. MAX_HOPS);
 * INNER part and hops (1 .. MAX_HOPS); ALL and NONE neither (both 0). */
typedef struct tess_graph_q {
    int32_t part, kind, hops;
} tess_graph_q;

static inline tess_query tess_graph_query(int32_t part, int32_t kind, int32_t hops)
{
    tess_graph_q g = {part, kind, hops};
    return tess__query_pack(&g, sizeof g);
}

static inline tess_graph_q tess_graph_q_of(const tess_query *q)
{
    tess_graph_q g;
    tess__query_unpack(q, &g, sizeof g);
    return g;
}

/* The graph, its partition and its labels (opaque). */
typedef struct tess_graph tess_graph;

/*
 * Describe a graph of nv vertices by its in-edge CSR: the in-neighbours of v
 * are in_src[in_first[v] .. in_first[v+1]) — the order STEP sums them in,
 * which must not depend on the partition (e.g. the edge list's order).
 * in_first and in_src are borrowed: they must stay valid and unchanged until
 * tess_graph_destroy.  part[v] in [0, nparts) is copied.  Every rank must
 * build the same graph.  0, TESS_ERR_INVAL (a part out of range, nparts < 1)
 * or TESS_ERR_NOMEM; *out is set only on success.
 */
TESS_API int tess_graph_create(uint32_t nv, const uint64_t *in_first, const uint32_t *in_src,
                               const int32_t *part, int nparts, tess_graph **out);
/* Accepts NULL.  No process may still use it. */
TESS_API void tess_graph_destroy(tess_graph *g);

TESS_API uint32_t tess_graph_vertices(const tess_graph *g);
TESS_API int tess_graph_parts(const tess_graph *g);

/* Compute the in-labels of every partition up to `hops` levels (clamped to
 * TESS_GRAPH_MAX_HOPS) and its INNER labels now, so a run does not pay for
 * them lazily (out-labels, which the runtime does not ask for, stay lazy).  0 or TESS_ERR_NOMEM.  Every function taking a tess_graph is
 * thread-safe: labels grow under a lock and are read without one. */
TESS_API int tess_graph_prepare(tess_graph *g, int hops);

/* in_hops(part, v) (kind IN_HOPS) or out_hops(part, v) (kind OUT_HOPS), or -1
 * when v is more than TESS_GRAPH_MAX_HOPS hops away or unreachable. */
TESS_API int tess_graph_hops(tess_graph *g, int part, int kind, uint32_t v);

/* Number of vertices in a query, or a negative TESS_ERR_* (invalid query). */
TESS_API int64_t tess_graph_query_size(tess_graph *g, const tess_query *q);

/* 1 if v is in every pos query of r and in no neg query, 0 if not, or a
 * negative TESS_ERR_* for an invalid query. */
TESS_API int tess_graph_region_contains(tess_graph *g, const tess_region *r, uint32_t v);

/*
 * The Table-1 functions, for an application's tess_tick_app callbacks.
 * Results are normalised (IN_HOPS(p, 0) is written OWN(p); a hop count past
 * the last non-empty BFS level is lowered to it) so equal sets tend to be
 * equal queries.  An invalid query, or running out of memory, gives ALL
 * (RD) or NONE (RX): the safe side.
 */
TESS_API void tess_graph_rd(tess_graph *g, const tess_query *q, tess_query *out);
TESS_API void tess_graph_rx(tess_graph *g, const tess_query *q, tess_query *out);
/* WD and WX: vertices do not move. */
TESS_API void tess_graph_same(const tess_query *q, tess_query *out);
/* 1 only if no vertex is in both (exact for valid queries; 0 when unsure).
 * Cheap for the O(P^2) startup calls: a per-level bitmap of the partitions a
 * hop set touches answers most pairs, OWN pairs exactly; the rest scan the
 * smaller set once and are cached. */
TESS_API int tess_graph_disjoint(tess_graph *g, const tess_query *a, const tess_query *b);
/* PART: OWN(0) .. OWN(n-1); TESS_ERR_INVAL with ctx's last error unless n
 * is the number of parts the graph was cut into. */
TESS_API int tess_graph_part(tess_ctx *ctx, tess_graph *g, int n, tess_query *parts);

/* ---- the state class ---- */

/* What PART's snapshot points to: a version's values and presence bits
 * (vertex v present iff bit v%64 of present[v/64]). */
typedef struct tess_graph_view {
    const double *values;
    const uint64_t *present;
    uint32_t nv;
} tess_graph_view;

/* The application's NEW and STEP (tess_tick_app.class_fns). */
typedef struct tess_graph_fns {
    tess_graph *graph;
    /* NEW: the initial value of vertex v. */
    double (*init)(void *user, uint32_t v);
    /* STEP: out[i] = value at tick+1 of vertex vs[i] for i < n, reading the
     * tick's values prev[u] of its in-neighbours u (only those are
     * guaranteed to be present).  Called from worker threads, concurrently. */
    void (*step)(void *user, const double *prev, const uint32_t *vs, size_t n, int64_t tick,
                 double *out);
} tess_graph_fns;

/* The graph class.  A STEP whose in-neighbours are not all present in the
 * version it reads ends the run, naming the tick, the vertex and the
 * in-neighbour (always: the labels or an RD too small, an RX or WX too
 * large).  With TESS_TICK_CHECK=1 in the environment, besides, values a
 * version does not hold are NaN and a STEP giving NaN ends the run: a STEP
 * that reads beyond its in-neighbours is caught too (docs/ticks.md,
 * "Checking mode"; it touches every slot's nv doubles). */
TESS_API extern const tess_state_class tess_graph_class;

/*
 * Packed form (pack/merge and tess_tick_result.final_state): 12-byte records
 * {uint32 vertex, double value}, native byte order, unaligned, in no
 * particular order.  Write every record into out[vertex] (out has nv
 * entries).  *count_out (may be NULL) gets the number of distinct vertices
 * written.  0, or TESS_ERR_FORMAT (a length not a multiple of 12, a vertex
 * >= nv, a vertex twice) with out partly written.
 */
#define TESS_GRAPH_RECORD_BYTES 12
TESS_API int tess_graph_unpack(const void *packed, size_t len, uint32_t nv, double *out,
                               uint64_t *count_out);

#ifdef __cplusplus
}
#endif

#endif
