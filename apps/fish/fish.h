/*
 * fish.h — the fish school of Couzin et al. (Nature 2005) on the tick face:
 * the model (fish_model.c: initial state, STEP, its own sine and cosine), the
 * Table-1 query functions and the quadtree PART (fish_part.c), and the
 * `tessera run fish` command (fish.c).  docs/fish.md gives the exact update.
 */
#ifndef TESS_APPS_FISH_H
#define TESS_APPS_FISH_H

#include <stdint.h>
#include "tessera/tick_particles.h"

/* The model's parameters (DESIGN §6 defaults in fish_params_default). */
typedef struct fish_params {
    double alpha; /* zone of repulsion */
    double rho;   /* zone of attraction and alignment; visibility V */
    double speed; /* s */
    double theta; /* maximal turning rate, rad/s */
    double sigma; /* standard deviation of the angular noise, rad */
    double omega; /* weight of the preferred direction of informed fish */
    double dt;    /* time step */
} fish_params;

/* Everything STEP and NEW read: the parameters and what follows from them.
 * Read-only once fish_model_init returned; shared by every worker. */
typedef struct fish_model {
    fish_params p;
    uint64_t count;    /* N */
    uint64_t informed; /* fish 0 .. informed-1 are informed */
    double alpha2;     /* alpha * alpha */
    double reach;      /* R = speed * dt */
    double turn;       /* theta * dt */
    double cos_turn, sin_turn;
    int turn_free; /* turn >= pi: a fish can take any direction */
    double disc;   /* sqrt(N), the radius of the initial disc */
} fish_model;

void fish_params_default(fish_params *p);

/* Derive the model; informed = round(frac * count). */
void fish_model_init(fish_model *m, const fish_params *p, uint64_t count, double informed_frac);

/* The random streams (tess_rng seeds; docs/fish.md). */
#define FISH_SEED_POSITION 0x666973682d706f73ULL /* "fish-pos" */
#define FISH_SEED_HEADING 0x666973682d646972ULL  /* "fish-dir" */
#define FISH_SEED_NOISE 0x666973682d6e6f69ULL    /* "fish-noi" */

/* NEW and STEP, in the form of tess_particle_fns (user = fish_model). */
void fish_new(void *user, uint64_t id, tess_particle *out);
void fish_step(void *user, const tess_particle *self, const tess_particle *nbrs, size_t n,
               int64_t tick, tess_particle *out);

/* The noise angle of fish `id` at `tick`, before scaling by sigma: an
 * Irwin–Hall sum of 12 uniforms minus 6 (mean 0, variance 1). */
double fish_noise(uint64_t id, int64_t tick);

/* Sine and cosine that give the same bits on every machine (+, -, *, / only;
 * accurate to a few ulp for |x| < 1e6). */
double fish_sin(double x);
double fish_cos(double x);

/* ---- fish_part.c: Table 1 over tess_particle_rect queries ---- */

/* Grow a rectangle by d on every side, plus a margin that covers rounding. */
void fish_grow(const tess_query *q, double d, tess_query *out);
/* Shrink it by d, minus twice that margin, so that growing the result by d
 * stays inside q; an empty rectangle when nothing is left. */
void fish_shrink(const tess_query *q, double d, tess_query *out);
void fish_rd(void *user, const tess_query *q, tess_query *out); /* grow by rho */
void fish_wd(void *user, const tess_query *q, tess_query *out); /* grow by R */
void fish_rx(void *user, const tess_query *q, tess_query *out); /* shrink by rho */
void fish_wx(void *user, const tess_query *q, tess_query *out); /* shrink by R */
/* IX: grow by R + rho, as hold = RD∘WD: a fish next tick sees, or swam
 * from, a fish of q only within that distance. */
void fish_ix(void *user, const tess_query *q, tess_query *out);
int fish_disjoint(void *user, const tess_query *a, const tess_query *b);

/* The school as a tick description: the particles class with NEW and STEP
 * in *fns (count and radius from m), Table 1 from this file and PART
 * `part` (fish_part; a test passes its own).  `fish` and the repartitioning
 * test build the same app through it.  m and fns must outlive the app. */
tess_tick_app fish_tick_app(fish_model *m, tess_particle_fns *fns,
                            int (*part)(tess_ctx *, void *, const void *, int, tess_query *));

/* PART: a quadtree over the fish positions of `snapshot` (a
 * tess_particles_view; NULL: the initial state).  0, or a negative status
 * with ctx's last error set. */
int fish_part(tess_ctx *ctx, void *user, const void *snapshot, int n, tess_query *parts);

/* The quadtree over explicit positions (for tests): n half-open rectangles
 * that partition the plane. */
int fish_part_points(const tess_particle *p, int64_t count, int n, tess_query *parts, char *err,
                     size_t errlen);

#endif
