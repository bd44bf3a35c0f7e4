/*
 * nbody_cells.c — how the box is cut into cells and the cells into
 * partitions.  A cell's side is at least the cutoff, so a particle's
 * neighbours lie in its own cell and the 26 around it; partitions are slabs
 * of whole planes along x, so a kernel instance reads its own slab and one
 * plane on each side of it.
 */
#include <math.h>
#include <string.h>

#include "nbody.h"

int nbody_cells_per_side(const nbody_params *prm)
{
    /* The margin keeps the side above R even after the rounding of
     * nbody_cell_of, so no neighbour is ever two cells away. */
    double c = floor(prm->box / prm->cutoff * (1.0 - 1e-9));
    if (!(c >= 1.0)) return 1;
    return c > NBODY_MAX_CELLS ? NBODY_MAX_CELLS : (int)c;
}

int nbody_cell_of(double x, double box, int cells)
{
    int c = (int)(x / box * cells);
    if (c < 0) return 0;
    return c >= cells ? cells - 1 : c;
}

int nbody_plane_partition(int cx, int cells, int partitions)
{
    return (int)((int64_t)cx * partitions / cells);
}

int nbody_partitioner(const void *key, size_t key_size, int partitions)
{
    nbody_key k;
    if (key_size != sizeof k) return 0;
    memcpy(&k, key, sizeof k);
    if (k.cells == 0 || k.cx >= k.cells) return 0;
    return nbody_plane_partition(k.cx, k.cells, partitions);
}

void nbody_partition_planes(int p, int cells, int partitions, int *lo, int *hi)
{
    /* The smallest cx with cx * partitions / cells >= p is
     * ceil(p * cells / partitions). */
    *lo = (int)(((int64_t)p * cells + partitions - 1) / partitions);
    *hi = (int)(((int64_t)(p + 1) * cells + partitions - 1) / partitions);
    if (*hi > cells) *hi = cells;
    if (*lo > *hi) *lo = *hi;
}
