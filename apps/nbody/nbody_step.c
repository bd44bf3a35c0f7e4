/*
 * nbody_step.c — the kernel of `tessera run nbody`: one leapfrog step of the
 * particles of one slab partition.
 *
 * State lives in two tables used in turn: step t reads table t % 2 and
 * writes table (t + 1) % 2.  An entry is keyed by (destination cell, writer
 * instance) and holds the particles that writer placed in that cell, so no
 * two instances ever write the same key and no accumulator is needed.
 * Instance p reads its own slab and the plane on each side (one snapshot
 * per partition read, local or fetched), buckets the particles by cell, and
 * for each of its cells sums the forces from the candidates of the 27
 * surrounding cells in ascending id order (nbody.h: the result is the same
 * bits however the box is partitioned).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nbody_step.h"

/* What one instance holds while it steps its slab. */
typedef struct slab {
    tess_ctx *ctx;
    int cells, lo, hi;
    int nplanes;
    int *slot_of_plane; /* cells entries: index among the planes read, or -1 */
    nbody_particle *parts;
    uint32_t *cell; /* per particle: slot * cells^2 + cy * cells + cz */
    size_t n, cap;
    size_t *start; /* bucket starts, nplanes * cells^2 + 1 */
    nbody_particle *sorted;
} slab;

static void slab_free(slab *s)
{
    free(s->slot_of_plane);
    free(s->parts);
    free(s->cell);
    free(s->start);
    free(s->sorted);
}

/* The planes the slab's cells and their neighbours lie in: [lo-1, hi]
 * wrapped, each once. */
static int slab_planes(slab *s)
{
    s->slot_of_plane = malloc((size_t)s->cells * sizeof *s->slot_of_plane);
    if (!s->slot_of_plane) return TESS_ERR_NOMEM;
    for (int c = 0; c < s->cells; c++) s->slot_of_plane[c] = -1;
    for (int c = s->lo - 1; c <= s->hi; c++) {
        int w = (c % s->cells + s->cells) % s->cells;
        if (s->slot_of_plane[w] < 0) s->slot_of_plane[w] = s->nplanes++;
    }
    return 0;
}

/* Append count particles from p (bytes: no alignment needed) in cell. */
static int slab_push(slab *s, const void *p, size_t count, uint32_t cell)
{
    if (s->n + count > s->cap) {
        size_t cap = s->cap ? s->cap : 1024;
        while (cap < s->n + count) cap *= 2;
        nbody_particle *np = realloc(s->parts, cap * sizeof *np);
        if (np) s->parts = np;
        uint32_t *nc = realloc(s->cell, cap * sizeof *nc);
        if (nc) s->cell = nc;
        if (!np || !nc) return TESS_ERR_NOMEM;
        s->cap = cap;
    }
    memcpy(s->parts + s->n, p, count * sizeof *s->parts);
    for (size_t i = 0; i < count; i++) s->cell[s->n + i] = cell;
    s->n += count;
    return 0;
}

/* The entries of partition q that lie in the slab's planes. */
static int slab_read_partition(slab *s, tess_table *t, int q)
{
    tess_iter *it = NULL;
    int rc = tess_table_iter(t, q, &it);
    const void *key, *value;
    size_t len;
    while (rc == 0 && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        nbody_key k;
        memcpy(&k, key, sizeof k);
        rc = 0;
        if (k.cells != s->cells || k.cx >= k.cells || k.cy >= k.cells || k.cz >= k.cells ||
            len % sizeof(nbody_particle) != 0) {
            rc = TESS_ERR_FORMAT; /* not an entry this program wrote */
            break;
        }
        int slot = s->slot_of_plane[k.cx];
        if (slot < 0) continue;
        uint32_t cell = ((uint32_t)slot * s->cells + k.cy) * s->cells + k.cz;
        rc = slab_push(s, value, len / sizeof(nbody_particle), cell);
    }
    tess_iter_free(it);
    return rc;
}

/* Each partition holding one of the slab's planes, read once. */
static int slab_read(slab *s, tess_table *t, int partitions)
{
    unsigned char *done = calloc((size_t)partitions, 1);
    int rc = done ? 0 : TESS_ERR_NOMEM;
    for (int c = 0; rc == 0 && c < s->cells; c++) {
        if (s->slot_of_plane[c] < 0) continue;
        int q = nbody_plane_partition(c, s->cells, partitions);
        if (!done[q]) rc = slab_read_partition(s, t, q);
        done[q] = 1;
    }
    free(done);
    return rc;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const nbody_particle *)a)->id, y = ((const nbody_particle *)b)->id;
    return (x > y) - (x < y);
}

