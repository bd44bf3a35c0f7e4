/*
 * tick_particles.h — the 2-D particles state class of the tick face (fish
 * school, short-range n-body).  A tuple is a particle {id, x, y, vx, vy};
 * ids are dense, 0 .. count-1.  Queries are axis-aligned rectangles of the
 * plane (tess_particle_rect, packed into a tess_query with
 * tess_particle_query), half-open — [x0, x1) x [y0, y1) — so rectangles that
 * share an edge never both own a particle, and bounds may be ±INFINITY.
 *
 * Each process keeps, per version, an array of particles, a bitmap of the
 * ids it holds and a uniform-grid spatial index (built when STEP first reads
 * the version after a change).  STEP gets every other particle within the
 * application's radius in ascending id order — the canonical order that
 * makes neighbour sums bitwise reproducible.
 *
 * A region (tick.h) holds the particles whose position is in every pos
 * rectangle and in no neg rectangle.  step(from, to, r, tick) considers the
 * particles of `from` inside WD(pos[i]) for every i (the application's wd()),
 * computes each one's next state unless `to` already holds its id, and keeps
 * it if its new position is in r.
 */
#ifndef TESSERA_TICK_PARTICLES_H
#define TESSERA_TICK_PARTICLES_H

#include "tessera/tick.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One particle.  Packed form (merge/pack, tess_tick_result.final_state):
 * the same five fields, 40 bytes, little-endian, no padding. */
typedef struct tess_particle {
    uint64_t id;
    double x, y;   /* position */
    double vx, vy; /* velocity (the application decides what it means) */
} tess_particle;

#define TESS_PARTICLE_BYTES 40

/* Half-open rectangle [x0, x1) x [y0, y1); bounds may be ±INFINITY.  Empty
 * when x0 >= x1 or y0 >= y1. */
typedef struct tess_particle_rect {
    double x0, x1, y0, y1;
} tess_particle_rect;

static inline tess_query tess_particle_query(tess_particle_rect r)
{
    return tess__query_pack(&r, sizeof r);
}

static inline tess_particle_rect tess_particle_rect_of(const tess_query *q)
{
    tess_particle_rect r;
    tess__query_unpack(q, &r, sizeof r);
    return r;
}

static inline int tess_particle_rect_contains(const tess_particle_rect *r, double x, double y)
{
    return x >= r->x0 && x < r->x1 && y >= r->y0 && y < r->y1;
}

/* 1 if a particle at (x, y) is in region r (every pos, no neg). */
TESS_API int tess_particle_region_contains(const tess_region *r, double x, double y);

/* The application's NEW and STEP (tess_tick_app.class_fns).  Both are called
 * on the worker threads, concurrently from several processes: they must only
 * read `user`. */
typedef struct tess_particle_fns {
    uint64_t count; /* particles 0 .. count-1; below 2^32 - 1 */
    double radius;  /* STEP sees every other particle within this distance (>= 0,
                       may be INFINITY); create() fails (NULL) on bad fields or a
                       missing app->wd */
    /* NEW: the initial state of particle `id` (out->id is set by the class). */
    void (*init)(void *user, uint64_t id, tess_particle *out);
    /* STEP: the state of `self` at tick+1 into out (out->id is set by the
     * class).  nbrs[0 .. n-1] are the particles q != self with
     * dx*dx + dy*dy <= radius*radius (dx = q.x - self.x, dy = q.y - self.y,
     * evaluated in that order), in ascending id order; valid during the call. */
    void (*step)(void *user, const tess_particle *self, const tess_particle *nbrs, size_t n,
                 int64_t tick, tess_particle *out);
} tess_particle_fns;

/* The particles class.  With TESS_TICK_CHECK=1 in the environment, each
 * version records the regions it holds every particle of (what NEW and STEP
 * filled in, and what the runtime received), and a STEP whose particle is
 * kept must have the square of side 2 * radius around it inside one of them,
 * or the run ends naming the tick and the particle (an RD too small, or an
 * RX or WX too large; docs/ticks.md).  Without it: no checks, no cost. */
TESS_API extern const tess_state_class tess_particles_class;

/* snapshot(): the particles of a version, in no particular order; valid
 * until the version changes.  Owned by the state class instance. */
typedef struct tess_particles_view {
    int64_t count;
    const tess_particle *p;
} tess_particles_view;

/* Encode / decode one packed record (40 bytes, little-endian). */
TESS_API void tess_particle_encode(const tess_particle *p, unsigned char *out);
TESS_API void tess_particle_decode(const unsigned char *in, tess_particle *out);

/* Unpack a final state (records in any order) into out[id], 0 <= id < count.
 * 0, or TESS_ERR_FORMAT when the length is not a multiple of 40, an id is out
 * of range, appears twice or is missing. */
TESS_API int tess_particles_unpack(const void *packed, size_t len, uint64_t count,
                                   tess_particle *out);

#ifdef __cplusplus
}
#endif

#endif
