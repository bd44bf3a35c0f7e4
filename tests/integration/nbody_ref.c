/*
 * nbody_ref.c — an independent reference for `tessera run nbody`: the
 * direct O(N^2) loop over all pairs, with the cutoff, written from the
 * model's definition in docs/nbody.md and sharing no code with apps/nbody.
 *
 *   nbody_ref BOX CUTOFF SOFTENING DT STEPS < particles > particles
 *
 * Particles are read as `id x y z vx vy vz` lines and processed in
 * ascending id order; the acceleration of i adds the terms of j = 0..N-1
 * (by id) in that order, which is the order the model prescribes, so the
 * output must equal tessera's bit for bit (printed with %.17g).
 * Built with the flags of the test programs; no -ffp-contract needed since
 * the file is compiled as ISO C (-std=c11 in tests/CMakeLists.txt).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    unsigned long long id;
    double x[3], v[3];
} body;

static int cmp_id(const void *a, const void *b)
{
    unsigned long long x = ((const body *)a)->id, y = ((const body *)b)->id;
    return (x > y) - (x < y);
}

static double sep(double from, double to, double box)
{
    double d = to - from;
    if (d > box / 2) d -= box;
    else if (d < -box / 2) d += box;
    return d;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: nbody_ref BOX CUTOFF SOFTENING DT STEPS < in > out\n");
        return 2;
    }
    double box = atof(argv[1]), cut = atof(argv[2]), eps = atof(argv[3]), dt = atof(argv[4]);
    long steps = atol(argv[5]);
    size_t n = 0, cap = 1024;
    body *b = malloc(cap * sizeof *b);
    body t;
    while (scanf("%llu %lf %lf %lf %lf %lf %lf", &t.id, &t.x[0], &t.x[1], &t.x[2], &t.v[0], &t.v[1],
                 &t.v[2]) == 7) {
        if (n == cap) b = realloc(b, (cap *= 2) * sizeof *b);
        b[n++] = t;
    }
    qsort(b, n, sizeof *b, cmp_id);
    double(*acc)[3] = malloc(n * sizeof *acc);
    for (long s = 0; s < steps; s++) {
        for (size_t i = 0; i < n; i++) {
            double a[3] = {0, 0, 0};
            for (size_t j = 0; j < n; j++) {
                if (j == i) continue;
                double d[3];
                for (int k = 0; k < 3; k++) d[k] = sep(b[i].x[k], b[j].x[k], box);
                double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if (r2 >= cut * cut) continue;
                double q = r2 + eps * eps;
                double f = 1.0 / (q * sqrt(q));
                for (int k = 0; k < 3; k++) a[k] += f * d[k];
            }
            for (int k = 0; k < 3; k++) acc[i][k] = a[k];
        }
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) {
                b[i].v[k] += acc[i][k] * dt;
                double x = b[i].x[k] + b[i].v[k] * dt;
                if (x < 0 || x >= box) x -= box * floor(x / box);
                if (x >= box) x = 0;
                b[i].x[k] = x;
            }
    }
    for (size_t i = 0; i < n; i++)
        printf("%llu %.17g %.17g %.17g %.17g %.17g %.17g\n", b[i].id, b[i].x[0], b[i].x[1],
               b[i].x[2], b[i].v[0], b[i].v[1], b[i].v[2]);
    free(acc);
    free(b);
    return 0;
}
