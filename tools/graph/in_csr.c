/*
 * in_csr.c — a graph as in-edge CSR (tg_in_csr): from a graph in memory, or
 * streamed from a graph cache without ever holding the edge list.
 *
 * The stream reads the mapped cache's sections in three passes — the
 * destinations (in-degrees), the sources (out-degrees), then both together
 * (placing each source) — and drops each chunk's pages once read.  It
 * checks what tg__validate checks of a decoded graph: ids strictly
 * ascending, every endpoint a vertex, every vertex in some edge, sane site
 * bounds.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

#define STREAM_EDGES ((uint64_t)1 << 22) /* edges per chunk: 16 MiB per section */

void tg_in_csr_free(tg_in_csr *csr)
{
    if (csr == NULL) return;
    free(csr->in_first);
    free(csr->in_src);
    free(csr->outdeg);
    memset(csr, 0, sizeof *csr);
}

void tg_in_csr_release(tg_in_csr *csr, uint64_t lo, uint64_t hi)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = (uintptr_t)(csr->in_src + csr->in_first[lo]);
    uintptr_t to = (uintptr_t)(csr->in_src + csr->in_first[hi]);
    from = (from + page - 1) / page * page;
    to = to / page * page;
    if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
}

static int csr_alloc(uint64_t nv, uint64_t ne, tg_in_csr *csr)
{
    memset(csr, 0, sizeof *csr);
    csr->in_first = calloc(nv + 1, sizeof *csr->in_first);
    csr->in_src = malloc((ne ? ne : 1) * sizeof *csr->in_src);
    csr->outdeg = calloc(nv ? nv : 1, sizeof *csr->outdeg);
    if (csr->in_first && csr->in_src && csr->outdeg) return 0;
    tg_in_csr_free(csr);
    return TESS_ERR_NOMEM;
}

/* in_first[v+1] holds v's in-degree: prefix sums, and a fill cursor copy. */
static uint64_t *offsets_from_degrees(tg_in_csr *csr, uint64_t nv)
{
    for (uint64_t v = 0; v < nv; v++) csr->in_first[v + 1] += csr->in_first[v];
    uint64_t *fill = malloc((nv + 1) * sizeof *fill);
    if (fill != NULL) memcpy(fill, csr->in_first, (nv + 1) * sizeof *fill);
    return fill;
}

int tg_build_in_csr(const tg_graph *g, tg_in_csr *csr, char *err, size_t errlen)
{
    int rc = csr_alloc(g->nv, g->ne, csr);
    if (rc != 0)
        return tg__err(rc, err, errlen, "graph of %llu edges: %s", (unsigned long long)g->ne,
                       rc == TESS_ERR_NOMEM ? "out of memory" : "more than 2^32 edges");
    for (uint64_t e = 0; e < g->ne; e++) {
        csr->in_first[g->dst[e] + 1]++;
        csr->outdeg[g->src[e]]++;
    }
    uint64_t *fill = offsets_from_degrees(csr, g->nv);
    if (fill == NULL) {
        tg_in_csr_free(csr);
        return tg__err(TESS_ERR_NOMEM, err, errlen, "in-edges: out of memory");
    }
    for (uint64_t e = 0; e < g->ne; e++) csr->in_src[fill[g->dst[e]]++] = g->src[e];
    free(fill);
    return 0;
}

/* ---------------------------------------------------------------- stream */

typedef struct stream {
    const tg__cache_view *v;
    const char *name;
    tg_graph *g;
    tg_in_csr *csr;
    uint8_t *seen; /* vertices met in an edge */
    char *err;
    size_t errlen;
} stream;

static int bad_endpoint(stream *s, uint64_t e, uint32_t x)
{
    return tg__err(TESS_ERR_FORMAT, s->err, s->errlen,
                   "%s: edge %llu refers to vertex %u, but there are %llu vertices", s->name,
                   (unsigned long long)e, x, (unsigned long long)s->v->nv);
}

/* Pass over one endpoint section, counting each vertex: its in-degree into
 * in_first[v+1] (the destinations) or its out-degree (the sources). */
static int count_section(stream *s, const unsigned char *sec, int destinations)
{
    const uint64_t nv = s->v->nv, ne = s->v->ne;
    for (uint64_t lo = 0; lo < ne; lo += STREAM_EDGES) {
        uint64_t hi = ne - lo < STREAM_EDGES ? ne : lo + STREAM_EDGES;
        for (uint64_t e = lo; e < hi; e++) {
            uint32_t x = tg__get_le32(sec + 4 * e);
            if (x >= nv) return bad_endpoint(s, e, x);
            if (destinations) s->csr->in_first[(uint64_t)x + 1]++;
            else s->csr->outdeg[x]++;
            s->seen[x] = 1;
        }
        tg__cache_release(s->v, sec + 4 * lo, sec + 4 * hi);
    }
    return 0;
}