/* Counting sort by cell into s->sorted, each bucket then by id. */
static int slab_bucket(slab *s)
{
    size_t ncells = (size_t)s->nplanes * (size_t)s->cells * (size_t)s->cells;
    s->start = calloc(ncells + 1, sizeof *s->start);
    s->sorted = malloc((s->n ? s->n : 1) * sizeof *s->sorted);
    if (!s->start || !s->sorted) return TESS_ERR_NOMEM;
    for (size_t i = 0; i < s->n; i++) s->start[s->cell[i] + 1]++;
    for (size_t c = 0; c < ncells; c++) s->start[c + 1] += s->start[c];
    size_t *fill = malloc((ncells ? ncells : 1) * sizeof *fill);
    if (!fill) return TESS_ERR_NOMEM;
    memcpy(fill, s->start, ncells * sizeof *fill);
    for (size_t i = 0; i < s->n; i++) s->sorted[fill[s->cell[i]]++] = s->parts[i];
    free(fill);
    for (size_t c = 0; c < ncells; c++)
        if (s->start[c + 1] - s->start[c] > 1)
            qsort(s->sorted + s->start[c], s->start[c + 1] - s->start[c], sizeof *s->sorted, by_id);
    return 0;
}

/* A run of one bucket being merged: its next particle and its end. */
typedef struct run {
    const nbody_particle *at, *end;
} run;

/* Restore the heap order (smallest next id on top) below slot i. */
static void sift_down(run *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l].at->id < h[m].at->id) m = l;
        if (l + 1 < n && h[l + 1].at->id < h[m].at->id) m = l + 1;
        if (m == i) return;
        run t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Merge the sorted runs h[0..n) into out[] by ascending id. */
static size_t merge_runs(run *h, size_t n, nbody_pos *out)
{
    size_t m = 0;
    for (size_t i = n; i-- > 0;) sift_down(h, n, i);
    while (n > 0) {
        const nbody_particle *p = h[0].at++;
        out[m].id = p->id;
        memcpy(out[m].x, p->x, sizeof out[m].x);
        m++;
        if (h[0].at == h[0].end) h[0] = h[--n];
        sift_down(h, n, 0);
    }
    return m;
}

/* The particles of the (up to 27) distinct cells around (cx, cy, cz), in
 * ascending id order, into *cand: a merge of their buckets, each already
 * sorted by id. */
static int gather_candidates(const slab *s, int cx, int cy, int cz, nbody_pos **cand, size_t *cap,
                             size_t *n_out)
{
    size_t seen[27], nseen = 0, total = 0;
    run runs[27];
    size_t nruns = 0;
    int C = s->cells;
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dz = -1; dz <= 1; dz++) {
                int x = (cx + dx + C) % C, y = (cy + dy + C) % C, z = (cz + dz + C) % C;
                size_t c = ((size_t)s->slot_of_plane[x] * C + (size_t)y) * C + (size_t)z;
                int dup = 0;
                for (size_t i = 0; i < nseen; i++) dup |= seen[i] == c;
                if (dup) continue;
                seen[nseen++] = c;
                if (s->start[c + 1] == s->start[c]) continue;
                runs[nruns].at = s->sorted + s->start[c];
                runs[nruns].end = s->sorted + s->start[c + 1];
                total += s->start[c + 1] - s->start[c];
                nruns++;
            }
    if (total > *cap) {
        size_t ncap = *cap ? *cap : 256;
        while (ncap < total) ncap *= 2;
        nbody_pos *g = realloc(*cand, ncap * sizeof *g);
        if (!g) return TESS_ERR_NOMEM;
        *cand = g;
        *cap = ncap;
    }
    *n_out = merge_runs(runs, nruns, *cand);
    return 0;
}

/* A particle that left the model's range: the kernel's error message. */
static int nbody_runaway(tess_ctx *ctx, const nbody_particle *p, const double a[3],
                         const nbody_params *prm)
{
    double v2 = 0, a2 = 0;
    for (int k = 0; k < 3; k++) {
        double v = p->v[k] + a[k] * prm->dt;
        v2 += v * v;
        a2 += a[k] * a[k];
    }
    return tess_set_error(ctx, TESS_ERR_KERNEL,
                          "particle %llu would move %g (acceleration %g) in one step, more "
                          "than the box %g: the step is too long for these forces (lower "
                          "--dt or raise --softening)",
                          (unsigned long long)p->id, sqrt(v2) * prm->dt, sqrt(a2), prm->box);
}

