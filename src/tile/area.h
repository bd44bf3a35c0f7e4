/*
 * area.h — the work area of a tiles job and how work is cut from it.
 *
 * The area is a box of cells in 1..4 dimensions, row-major (the last
 * dimension varies fastest).  Work is a list of *segments*: boxes of cells,
 * each with the rank that owns its input (the ranks own rows of the first
 * dimension) and, for stolen work, the fetched chunk holding that input.
 * A rank's work starts as one box (its rows, every cell of them), less the
 * boxes a restored checkpoint already did.
 *
 * A tile of about N cells is a box cut from the low corner of a segment,
 * its extents as equal as the bounds allow (the APC+ paper's square tiles:
 * 4096 cells of a 2-D area are 64 x 64): each extent within the job's
 * min_tile..max_tile and what the segment has left, the first dimension
 * taking what rounding leaves, and no extent leaving a sliver thinner than
 * the minimum behind.  Cutting box T from the corner of segment S leaves at
 * most one box per dimension (a guillotine cut): for d = ndims-1 .. 1 the
 * box beside T in dimension d (T's extents before d, S's after), and S's
 * rows below T, which stay in the segment.  The pieces beside T are worked
 * on first (in 2-D: T's band of rows, left to right, then the rows below),
 * so the list stays short and stealing, which gives away rows from the end
 * of the last segment, finds whole rows of a rank's slab there.
 *
 * A segment cut from a fetched chunk keeps the chunk's cross-section (its
 * tiles are rows of the chunk, whose input is contiguous there), so stolen
 * input is never gathered twice; only the first dimension varies there.
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
} tess__tile_area;

typedef struct tess__tile_segment {
    tess__tile_box box; /* its cells; box.lo[0]..hi[0] are rows of the first dimension */
    int32_t owner;      /* rank holding its input (-1: unknown, the area's) */
    void *chunk;        /* staged input it was cut from (src/tile/store.c), or NULL */
} tess__tile_segment;

/* Check and set up an area: 1 <= ndims <= 4, extents >= 1, 1 <= min <= max
 * per dimension (a max larger than the extent is clamped to it).
 * TESS_ERR_INVAL otherwise, *a untouched. */
int tess__tile_area_init(tess__tile_area *a, int ndims, const int64_t *extent, const int64_t *min,
                         const int64_t *max);
uint64_t tess__tile_area_cells(const tess__tile_area *a);
/* Cells of the largest cross-section of a tile (every dimension but the
 * first at its maximum): the smallest tile the plan asks for is min_tile[0]
 * times this, the largest max_tile[0] times this. */
uint64_t tess__tile_area_max_cross(const tess__tile_area *a);
/* Rows [lo, hi) of the area, every cell of them. */
void tess__tile_rows_box(const tess__tile_area *a, int64_t lo, int64_t hi, tess__tile_box *out);
/* Rows [lo, hi) of the area as one segment owned by `owner`. */
tess__tile_segment tess__tile_rows_segment(const tess__tile_area *a, int64_t lo, int64_t hi,
                                           int owner);
/* Does box b hold every cell of its rows (then it is contiguous in the
 * area's row-major order)? */
int tess__tile_box_whole_rows(const tess__tile_area *a, const tess__tile_box *b);
uint64_t tess__tile_box_cells(const tess__tile_box *b);
uint64_t tess__tile_segment_cells(const tess__tile_area *a, const tess__tile_segment *s);
/* Are boxes a and b, one after the other in one dimension and equal in the
 * others, one box?  Then *out (which may be a or b) is it. */
int tess__tile_box_join(const tess__tile_box *a, const tess__tile_box *b, tess__tile_box *out);

/* The extents of a tile of about `cells` cells cut from the corner of s
 * (the shape tess__tile_cut cuts). */
void tess__tile_shape(const tess__tile_area *a, const tess__tile_segment *s, uint64_t cells,
                      int64_t *extent);
/* Cut a tile of about `cells` cells from the low corner of s into *box
 * (the shape above).  s keeps the rows below the tile; the other pieces
 * (at most ndims-1, same owner and chunk) go to rest[0..*nrest), to be
 * worked on in that order before what s keeps.  Returns the tile's cells,
 * 0 when s is empty. */
uint64_t tess__tile_cut(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                        tess__tile_box *box, tess__tile_segment *rest, int *nrest);
/* Give away about `cells` cells from the end of s, in whole rows of s (at
 * least one row, all of s at most): *given gets them, s keeps the rest.
 * Returns the cells given. */
uint64_t tess__tile_split_tail(const tess__tile_area *a, tess__tile_segment *s, uint64_t cells,
                               tess__tile_segment *given);

/*
 * The work a restored checkpoint left (`done`: a bit per cell of the area,
 * row-major; tess_tile_job.done) in rows [lo, hi): boxes covering every
 * cell not marked, handed to fn in row-major order of their corners, as
 * few as the marks allow.  The area is halved (its longest dimension,
 * never below the minimum tile extent except in the first) until a box is
 * wholly marked (left out), wholly unmarked, or cannot be halved (then it
 * is computed again: a kernel's output does not depend on the tiling).
 * The halving is the same whatever the rows, so ranks agree on which
 * cells are skipped.  done NULL: rows [lo, hi) as one box.  Stops at and
 * returns fn's first status other than TESS_OK.
 */
typedef int tess__tile_box_fn(void *arg, const tess__tile_box *box);
int tess__tile_undone_boxes(const tess__tile_area *a, const uint8_t *done, int64_t lo, int64_t hi,
                            tess__tile_box_fn *fn, void *arg);
/* Cells tess__tile_undone_boxes leaves out, over the area. */
uint64_t tess__tile_area_done_cells(const tess__tile_area *a, const uint8_t *done);

#endif