static int place_sources(stream *s)
{
    const uint64_t ne = s->v->ne;
    uint64_t *fill = offsets_from_degrees(s->csr, s->v->nv);
    if (fill == NULL)
        return tg__err(TESS_ERR_NOMEM, s->err, s->errlen, "%s: out of memory", s->name);
    for (uint64_t lo = 0; lo < ne; lo += STREAM_EDGES) {
        uint64_t hi = ne - lo < STREAM_EDGES ? ne : lo + STREAM_EDGES;
        for (uint64_t e = lo; e < hi; e++)
            s->csr->in_src[fill[tg__get_le32(s->v->dst + 4 * e)]++] =
                tg__get_le32(s->v->src + 4 * e);
        tg__cache_release(s->v, s->v->src + 4 * lo, s->v->src + 4 * hi);
        tg__cache_release(s->v, s->v->dst + 4 * lo, s->v->dst + 4 * hi);
    }
    free(fill);
    return 0;
}

/* ids and sites into g (edges left NULL), checked as tg__validate would. */
static int take_vertices(stream *s)
{
    const tg__cache_view *v = s->v;
    tg_graph *g = s->g;
    g->nv = v->nv;
    g->ne = v->ne;
    g->nsites = v->nsites;
    g->ids = malloc((v->nv ? v->nv : 1) * sizeof *g->ids);
    if (v->nsites) g->site_first = malloc((v->nsites + 1) * sizeof *g->site_first);
    if (g->ids == NULL || (v->nsites && g->site_first == NULL))
        return tg__err(TESS_ERR_NOMEM, s->err, s->errlen, "%s: out of memory", s->name);
    for (uint64_t i = 0; i < v->nv; i++) g->ids[i] = tg__get_le64(v->ids + 8 * i);
    for (uint64_t i = 0; v->nsites && i <= v->nsites; i++)
        g->site_first[i] = tg__get_le64(v->sites + 8 * i);
    return tg__validate_vertices(g, s->name, s->err, s->errlen);
}

static int stream_cache(stream *s)
{
    int rc = take_vertices(s);
    if (rc == 0) rc = csr_alloc(s->v->nv, s->v->ne, s->csr);
    if (rc == 0 && (s->seen = calloc(s->v->nv ? s->v->nv : 1, 1)) == NULL) rc = TESS_ERR_NOMEM;
    if (rc == TESS_ERR_NOMEM) return tg__err(rc, s->err, s->errlen, "%s: out of memory", s->name);
    if (rc == 0) rc = count_section(s, s->v->dst, 1);
    if (rc == 0) rc = count_section(s, s->v->src, 0);
    for (uint64_t x = 0; rc == 0 && x < s->v->nv; x++)
        if (!s->seen[x])
            rc = tg__err(TESS_ERR_FORMAT, s->err, s->errlen, "%s: vertex %llu appears in no edge",
                         s->name, (unsigned long long)s->g->ids[x]);
    free(s->seen);
    s->seen = NULL;
    return rc == 0 ? place_sources(s) : rc;
}

int tg_load_in_csr(const char *path, const char *spec, tg_graph *g, tg_in_csr *csr, char *err,
                   size_t errlen)
{
    memset(g, 0, sizeof *g);
    memset(csr, 0, sizeof *csr);
    int cache = path ? tg__is_cache(path, err, errlen) : 0;
    if (cache < 0) return cache;
    tg__cache_view v;
    int rc = cache ? tg__cache_open(path, &v, err, errlen) : 1;
    if (rc == 0) {
        stream s = {.v = &v, .name = path, .g = g, .csr = csr, .err = err, .errlen = errlen};
        rc = stream_cache(&s);
        tg__cache_close(&v);
    } else if (rc == 1) { /* not a cache, or not mappable: the whole graph, then its CSR */
        rc = path ? tg_load_file(path, g, err, errlen) : tg_generate(spec, g, err, errlen);
        if (rc == 0) rc = tg_build_in_csr(g, csr, err, errlen);
        free(g->src);
        free(g->dst);
        g->src = g->dst = NULL;
    }
    if (rc != 0) {
        tg_free(g);
        tg_in_csr_free(csr);
    }
    return rc;
}
