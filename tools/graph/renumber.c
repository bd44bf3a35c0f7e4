/*
 * renumber.c — map original 64-bit vertex ids to dense internal indices:
 * index i is the i-th smallest distinct id appearing in the edges.
 *
 * Two strategies.  When the ids span a range not much larger than the
 * number of endpoints (generated graphs, most real data sets) a direct
 * table over [min, max] marks the ids present and a prefix count turns the
 * marks into indices: two linear passes, no sorting.  Otherwise a copy of
 * all endpoints is radix sorted (LSD, 11-bit digits, passes whose digit is
 * constant skipped), deduplicated, and each endpoint is looked up in a hash
 * table from id to index.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
#define RADIX_PASSES 6 /* 6 * 11 >= 64 */

static void min_max(const uint64_t *a, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    for (uint64_t i = 0; i < n; i++) {
        if (a[i] < *lo) *lo = a[i];
        if (a[i] > *hi) *hi = a[i];
    }
}

static int too_many(uint64_t nv, const char *name, char *err, size_t errlen)
{
    return tg__err(TESS_ERR_FORMAT, err, errlen,
                   "%s: %llu distinct vertex ids; at most %u are supported", name,
                   (unsigned long long)nv, UINT32_MAX);
}

static int alloc_graph(tg_graph *g, uint64_t nv, uint64_t ne)
{
    g->ids = malloc((size_t)(nv ? nv : 1) * sizeof *g->ids);
    g->src = malloc((size_t)ne * sizeof *g->src);
    g->dst = malloc((size_t)ne * sizeof *g->dst);
    if (g->ids == NULL || g->src == NULL || g->dst == NULL) return TESS_ERR_NOMEM;
    g->nv = nv;
    g->ne = ne;
    return 0;
}

static int renumber_direct(const uint64_t *rs, const uint64_t *rd, uint64_t ne, uint64_t lo,
                           uint64_t range, tg_graph *g, const char *name, char *err, size_t errlen)
{
    uint32_t *map = calloc((size_t)range, sizeof *map);
    if (map == NULL) return TESS_ERR_NOMEM;
    for (uint64_t e = 0; e < ne; e++) {
        map[rs[e] - lo] = 1;
        map[rd[e] - lo] = 1;
    }
    uint64_t nv = 0;
    for (uint64_t r = 0; r < range; r++) nv += map[r];
    int rc = nv > UINT32_MAX ? too_many(nv, name, err, errlen) : alloc_graph(g, nv, ne);
    if (rc == 0) {
        uint32_t next = 0;
        for (uint64_t r = 0; r < range; r++)
            if (map[r]) {
                g->ids[next] = lo + r;
                map[r] = next++;
            }
        for (uint64_t e = 0; e < ne; e++) {
            g->src[e] = map[rs[e] - lo];
            g->dst[e] = map[rd[e] - lo];
        }
    }
    free(map);
    return rc;
}

