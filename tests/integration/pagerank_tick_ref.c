/*
 * pagerank_tick_ref.c — the independent sequential PageRank of DESIGN §6's
 * ticks face, for the tests: its own SNAP parser (plain text: '#' comments,
 * blank lines, "src dst" separated by blanks, CR LF accepted), vertices =
 * every id that appears, and a plain power iteration over the edge array:
 *     PR0 = 1/N,  PR'(v) = (1-d)/N + d * sum over u->v of PR(u)/outdeg(u)
 * (no redistribution of rank of vertices without out-edges).
 * Usage: pagerank_tick_ref EDGES TICKS DAMPING OUT   (OUT: "id<TAB>rank",
 * ascending id, %.17g).  Written without tessera.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct edges {
    uint64_t *src, *dst; /* original ids, then dense indices */
    size_t n, cap;
} edges;

static int push_edge(edges *e, uint64_t s, uint64_t d)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 1024;
        uint64_t *ns = realloc(e->src, cap * sizeof *ns);
        if (ns == NULL) return -1;
        e->src = ns;
        uint64_t *nd = realloc(e->dst, cap * sizeof *nd);
        if (nd == NULL) return -1;
        e->dst = nd;
        e->cap = cap;
    }
    e->src[e->n] = s;
    e->dst[e->n] = d;
    e->n++;
    return 0;
}

/* Parse one unsigned decimal at *p, advancing it; -1 if there is none. */
static int parse_id(const char **p, uint64_t *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0) return -1;
    *out = v;
    *p = end;
    return 0;
}

static int read_edges(const char *path, edges *e)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(stderr, "pagerank_tick_ref: cannot open %s\n", path);
        return -1;
    }
    char line[4096];
    long lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') continue;
        uint64_t s, d;
        if (parse_id(&p, &s) != 0 || parse_id(&p, &d) != 0) rc = -1;
        while (rc == 0 && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
        if (rc == 0 && *p != '\n' && *p != '\0') rc = -1;
        if (rc == 0) rc = push_edge(e, s, d);
        if (rc != 0) fprintf(stderr, "pagerank_tick_ref: %s:%ld: bad line\n", path, lineno);
    }
    fclose(fp);
    if (rc == 0 && e->n == 0) {
        fprintf(stderr, "pagerank_tick_ref: %s: no edges\n", path);
        rc = -1;
    }
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct ids; edges renumbered to their positions. */
static uint64_t *renumber(edges *e, size_t *nv)
{
    uint64_t *ids = malloc(2 * e->n * sizeof *ids);
    if (ids == NULL) return NULL;
    memcpy(ids, e->src, e->n * sizeof *ids);
    memcpy(ids + e->n, e->dst, e->n * sizeof *ids);
    qsort(ids, 2 * e->n, sizeof *ids, cmp_u64);
    size_t n = 0;
    for (size_t i = 0; i < 2 * e->n; i++)
        if (n == 0 || ids[i] != ids[n - 1]) ids[n++] = ids[i];
    for (size_t i = 0; i < e->n; i++) {
        e->src[i] = (uint64_t)((uint64_t *)bsearch(&e->src[i], ids, n, sizeof *ids, cmp_u64) - ids);
        e->dst[i] = (uint64_t)((uint64_t *)bsearch(&e->dst[i], ids, n, sizeof *ids, cmp_u64) - ids);
    }
    *nv = n;
    return ids;
}

static double *power_iteration(const edges *e, size_t nv, long ticks, double d)
{
    double *pr = malloc(nv * sizeof *pr), *next = malloc(nv * sizeof *next);
    double *deg = calloc(nv, sizeof *deg);
    if (pr == NULL || next == NULL || deg == NULL) return NULL;
    for (size_t i = 0; i < e->n; i++) deg[e->src[i]] += 1.0;
    for (size_t v = 0; v < nv; v++) pr[v] = 1.0 / (double)nv;
    for (long t = 0; t < ticks; t++) {
        memset(next, 0, nv * sizeof *next);
        for (size_t i = 0; i < e->n; i++) next[e->dst[i]] += pr[e->src[i]] / deg[e->src[i]];
        for (size_t v = 0; v < nv; v++) next[v] = (1.0 - d) / (double)nv + d * next[v];
        double *s = pr;
        pr = next;
        next = s;
    }
    free(next);
    free(deg);
    return pr;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: pagerank_tick_ref EDGES TICKS DAMPING OUT\n");
        return 2;
    }
    long ticks = atol(argv[2]);
    double d = atof(argv[3]);
    edges e = {0};
    if (read_edges(argv[1], &e) != 0) return 1;
    size_t nv = 0;
    uint64_t *ids = renumber(&e, &nv);
    double *pr = ids ? power_iteration(&e, nv, ticks, d) : NULL;
    if (pr == NULL) {
        fprintf(stderr, "pagerank_tick_ref: out of memory\n");
        return 1;
    }
    FILE *fp = fopen(argv[4], "w");
    if (fp == NULL) return 1;
    for (size_t v = 0; v < nv; v++) fprintf(fp, "%llu\t%.17g\n", (unsigned long long)ids[v], pr[v]);
    if (fclose(fp) != 0) return 1;
    free(pr);
    free(ids);
    free(e.src);
    free(e.dst);
    return 0;
}
