/*
 * fish_model.c — the fish school model of Couzin, Krause, Franks and Levin,
 * "Effective leadership and decision-making in animal groups on the move"
 * (Nature 433, 2005): the initial state (NEW) and one tick (STEP).
 *
 * STEP must give the same bits on every machine, for any partition and
 * algorithm: neighbours arrive in ascending id order and are summed in that
 * order; random numbers come from tess_rng keyed by (fish id, tick); the
 * build uses -ffp-contract=off; and the only library function used is sqrt,
 * which IEEE 754 rounds correctly.  Sine and cosine are our own (below),
 * because libm's may differ in the last bit between machines.
 *
 * One tick for fish i at position c = (x, y) with velocity v = (vx, vy),
 * heading u = v / |v|, and neighbours j (other fish with
 * dx*dx + dy*dy <= rho*rho, dx = x_j - x, dy = y_j - y), in ascending id order:
 *
 *   1. Repulsion: for every j with dx*dx + dy*dy < alpha*alpha, add
 *      (dx, dy) / sqrt(dx*dx + dy*dy) to r (a j at distance 0 counts but adds
 *      nothing).  If there is such a j, the desired direction is d = -r.
 *   2. Otherwise attraction and alignment: starting from a = (0, 0) and
 *      b = u, for every j add (dx, dy) / |(dx, dy)| to a and u_j to b;
 *      d = a + b.  (The focal fish's own heading is part of the alignment
 *      sum, so a fish without neighbours keeps its heading.)
 *   3. If d = (0, 0), d = u.  Normalise: d = d / |d|.
 *   4. An informed fish (id < informed) blends in g = (1, 0):
 *      w = (d_x + omega, d_y); if w != 0, d = w / |w|.
 *   5. Noise: rotate d by eta = sigma * (sum of 12 uniforms - 6)
 *      (fish_noise), with cos and sin from fish_cos/fish_sin:
 *      d = (c d_x - s d_y, s d_x + c d_y).
 *   6. Turning limit: with cos(delta) = u . d and sin-sign = u x d
 *      (u_x d_y - u_y d_x): if theta*dt >= pi or u . d >= cos(theta*dt),
 *      the new heading is n = d; otherwise n is u rotated by theta*dt
 *      towards d (counter-clockwise when u x d >= 0, else clockwise).
 *   7. v' = (speed * n_x, speed * n_y); c' = (x + v'_x * dt, y + v'_y * dt).
 * Every expression is evaluated left to right as written here.
 */
#include <math.h>

#include "fish.h"
#include "tessera/rng.h"

void fish_params_default(fish_params *p)
{
    p->alpha = 1.0;
    p->rho = 6.0;
    p->speed = 1.0;
    p->theta = 2.0;
    p->sigma = 0.01;
    p->omega = 0.5;
    p->dt = 0.2;
}

void fish_model_init(fish_model *m, const fish_params *p, uint64_t count, double informed_frac)
{
    m->p = *p;
    m->count = count;
    m->informed = (uint64_t)llround(informed_frac * (double)count);
    if (m->informed > count) m->informed = count;
    m->alpha2 = p->alpha * p->alpha;
    m->reach = p->speed * p->dt;
    m->turn = p->theta * p->dt;
    m->turn_free = m->turn >= 3.14159265358979323846;
    m->cos_turn = fish_cos(m->turn_free ? 0.0 : m->turn);
    m->sin_turn = fish_sin(m->turn_free ? 0.0 : m->turn);
    m->disc = sqrt((double)count);
}

/* ---------------------------------------------------------------- sine and cosine */

/* Taylor polynomials on |r| <= pi/4 (+ a little): the truncation error,
 * below (pi/4)^19/19! ~ 1e-19, is far under an ulp. */
static double sin_poly(double r)
{
    double z = r * r;
    double p = -1.0 / 355687428096000.0; /* -1/17! */
    p = p * z + 1.0 / 1307674368000.0;   /* 1/15! */
    p = p * z - 1.0 / 6227020800.0;      /* 1/13! */
    p = p * z + 1.0 / 39916800.0;        /* 1/11! */
    p = p * z - 1.0 / 362880.0;          /* 1/9! */
    p = p * z + 1.0 / 5040.0;            /* 1/7! */
    p = p * z - 1.0 / 120.0;             /* 1/5! */
    p = p * z + 1.0 / 6.0;               /* 1/3! */
    return r - r * z * p;
}

static double cos_poly(double r)
{
    double z = r * r;
    double p = 1.0 / 6402373705728000.0; /* 1/18! */
    p = p * z - 1.0 / 20922789888000.0;  /* 1/16! */
    p = p * z + 1.0 / 87178291200.0;     /* 1/14! */
    p = p * z - 1.0 / 479001600.0;       /* 1/12! */
    p = p * z + 1.0 / 3628800.0;         /* 1/10! */
    p = p * z - 1.0 / 40320.0;           /* 1/8! */
    p = p * z + 1.0 / 720.0;             /* 1/6! */
    p = p * z - 1.0 / 24.0;              /* 1/4! */
    p = p * z + 0.5;                     /* 1/2! */
    return 1.0 - z * p;
}

/* x = k * pi/2 + r with |r| <= pi/4 (Cody and Waite: pi/2 in two parts,
 * the first with enough trailing zero bits that k * PIO2_HI is exact for
 * |k| < 2^20). */
