/*
 * graph_class.c — regions over the graph's queries and the graph state
 * class (tess_graph_class): the per-process versions of vertex values, their
 * packing, merging and stepping (graph.c holds the graph and its labels).
 *
 * What STEP reads is checked twice.  Always: before a vertex is stepped,
 * every in-neighbour (what tick_graph.h lets STEP read) must be present in
 * the version it reads, or the step fails with TESS_ERR_MISUSE naming both.
 * In the checking mode (TESS_TICK_CHECK=1, tick.h) besides: values a
 * version does not hold are NaN, so a STEP that reads beyond its
 * in-neighbours (its own old value, two hops) a vertex the process does not
 * hold gives NaN, and a NaN result fails the same way.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tick/graph_impl.h"
#include "tick/tick_internal.h"

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
        int rc = tess__graph_term_make(g, q, &c->terms[i]);
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
    int check;    /* TESS_TICK_CHECK=1: values not held are NaN */
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
    s->check = tess__tick_check_on();
    s->words = ((size_t)s->g->nv + 63) / 64;
    s->v = calloc((size_t)nslots, sizeof *s->v);
    for (int i = 0; s->v != NULL && i < nslots; i++) {
        /* Values are malloc'd, not zeroed: pages never written stay untouched. */
        s->v[i].val = malloc(((size_t)s->g->nv + 1) * sizeof(double));
        s->v[i].present = calloc(s->words + 1, sizeof(uint64_t));
        if (s->v[i].val == NULL || s->v[i].present == NULL) break;
        s->v[i].view = (tess_graph_view){s->v[i].val, s->v[i].present, s->g->nv};
        /* The checking mode's poison touches every page: nv doubles per slot. */
        for (uint32_t u = 0; s->check && u < s->g->nv; u++) s->v[i].val[u] = NAN;
        if (i == nslots - 1) return s;
    }
    gs_destroy(s);
    return NULL;
}

static version *slot_of(graph_state *s, int slot)
{
    return slot >= 0 && slot < s->nslots ? &s->v[slot] : NULL;
}

/* The opening of every operation on one slot's vertices in a region: the
 * slot's version (TESS_ERR_INVAL for a bad slot) and the region made ready
 * to enumerate (the caller frees it with region_free). */
static int slot_region(graph_state *s, int slot, const tess_region *r, version **ver_out,
                       cregion *c)
{
    *ver_out = slot_of(s, slot);
    if (*ver_out == NULL) return TESS_ERR_INVAL;
    return region_make(s->g, r, c);
}

static void gs_clear(void *p, int slot)
{
    graph_state *s = p;
    version *v = slot_of(s, slot);
    if (v == NULL) return;
    for (size_t w = 0; s->check && w < s->words; w++) /* poison what it held: O(held) */
        for (uint64_t bits = v->present[w]; bits != 0; bits &= bits - 1)
            v->val[w * 64 + (size_t)__builtin_ctzll(bits)] = NAN;
    memset(v->present, 0, s->words * sizeof *v->present);
}

static int gs_init(void *p, int slot, const tess_region *r)
{
    graph_state *s = p;
    version *ver;
    cregion c;
    int rc = slot_region(s, slot, r, &ver, &c);
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
    version *ver;
    cregion c;
    int rc = slot_region(s, slot, r, &ver, &c);
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
        if (!bit_get(from->present, g->in_src[e])) {
            tess__tick_check_note("vertex %u reads its in-neighbour %u", v, g->in_src[e]);
            return 0;
        }
    return 1;
}

static int step_flush(graph_state *s, const version *from, version *to, size_t n, int64_t tick)
{
    s->fns->step(s->user, from->val, s->batch, n, tick, s->out);
    for (size_t i = 0; i < n; i++) {
        if (s->check && isnan(s->out[i])) {
            tess__tick_check_note("vertex %u came out NaN (a value not held reads as NaN)",
                                  s->batch[i]);
            return TESS_ERR_MISUSE;
        }
        to->val[s->batch[i]] = s->out[i];
        bit_set(to->present, s->batch[i]);
    }
    return TESS_OK;
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
            rc = step_flush(s, from, to, n, tick);
            if (rc != TESS_OK) break;
            done += (int64_t)n;
            n = 0;
        }
    }
    if (n > 0 && rc == TESS_OK) rc = step_flush(s, from, to, n, tick);
    done += (int64_t)n;
    region_free(&c);
    return rc != TESS_OK ? rc : done;
}

static int64_t gs_count(void *p, int slot, const tess_region *r)
{
    graph_state *s = p;
    version *ver;
    cregion c;
    int rc = slot_region(s, slot, r, &ver, &c);
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
    /* Checkpoints: the packed form is already global (vertices with their global ids), so
     * any partition of a restoring run loads it. */
    .save = gs_pack,
    .load = gs_merge,
};

/* ------------------------------------------------------------ unpacking */

int tess_graph_unpack(const void *packed, size_t len, uint32_t nv, double *out, uint64_t *count_out)
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