/* Step every particle of the slab's own cells into out[] (out_n of them). */
static int slab_step(const slab *s, const nbody_params *prm, nbody_particle *out, size_t *out_n)
{
    nbody_pos *cand = NULL;
    size_t cap = 0, m = 0;
    int rc = 0, C = s->cells;
    for (int cx = s->lo; rc == 0 && cx < s->hi; cx++)
        for (int cy = 0; rc == 0 && cy < C; cy++)
            for (int cz = 0; rc == 0 && cz < C; cz++) {
                size_t c = ((size_t)s->slot_of_plane[cx] * C + (size_t)cy) * C + (size_t)cz;
                if (s->start[c + 1] == s->start[c]) continue;
                size_t n = 0;
                rc = gather_candidates(s, cx, cy, cz, &cand, &cap, &n);
                for (size_t i = s->start[c]; rc == 0 && i < s->start[c + 1]; i++) {
                    double a[3];
                    nbody_accel(prm, &s->sorted[i], cand, n, a);
                    out[m] = s->sorted[i];
                    if (nbody_advance(prm, &out[m], a) != 0) {
                        rc = nbody_runaway(s->ctx, &s->sorted[i], a, prm);
                        break;
                    }
                    m++;
                }
            }
    free(cand);
    *out_n = m;
    return rc;
}

int nbody_step_instance(tess_ctx *ctx, tess_table *from, tess_table *to, const nbody_params *prm,
                        int cells, int p, int partitions)
{
    slab s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.cells = cells;
    nbody_partition_planes(p, cells, partitions, &s.lo, &s.hi);
    if (s.lo == s.hi) return 0;
    int rc = slab_planes(&s);
    if (rc == 0) rc = slab_read(&s, from, partitions);
    if (rc == 0) rc = slab_bucket(&s);
    nbody_particle *out = rc == 0 ? malloc((s.n ? s.n : 1) * sizeof *out) : NULL;
    size_t m = 0;
    if (rc == 0 && !out) rc = TESS_ERR_NOMEM;
    if (rc == 0) rc = slab_step(&s, prm, out, &m);
    if (rc == 0) rc = nbody_put_cells(to, prm, cells, (uint32_t)p, out, m);
    free(out);
    slab_free(&s);
    return rc;
}

/* ---------------------------------------------------------------- writing */

typedef struct placed {
    uint64_t cell; /* (cx * cells + cy) * cells + cz */
    size_t index;
} placed;

static int by_cell_then_index(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    if (x->cell != y->cell) return (x->cell > y->cell) - (x->cell < y->cell);
    return (x->index > y->index) - (x->index < y->index);
}

int nbody_put_cells(tess_table *to, const nbody_params *prm, int cells, uint32_t writer,
                    const nbody_particle *p, size_t n)
{
    placed *pl = malloc((n ? n : 1) * sizeof *pl);
    nbody_particle *run = malloc((n ? n : 1) * sizeof *run);
    int rc = pl && run ? 0 : TESS_ERR_NOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint64_t c[3];
        for (int k = 0; k < 3; k++) c[k] = (uint64_t)nbody_cell_of(p[i].x[k], prm->box, cells);
        pl[i].cell = (c[0] * (uint64_t)cells + c[1]) * (uint64_t)cells + c[2];
        pl[i].index = i;
    }
    if (rc == 0 && n > 1) qsort(pl, n, sizeof *pl, by_cell_then_index);
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t j = i;
        for (; j < n && pl[j].cell == pl[i].cell; j++) run[j - i] = p[pl[j].index];
        uint64_t c = pl[i].cell, C = (uint64_t)cells;
        nbody_key key = {.cells = (uint16_t)cells,
                         .cx = (uint16_t)(c / (C * C)),
                         .cy = (uint16_t)(c / C % C),
                         .cz = (uint16_t)(c % C),
                         .writer = writer,
                         .zero = 0};
        rc = tess_table_put(to, &key, run, (j - i) * sizeof *run);
        i = j;
    }
    free(pl);
    free(run);
    return rc;
}
