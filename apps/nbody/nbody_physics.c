/*
 * nbody_physics.c — the arithmetic of the n-body model (nbody.h).  Built
 * with -ffp-contract=off: the results must be the same bits on every
 * machine and in the test's independent reference, so no multiply-add may
 * be fused behind our back.
 */
#include <math.h>

#include "nbody.h"

double nbody_min_image(double a, double b, double box)
{
    double d = b - a;
    /* a, b in [0, L): |d| < L, so one correction suffices; the branches are
     * mirror images, so the separation of (b, a) is exactly -d. */
    if (d > 0.5 * box) d -= box;
    else if (d < -0.5 * box) d += box;
    return d;
}

void nbody_accel(const nbody_params *prm, const nbody_particle *self, const nbody_pos *cand,
                 size_t n, double a[3])
{
    double r2max = prm->cutoff * prm->cutoff;
    double eps2 = prm->softening * prm->softening;
    a[0] = a[1] = a[2] = 0.0;
    for (size_t j = 0; j < n; j++) {
        if (cand[j].id == self->id) continue;
        double d[3];
        for (int k = 0; k < 3; k++) d[k] = nbody_min_image(self->x[k], cand[j].x[k], prm->box);
        double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        if (!(r2 < r2max)) continue;
        double s = r2 + eps2;
        double f = 1.0 / (s * sqrt(s));
        for (int k = 0; k < 3; k++) a[k] += f * d[k];
    }
}

/* x wrapped into [0, L): floor division, and L itself (a rounding of a tiny
 * negative x) folded to 0. */
static double wrap(double x, double box)
{
    if (x >= 0.0 && x < box) return x;
    x -= box * floor(x / box);
    return x < box ? x : 0.0;
}

int nbody_advance(const nbody_params *prm, nbody_particle *p, const double a[3])
{
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        p->v[k] += a[k] * prm->dt;
        double move = p->v[k] * prm->dt;
        /* Not finite, or a box or more in one step: the state means nothing
         * any more, and the wrap below would not bring x back into [0, L). */
        ok &= fabs(move) < prm->box;
        p->x[k] = ok ? wrap(p->x[k] + move, prm->box) : 0.0;
    }
    return ok ? 0 : -1;
}

void nbody_momentum(const nbody_particle *p, size_t n, double out[3])
{
    out[0] = out[1] = out[2] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) out[k] += p[i].v[k];
}
