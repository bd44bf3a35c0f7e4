/*
 * area.h — the work area of a tiles job and how work is cut from it.
 *
 * The area is a box of cells in 1..4 dimensions, row-major (the last
 * dimension varies fastest).  It is cut once into *columns*: blocks of the
 * maximum tile extent in every dimension but the first (the area's own
 * extent where that is smaller), each spanning the whole first dimension.
 * Work is then a list of *segments* (a column and a range of its rows along
 * the first dimension), and a tile is a run of rows of one segment: its size
 * in cells is its row count times the column's cross-section, chosen between
 * the minimum and maximum extent of the first dimension.  So any tile size
 * the controller wants is one cut, a segment splits anywhere (stealing gives
 * away the end of a segment), and a tile is always a box.
 *
 * Private to src/tile.
 */
#ifndef TESS_SRC_TILE_AREA_H
#define TESS_SRC_TILE_AREA_H

#include <stdint.h>
#include "tessera/tile.h"

#define TESS__TILE_MAX_DIMS TESS_TILE_MAX_DIMS

typedef tess_tile_box tess__tile_box; /* half-open, as the public one */

typedef struct tess__tile_area {
    int ndims;
    int64_t extent[TESS__TILE_MAX_DIMS];
    int64_t min[TESS__TILE_MAX_DIMS], max[TESS__TILE_MAX_DIMS]; /* tile extents */
    int64_t blocks[TESS__TILE_MAX_DIMS]; /* columns per dimension (dimension 0: 1) */
    int64_t ncolumns;
} tess__tile_area;

typedef struct tess__tile_segment {
    int64_t column;
    int64_t r0, r1; /* rows [r0, r1) of the first dimension */
    int32_t owner;  /* rank holding its input (-1: unknown, the area's) */
    void *chunk;    /* staged input it was cut from (src/tile/store.c), or NULL */
} tess__tile_segment;

/* Check and set up an area: 1 <= ndims <= 4, extents >= 1, 1 <= min <= max
 * per dimension (a max larger than the extent is clamped to it).
 * TESS_ERR_INVAL otherwise, *a untouched. */
int tess__tile_area_init(tess__tile_area *a, int ndims, const int64_t *extent, const int64_t *min,
                         const int64_t *max);
uint64_t tess__tile_area_cells(const tess__tile_area *a);
/* The box of column c (all rows). */
void tess__tile_column_box(const tess__tile_area *a, int64_t c, tess__tile_box *out);
/* Cells in one row of column c. */
uint64_t tess__tile_column_cross(const tess__tile_area *a, int64_t c);
/* The whole area as one segment per column. */
tess__tile_segment tess__tile_column_segment(const tess__tile_area *a, int64_t c);
uint64_t tess__tile_segment_cells(const tess__tile_area *a, const tess__tile_segment *s);

/* Cut a tile of about `cells` cells from the front of s (which shrinks) into
 * *box; returns its cells, 0 when s is empty. */
uint64_t tess__tile_cut(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                        tess__tile_box *box);
/* Give away about `cells` cells from the end of s, in whole rows (at least
 * one row, all of s at most): *given gets them, s keeps the rest.  Returns
 * the cells given. */
uint64_t tess__tile_split_tail(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                               tess__tile_segment *given);
uint64_t tess__tile_box_cells(const tess__tile_box *b);

/* Is every cell of row `row` of column c marked in `done` (a bit per cell
 * of the area, row-major; tess_tile_job.done)?  0 when done is NULL. */
int tess__tile_row_done(const tess__tile_area *a, const uint8_t *done, int64_t c, int64_t row);
/* Cells of the rows that tess__tile_row_done finds done, over the area. */
uint64_t tess__tile_area_done_cells(const tess__tile_area *a, const uint8_t *done);

#endif
