/*
 * area.c — columns, segments and tiles of a work area (area.h).
 */
#include "tile/area.h"
#include "tessera/tessera.h"

int tess__tile_area_init(tess__tile_area *a, int ndims, const int64_t *extent, const int64_t *min,
                         const int64_t *max)
{
    if (ndims < 1 || ndims > TESS__TILE_MAX_DIMS) return TESS_ERR_INVAL;
    tess__tile_area t = {.ndims = ndims, .ncolumns = 1};
    for (int d = 0; d < ndims; d++) {
        if (extent[d] < 1 || min[d] < 1 || min[d] > max[d]) return TESS_ERR_INVAL;
        t.extent[d] = extent[d];
        t.max[d] = max[d] < extent[d] ? max[d] : extent[d];
        t.min[d] = min[d] < t.max[d] ? min[d] : t.max[d];
        t.blocks[d] = d == 0 ? 1 : (extent[d] + t.max[d] - 1) / t.max[d];
        t.ncolumns *= t.blocks[d];
    }
    *a = t;
    return TESS_OK;
}

uint64_t tess__tile_area_cells(const tess__tile_area *a)
{
    uint64_t n = 1;
    for (int d = 0; d < a->ndims; d++) n *= (uint64_t)a->extent[d];
    return n;
}

void tess__tile_column_box(const tess__tile_area *a, int64_t c, tess__tile_box *out)
{
    out->ndims = a->ndims;
    out->lo[0] = 0;
    out->hi[0] = a->extent[0];
    for (int d = a->ndims - 1; d >= 1; d--) { /* column index: row-major over the blocks */
        int64_t b = c % a->blocks[d];
        c /= a->blocks[d];
        out->lo[d] = b * a->max[d];
        out->hi[d] = out->lo[d] + a->max[d] < a->extent[d] ? out->lo[d] + a->max[d] : a->extent[d];
    }
}

uint64_t tess__tile_column_cross(const tess__tile_area *a, int64_t c)
{
    tess__tile_box b;
    tess__tile_column_box(a, c, &b);
    uint64_t n = 1;
    for (int d = 1; d < a->ndims; d++) n *= (uint64_t)(b.hi[d] - b.lo[d]);
    return n;
}

tess__tile_segment tess__tile_column_segment(const tess__tile_area *a, int64_t c)
{
    tess__tile_segment s = {.column = c, .r0 = 0, .r1 = a->extent[0], .owner = -1};
    return s;
}

uint64_t tess__tile_segment_cells(const tess__tile_area *a, const tess__tile_segment *s)
{
    return (uint64_t)(s->r1 - s->r0) * tess__tile_column_cross(a, s->column);
}

/* The row count of a tile of about `cells` cells cut from s: between the
 * first dimension's min and max extents, and all of s when s is shorter or
 * the rest would be shorter than the minimum (no sliver is left behind). */
static int64_t rows_for(const tess__tile_area *a, const tess__tile_segment *s, uint64_t cells)
{
    int64_t left = s->r1 - s->r0;
    uint64_t cross = tess__tile_column_cross(a, s->column);
    int64_t rows = (int64_t)((cells + cross / 2) / cross);
    if (rows < a->min[0]) rows = a->min[0];
    if (rows > a->max[0]) rows = a->max[0];
    if (rows >= left) return left;
    if (left - rows >= a->min[0]) return rows;
    /* the rest would be a sliver: take all of it, or leave exactly the minimum */
    if (left <= a->max[0]) return left;
    return left - a->min[0] >= a->min[0] ? left - a->min[0] : rows;
}

uint64_t tess__tile_cut(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                        tess__tile_box *box)
{
    if (s->r1 <= s->r0) return 0;
    int64_t rows = rows_for(a, s, cells);
    tess__tile_column_box(a, s->column, box);
    box->lo[0] = s->r0;
    box->hi[0] = s->r0 + rows;
    s->r0 += rows;
    return tess__tile_box_cells(box);
}

uint64_t tess__tile_split_tail(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                               tess__tile_segment *given)
{
    int64_t left = s->r1 - s->r0;
    uint64_t cross = tess__tile_column_cross(a, s->column);
    int64_t rows = (int64_t)((cells + cross / 2) / cross);
    if (rows < 1) rows = 1;
    if (rows > left) rows = left;
    *given = *s;
    given->r0 = s->r1 - rows;
    s->r1 -= rows;
    return (uint64_t)rows * cross;
}

uint64_t tess__tile_box_cells(const tess__tile_box *b)
{
    uint64_t n = 1;
    for (int d = 0; d < b->ndims; d++) n *= (uint64_t)(b->hi[d] - b->lo[d]);
    return n;
}

static int cell_marked(const uint8_t *done, uint64_t i) { return done[i / 8] >> (i % 8) & 1; }

int tess__tile_row_done(const tess__tile_area *a, const uint8_t *done, int64_t c, int64_t row)
{
    if (done == NULL) return 0;
    tess__tile_box b;
    tess__tile_column_box(a, c, &b);
    int nd = a->ndims;
    int64_t idx[TESS__TILE_MAX_DIMS];
    idx[0] = row;
    for (int d = 1; d < nd; d++) idx[d] = b.lo[d];
    for (;;) { /* odometer over the row's cross-section */
        uint64_t i = (uint64_t)idx[0];
        for (int d = 1; d < nd; d++) i = i * (uint64_t)a->extent[d] + (uint64_t)idx[d];
        if (!cell_marked(done, i)) return 0;
        int d = nd - 1;
        for (; d >= 1; d--) {
            if (++idx[d] < b.hi[d]) break;
            idx[d] = b.lo[d];
        }
        if (d < 1) return 1;
    }
}

uint64_t tess__tile_area_done_cells(const tess__tile_area *a, const uint8_t *done)
{
    uint64_t n = 0;
    for (int64_t c = 0; done != NULL && c < a->ncolumns; c++)
        for (int64_t r = 0; r < a->extent[0]; r++)
            if (tess__tile_row_done(a, done, c, r)) n += tess__tile_column_cross(a, c);
    return n;
}