/* hist: RADIX_PASSES zeroed histograms of RADIX_SIZE counters. */
static void radix_sort(uint64_t *a, uint64_t *tmp, uint64_t n, uint64_t (*hist)[RADIX_SIZE])
{
    for (uint64_t i = 0; i < n; i++)
        for (int p = 0; p < RADIX_PASSES; p++)
            hist[p][(a[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
    for (int p = 0; p < RADIX_PASSES; p++) {
        unsigned shift = (unsigned)p * RADIX_BITS;
        if (hist[p][(a[0] >> shift) & (RADIX_SIZE - 1)] == n)
            continue; /* every key has the same digit here */
        uint64_t sum = 0;
        for (unsigned d = 0; d < RADIX_SIZE; d++) {
            uint64_t c = hist[p][d];
            hist[p][d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++) tmp[hist[p][(a[i] >> shift) & (RADIX_SIZE - 1)]++] = a[i];
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
}

/* id -> index, open addressing with linear probing; index UINT32_MAX marks
 * an empty slot (nv < 2^32 keeps it free).  One independent memory access
 * per lookup, where a binary search makes ~log2(nv) dependent ones. */
typedef struct id_map {
    uint64_t *key;
    uint32_t *val;
    uint64_t mask;
    unsigned shift;
} id_map;

static uint64_t slot_of(const id_map *m, uint64_t id)
{
    return (id * UINT64_C(0x9e3779b97f4a7c15)) >> m->shift;
}

static int id_map_build(id_map *m, const uint64_t *ids, uint64_t nv)
{
    unsigned bits = 1;
    while ((UINT64_C(1) << bits) < 2 * nv) bits++;
    m->mask = (UINT64_C(1) << bits) - 1;
    m->shift = 64 - bits;
    m->key = malloc((size_t)(m->mask + 1) * sizeof *m->key);
    m->val = malloc((size_t)(m->mask + 1) * sizeof *m->val);
    if (m->key == NULL || m->val == NULL) return TESS_ERR_NOMEM;
    memset(m->val, 0xff, (size_t)(m->mask + 1) * sizeof *m->val);
    for (uint64_t i = 0; i < nv; i++) {
        uint64_t h = slot_of(m, ids[i]);
        while (m->val[h] != UINT32_MAX) h = (h + 1) & m->mask;
        m->key[h] = ids[i];
        m->val[h] = (uint32_t)i;
    }
    return 0;
}

/* Every looked-up id is in the map by construction. */
static uint32_t id_map_get(const id_map *m, uint64_t id)
{
    uint64_t h = slot_of(m, id);
    while (m->key[h] != id || m->val[h] == UINT32_MAX) h = (h + 1) & m->mask;
    return m->val[h];
}

static int renumber_sorted(const uint64_t *rs, const uint64_t *rd, uint64_t ne, tg_graph *g,
                           const char *name, char *err, size_t errlen)
{
    uint64_t n = 2 * ne;
    uint64_t *all = malloc((size_t)n * sizeof *all);
    uint64_t *tmp = malloc((size_t)n * sizeof *tmp);
    uint64_t(*hist)[RADIX_SIZE] = calloc(RADIX_PASSES, sizeof *hist);
    id_map map = {0};
    int rc = TESS_ERR_NOMEM;
    if (all == NULL || tmp == NULL || hist == NULL) goto out;
    memcpy(all, rs, (size_t)ne * sizeof *all);
    memcpy(all + ne, rd, (size_t)ne * sizeof *all);
    radix_sort(all, tmp, n, hist);
    uint64_t nv = 1;
    for (uint64_t i = 1; i < n; i++)
        if (all[i] != all[nv - 1]) all[nv++] = all[i];
    if (nv > UINT32_MAX) {
        rc = too_many(nv, name, err, errlen);
        goto out;
    }
    if ((rc = alloc_graph(g, nv, ne)) != 0) goto out;
    memcpy(g->ids, all, (size_t)nv * sizeof *all);
    if ((rc = id_map_build(&map, g->ids, nv)) != 0) goto out;
    for (uint64_t e = 0; e < ne; e++) {
        g->src[e] = id_map_get(&map, rs[e]);
        g->dst[e] = id_map_get(&map, rd[e]);
    }
out:
    free(map.key);
    free(map.val);
    free(hist);
    free(tmp);
    free(all);
    return rc;
}

int tg__renumber(const uint64_t *raw_src, const uint64_t *raw_dst, uint64_t ne, tg_graph *g,
                 const char *name, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    if (ne == 0) return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: no edges", name);
    if (ne > SIZE_MAX / (4 * sizeof(uint64_t)))
        return tg__err(TESS_ERR_NOMEM, err, errlen, "%s: out of memory (%llu edges)", name,
                       (unsigned long long)ne);
    uint64_t lo = UINT64_MAX, hi = 0;
    min_max(raw_src, ne, &lo, &hi);
    min_max(raw_dst, ne, &lo, &hi);
    /* The direct table costs 4 bytes per id in the range; allow it when that
     * is at most about as much as the raw edges themselves. */
    uint64_t limit = 4 * ne > (1u << 20) ? 4 * ne : (1u << 20);
    int rc = hi - lo < limit
                 ? renumber_direct(raw_src, raw_dst, ne, lo, hi - lo + 1, g, name, err, errlen)
                 : renumber_sorted(raw_src, raw_dst, ne, g, name, err, errlen);
    if (rc == TESS_ERR_NOMEM)
        tg__err(rc, err, errlen, "%s: out of memory (%llu edges)", name, (unsigned long long)ne);
    if (rc != 0) tg_free(g);
    return rc;
}
