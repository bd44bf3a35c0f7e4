/*
 * nbody.h — the model of `tessera run nbody` (Piccolo §4.3): short-range
 * n-body in a periodic cubic box, and the pieces of it that need no runtime
 * (physics, cell geometry, particle files), so unit tests and the reference
 * can reach them.  Private to apps/nbody and its tests.
 *
 * The model (docs/nbody.md):
 *   - unit masses, a periodic box [0, L)^3, minimum-image separations;
 *   - particles j within the cutoff R of i (|d| < R, d = x_j - x_i) attract
 *     it with the softened force d / (|d|^2 + eps^2)^(3/2) (G = 1);
 *     farther ones do not interact;
 *   - leapfrog in kick-drift form: v += a(x) dt, then x += v dt, wrapped into
 *     the box (velocities live at half steps);
 *   - the acceleration of i sums its neighbours' terms in ascending id order,
 *     so it depends on the particles only — not on cells, partitions, workers
 *     or ranks — and F_ij = -F_ji exactly, so total momentum is conserved up
 *     to the rounding of those sums.
 */
#ifndef TESS_APPS_NBODY_H
#define TESS_APPS_NBODY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One particle as tables store it (56 bytes, host byte order). */
typedef struct nbody_particle {
    uint64_t id;
    double x[3];
    double v[3];
} nbody_particle;

typedef struct nbody_params {
    double box;       /* L */
    double cutoff;    /* R, at most L/2 */
    double softening; /* eps */
    double dt;
} nbody_params;

/* A neighbour as the force loop reads it: id and position (32 bytes). */
typedef struct nbody_pos {
    uint64_t id;
    double x[3];
} nbody_pos;

/* ---- physics (nbody_physics.c) ---- */

/* Minimum-image separation b - a along one axis of a box of side L, for a
 * and b in [0, L). */
double nbody_min_image(double a, double b, double box);

/* Acceleration of particle `self` from the candidates cand[0..n) (sorted by
 * ascending id; self may be among them, and candidates beyond the cutoff
 * are skipped). */
void nbody_accel(const nbody_params *prm, const nbody_particle *self, const nbody_pos *cand,
                 size_t n, double a[3]);

/* One leapfrog step of p under acceleration a: kick, drift, wrap.  0, or
 * -1 when the velocity is no longer finite or would carry p a box or more
 * in one step (the position is then meaningless). */
int nbody_advance(const nbody_params *prm, nbody_particle *p, const double a[3]);

/* Sum of velocities (total momentum, unit masses), summed in array order. */
void nbody_momentum(const nbody_particle *p, size_t n, double out[3]);

/* ---- cell geometry (nbody_cells.c) ---- */

#define NBODY_MAX_CELLS 1024 /* cells per side, at most */

/* Cells per side: floor(L / R), at least 1, at most NBODY_MAX_CELLS, so a
 * cell's side is at least the cutoff and neighbours lie in adjacent cells. */
int nbody_cells_per_side(const nbody_params *prm);

/* Cell coordinate of a position along one axis (0 .. cells-1). */
int nbody_cell_of(double x, double box, int cells);

/* The key of a table entry: the destination cell, and which kernel
 * instance wrote it (one entry per cell and writer).  16 bytes; the cell
 * count is part of the key so the partitioner is a pure function of it. */
typedef struct nbody_key {
    uint16_t cells;
    uint16_t cx, cy, cz;
    uint32_t writer;
    uint32_t zero;
} nbody_key;

/* Partition of plane cx (slabs along x): cx * partitions / cells. */
int nbody_plane_partition(int cx, int cells, int partitions);

/* The partitioner registered for the cell tables. */
int nbody_partitioner(const void *key, size_t key_size, int partitions);

/* Planes [*lo, *hi) of partition p (empty when cells < partitions). */
void nbody_partition_planes(int p, int cells, int partitions, int *lo, int *hi);

/* ---- particle files (nbody_particles.c) ---- */

/* Read `id x y z vx vy vz` lines ('#' comments and blank lines skipped):
 * finite values, positions in [0, box), distinct ids.  Sorted by id on
 * return.  0, or -1 with "FILE:LINE: reason" (or "FILE: reason") in err. */
int nbody_read(const char *path, double box, nbody_particle **out, size_t *n_out, char *err,
               size_t errlen);

/* The same from an open stream, `name` standing for it in messages. */
int nbody_read_stream(FILE *fp, const char *name, double box, nbody_particle **out, size_t *n_out,
                      char *err, size_t errlen);

/* n particles with ids 0..n-1, positions uniform in the box and velocities
 * uniform in [-vmax, vmax) minus their mean (zero total momentum up to
 * rounding), a pure function of seed.  NULL when out of memory. */
nbody_particle *nbody_generate(size_t n, double box, double vmax, uint64_t seed);

/* One line per particle, `%.17g` (exact round trip); 0 or -1 on a write error. */
int nbody_write(FILE *fp, const nbody_particle *p, size_t n);

/* Sort by ascending id. */
void nbody_sort_by_id(nbody_particle *p, size_t n);

#endif
