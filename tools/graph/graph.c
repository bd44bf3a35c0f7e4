/*
 * graph.c — the tg_graph lifecycle: freeing, structural validation, the
 * growable raw edge buffer used by readers and generators, and tg_load_file,
 * which picks the binary cache or the SNAP reader by the file's first bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

void tg_free(tg_graph *g)
{
    if (g == NULL) return;
    free(g->ids);
    free(g->src);
    free(g->dst);
    free(g->site_first);
    memset(g, 0, sizeof *g);
}

int tg__edges_reserve(tg__edges *e, uint64_t cap)
{
    if (cap <= e->cap) return 0;
    if (cap > SIZE_MAX / sizeof(uint64_t)) return TESS_ERR_NOMEM;
    uint64_t *s = realloc(e->src, (size_t)cap * sizeof *s);
    if (s == NULL) return TESS_ERR_NOMEM;
    e->src = s;
    uint64_t *d = realloc(e->dst, (size_t)cap * sizeof *d);
    if (d == NULL) return TESS_ERR_NOMEM;
    e->dst = d;
    e->cap = cap;
    return 0;
}

void tg__edges_free(tg__edges *e)
{
    free(e->src);
    free(e->dst);
    memset(e, 0, sizeof *e);
}

static int validate_sites(const tg_graph *g, const char *name, char *err, size_t errlen)
{
    if (g->nsites == 0)
        return g->site_first == NULL
                   ? 0
                   : tg__err(TESS_ERR_FORMAT, err, errlen, "%s: site bounds without sites", name);
    if (g->nsites > g->nv || g->site_first == NULL)
        return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: %llu sites for %llu vertices", name,
                       (unsigned long long)g->nsites, (unsigned long long)g->nv);
    if (g->site_first[0] != 0 || g->site_first[g->nsites] != g->nv)
        return tg__err(TESS_ERR_FORMAT, err, errlen,
                       "%s: site bounds must start at 0 and end at %llu", name,
                       (unsigned long long)g->nv);
    for (uint64_t s = 0; s < g->nsites; s++)
        if (g->site_first[s] >= g->site_first[s + 1])
            return tg__err(TESS_ERR_FORMAT, err, errlen,
                           "%s: site %llu bounds not strictly ascending", name,
                           (unsigned long long)s);
    return 0;
}

/* Every vertex must appear in an edge: that is what "vertex" means here. */
static int validate_edges(const tg_graph *g, const char *name, char *err, size_t errlen)
{
    uint8_t *seen = calloc((size_t)g->nv, 1);
    if (seen == NULL) return tg__err(TESS_ERR_NOMEM, err, errlen, "%s: out of memory", name);
    int rc = 0;
    for (uint64_t e = 0; e < g->ne && rc == 0; e++) {
        if (g->src[e] >= g->nv || g->dst[e] >= g->nv)
            rc = tg__err(TESS_ERR_FORMAT, err, errlen,
                         "%s: edge %llu refers to vertex %u, but there are %llu vertices", name,
                         (unsigned long long)e, g->src[e] >= g->nv ? g->src[e] : g->dst[e],
                         (unsigned long long)g->nv);
        else seen[g->src[e]] = seen[g->dst[e]] = 1;
    }
    for (uint64_t v = 0; v < g->nv && rc == 0; v++)
        if (!seen[v])
            rc = tg__err(TESS_ERR_FORMAT, err, errlen, "%s: vertex %llu appears in no edge", name,
                         (unsigned long long)g->ids[v]);
    free(seen);
    return rc;
}

int tg__validate(const tg_graph *g, const char *name, char *err, size_t errlen)
{
    int rc = tg__validate_vertices(g, name, err, errlen);
    return rc != 0 ? rc : validate_edges(g, name, err, errlen);
}

int tg__validate_vertices(const tg_graph *g, const char *name, char *err, size_t errlen)
{
    if (g->ne == 0) return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: no edges", name);
    if (g->nv == 0 || g->nv > UINT32_MAX)
        return tg__err(TESS_ERR_FORMAT, err, errlen, "%s: vertex count %llu not in [1, %u]", name,
                       (unsigned long long)g->nv, UINT32_MAX);
    for (uint64_t v = 1; v < g->nv; v++)
        if (g->ids[v - 1] >= g->ids[v])
            return tg__err(TESS_ERR_FORMAT, err, errlen,
                           "%s: vertex ids not strictly ascending at index %llu", name,
                           (unsigned long long)v);
    return validate_sites(g, name, err, errlen);
}

int tg__is_cache(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a FIFO with no writer must not wait forever.  The
     * readers look at the start of the file more than once, so a pipe or a
     * device is refused instead of half-read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int dir = S_ISDIR(st.st_mode);
        close(fd);
        return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path,
                       dir ? strerror(EISDIR)
                           : "not a regular file (a pipe, FIFO or device); give a graph file or "
                             "a generator (--gen)");
    }
    char head[TG__CACHE_MAGIC_LEN];
    ssize_t n;
    do n = read(fd, head, sizeof head);
    while (n < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (n < 0) return tg__err(TESS_ERR_IO, err, errlen, "%s: %s", path, strerror(e));
    return n == (ssize_t)sizeof head && memcmp(head, TG__CACHE_MAGIC, sizeof head) == 0;
}

int tg_load_file(const char *path, tg_graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    int cache = tg__is_cache(path, err, errlen);
    if (cache < 0) return cache;
    return cache ? tg_read_cache(path, g, err, errlen) : tg_read_snap(path, g, err, errlen);
}
