/*
 * snap_writer.c — write a graph as SNAP text with its original ids: one
 * "# tessera graph: N vertices, M edges" comment, then "src\tdst" per edge
 * in edge order.  Numbers are formatted by hand (fprintf per line is several
 * times slower for 16M edges); output goes through a temp file and rename.
 */
#include <errno.h>
#include <string.h>

#include "graph_internal.h"
#include "tessera/tessera.h"

#define LINE_MAX_BYTES 42 /* two 20-digit ids, a tab and a newline */

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) *p++ = tmp[--n];
    return p;
}

static int write_edges(FILE *f, const tg_graph *g)
{
    char buf[1 << 16];
    char *p = buf;
    for (uint64_t e = 0; e < g->ne; e++) {
        if ((size_t)(p - buf) > sizeof buf - LINE_MAX_BYTES) {
            if (fwrite(buf, 1, (size_t)(p - buf), f) != (size_t)(p - buf)) return -1;
            p = buf;
        }
        p = put_u64(p, g->ids[g->src[e]]);
        *p++ = '\t';
        p = put_u64(p, g->ids[g->dst[e]]);
        *p++ = '\n';
    }
    return fwrite(buf, 1, (size_t)(p - buf), f) == (size_t)(p - buf) ? 0 : -1;
}

int tg_write_snap(const char *path, const tg_graph *g, char *err, size_t errlen)
{
    for (uint64_t e = 0; e < g->ne; e++)
        if (g->src[e] >= g->nv || g->dst[e] >= g->nv)
            return tg__err(TESS_ERR_INVAL, err, errlen,
                           "%s: edge %llu refers to a vertex out of range", path,
                           (unsigned long long)e);
    tg__outfile out;
    int rc = tg__out_open(&out, path, err, errlen);
    if (rc != 0) return rc;
    if (fprintf(out.f, "# tessera graph: %llu vertices, %llu edges\n", (unsigned long long)g->nv,
                (unsigned long long)g->ne) < 0 ||
        write_edges(out.f, g) != 0) {
        int e = errno ? errno : EIO; /* before the cleanup can change it */
        tg__out_abort(&out);
        return tg__err(TESS_ERR_IO, err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    return tg__out_commit(&out, err, errlen);
}