static double reduce(double x, int64_t *k_out)
{
    const double two_over_pi = 0.63661977236758134308;
    const double pio2_hi = 1.57079632673412561417e+00; /* 0x3FF921FB54400000 */
    const double pio2_lo = 6.07710050650619224932e-11; /* 0x3DD0B4611A626331 */
    double t = x * two_over_pi;
    int64_t k = (int64_t)(t >= 0 ? t + 0.5 : t - 0.5);
    double kd = (double)k;
    *k_out = k;
    return (x - kd * pio2_hi) - kd * pio2_lo;
}

double fish_sin(double x)
{
    int64_t k;
    double r = reduce(x, &k);
    switch (k & 3) {
    case 0: return sin_poly(r);
    case 1: return cos_poly(r);
    case 2: return -sin_poly(r);
    default: return -cos_poly(r);
    }
}

double fish_cos(double x)
{
    int64_t k;
    double r = reduce(x, &k);
    switch (k & 3) {
    case 0: return cos_poly(r);
    case 1: return -sin_poly(r);
    case 2: return -cos_poly(r);
    default: return sin_poly(r);
    }
}

/* ---------------------------------------------------------------- NEW */

/* A point uniform in the unit disc, by rejection from [-1, 1)^2: attempt a
 * uses counters 2a and 2a+1; points with squared norm below `hole` are
 * rejected too (a direction needs a non-zero vector). */
static void unit_disc(uint64_t seed, uint64_t id, double hole, double *px, double *py)
{
    for (uint64_t a = 0;; a++) {
        double x = 2.0 * tess_rng_unit(seed, id, 2 * a) - 1.0;
        double y = 2.0 * tess_rng_unit(seed, id, 2 * a + 1) - 1.0;
        double q = x * x + y * y;
        if (q < 1.0 && q >= hole) {
            *px = x, *py = y;
            return;
        }
    }
}

void fish_new(void *user, uint64_t id, tess_particle *out)
{
    const fish_model *m = user;
    double px, py, hx, hy;
    unit_disc(FISH_SEED_POSITION, id, 0.0, &px, &py);
    unit_disc(FISH_SEED_HEADING, id, 1e-6, &hx, &hy);
    double h = sqrt(hx * hx + hy * hy);
    out->id = id;
    out->x = m->disc * px;
    out->y = m->disc * py;
    out->vx = m->p.speed * (hx / h);
    out->vy = m->p.speed * (hy / h);
}

/* ---------------------------------------------------------------- STEP */

double fish_noise(uint64_t id, int64_t tick)
{
    double sum = 0.0;
    for (uint64_t k = 0; k < 12; k++)
        sum += tess_rng_unit(FISH_SEED_NOISE, id, (uint64_t)tick * 12 + k);
    return sum - 6.0;
}

typedef struct vec2 {
    double x, y;
} vec2;

static vec2 unit_or(vec2 v, vec2 fallback)
{
    double len = sqrt(v.x * v.x + v.y * v.y);
    if (!(len > 0)) return fallback;
    return (vec2){v.x / len, v.y / len};
}

static vec2 rotate(vec2 v, double c, double s)
{
    return (vec2){c * v.x - s * v.y, s * v.x + c * v.y};
}

/* Steps 1-3: the normalised desired direction from the neighbours. */
static vec2 social_direction(const fish_model *m, const tess_particle *self, vec2 u,
                             const tess_particle *nbrs, size_t n)
{
    vec2 r = {0, 0}, a = {0, 0}, b = u;
    int repelled = 0;
    for (size_t j = 0; j < n; j++) {
        double dx = nbrs[j].x - self->x, dy = nbrs[j].y - self->y;
        double d2 = dx * dx + dy * dy;
        if (d2 < m->alpha2) {
            repelled = 1;
            if (d2 > 0) {
                double d = sqrt(d2);
                r.x += dx / d, r.y += dy / d;
            }
        } else if (!repelled) {
            double d = sqrt(d2);
            a.x += dx / d, a.y += dy / d;
            vec2 uj = unit_or((vec2){nbrs[j].vx, nbrs[j].vy}, (vec2){0, 0});
            b.x += uj.x, b.y += uj.y;
        }
    }
    vec2 d = repelled ? (vec2){-r.x, -r.y} : (vec2){a.x + b.x, a.y + b.y};
    return unit_or(d, u);
}

/* Step 6: turn from u towards d by at most theta * dt. */
static vec2 limit_turn(const fish_model *m, vec2 u, vec2 d)
{
    if (m->turn_free || u.x * d.x + u.y * d.y >= m->cos_turn) return d;
    if (u.x * d.y - u.y * d.x >= 0) return rotate(u, m->cos_turn, m->sin_turn);
    return rotate(u, m->cos_turn, -m->sin_turn);
}

void fish_step(void *user, const tess_particle *self, const tess_particle *nbrs, size_t n,
               int64_t tick, tess_particle *out)
{
    const fish_model *m = user;
    vec2 u = unit_or((vec2){self->vx, self->vy}, (vec2){1, 0});
    vec2 d = social_direction(m, self, u, nbrs, n);
    if (self->id < m->informed) d = unit_or((vec2){d.x + m->p.omega, d.y}, d);
    double eta = m->p.sigma * fish_noise(self->id, tick);
    d = rotate(d, fish_cos(eta), fish_sin(eta));
    vec2 h = limit_turn(m, u, d);
    out->id = self->id;
    out->vx = m->p.speed * h.x;
    out->vy = m->p.speed * h.y;
    out->x = self->x + out->vx * m->p.dt;
    out->y = self->y + out->vy * m->p.dt;
}
