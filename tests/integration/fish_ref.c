/*
 * fish_ref.c — an independent, direct O(N^2) sequential implementation of
 * the fish school of docs/fish.md, to check `tessera run fish` against.
 *
 * It follows the specification, not the application's code: every fish
 * looks at every other fish, and headings are handled as angles (atan2 of
 * the desired direction, noise added to the angle, the turn clamped to
 * +-theta*dt, then cos and sin), where the application rotates vectors.
 * The two agree up to rounding; since the model is chaotic, compare over a
 * few ticks only.  It needs no library at all: square root, atan2, sin and
 * cos are written out below as plain series (this program links only
 * libtessera, for nothing but the header-only tessera/rng.h).
 *
 *   fish_ref --fish N --informed FRAC --ticks T [--alpha A] [--rho R]
 *            [--speed S] [--theta T] [--sigma S] [--omega W] [--dt D]
 *            [--out FILE] [--check DUMP [--tol X]]
 *
 * --out writes the reference state in the dump format (40-byte records by
 * id); --check compares a dump of `tessera run fish` with the same options:
 * it prints the largest position and velocity differences and exits 1 if
 * either exceeds --tol (default 1e-8) or the dump is malformed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/rng.h"

#define PI 3.14159265358979323846

/* ---------------------------------------------------------------- plain math */

static double absd(double x) { return x < 0 ? -x : x; }

static double sqrt_newton(double x)
{
    if (!(x > 0)) return 0.0;
    double y = x > 1 ? x : 1.0; /* >= sqrt(x): Newton then decreases monotonically */
    for (;;) {
        double next = 0.5 * (y + x / y);
        if (!(next < y)) return y;
        y = next;
    }
}

/* atan on [0, 1]: halve the angle twice (atan x = 2 atan(x / (1 + sqrt(1 + x^2)))),
 * then the Taylor series. */
static double atan_unit(double x)
{
    int doublings = 0;
    while (x > 0.2) {
        x = x / (1.0 + sqrt_newton(1.0 + x * x));
        doublings++;
    }
    double x2 = x * x, term = x, sum = 0.0;
    for (int k = 0; k < 30; k++) {
        sum += term / (double)(2 * k + 1);
        term *= -x2;
    }
    return sum * (double)(1 << doublings);
}

static double atan2_ref(double y, double x)
{
    if (x == 0 && y == 0) return 0.0;
    double ax = absd(x), ay = absd(y);
    double a = ay <= ax ? atan_unit(ay / ax) : PI / 2 - atan_unit(ax / ay);
    if (x < 0) a = PI - a;
    return y < 0 ? -a : a;
}

/* Reduce to [-pi, pi], then the Taylor series. */
static double reduce_angle(double x)
{
    while (x > PI) x -= 2 * PI;
    while (x < -PI) x += 2 * PI;
    return x;
}

static double sin_ref(double x)
{
    x = reduce_angle(x);
    double term = x, sum = 0.0;
    for (int k = 1; k < 40; k += 2) {
        sum += term;
        term *= -x * x / (double)((k + 1) * (k + 2));
    }
    return sum;
}

static double cos_ref(double x)
{
    x = reduce_angle(x);
    double term = 1.0, sum = 0.0;
    for (int k = 0; k < 40; k += 2) {
        sum += term;
        term *= -x * x / (double)((k + 1) * (k + 2));
    }
    return sum;
}

/* ---------------------------------------------------------------- the model */

typedef struct params {
    long n;
    double informed, alpha, rho, speed, theta, sigma, omega, dt;
    long ticks;
} params;

typedef struct fish {
    double x, y, vx, vy;
} fish;

/* docs/fish.md, "Initial state": rejection from [-1, 1)^2 with tess_rng
 * counters 2a, 2a+1 for attempt a. */
static void disc_point(uint64_t seed, uint64_t id, double hole, double *px, double *py)
{
    for (uint64_t a = 0;; a++) {
        double x = 2.0 * tess_rng_unit(seed, id, 2 * a) - 1.0;
        double y = 2.0 * tess_rng_unit(seed, id, 2 * a + 1) - 1.0;
        if (x * x + y * y < 1.0 && x * x + y * y >= hole) {
            *px = x, *py = y;
            return;
        }
    }
}

static void initial_state(const params *p, fish *f)
{
    double r = sqrt_newton((double)p->n);
    for (long i = 0; i < p->n; i++) {
        double px, py, hx, hy;
        disc_point(0x666973682d706f73ULL, (uint64_t)i, 0.0, &px, &py);
        disc_point(0x666973682d646972ULL, (uint64_t)i, 1e-6, &hx, &hy);
        double h = sqrt_newton(hx * hx + hy * hy);
        f[i] = (fish){r * px, r * py, p->speed * hx / h, p->speed * hy / h};
    }
}

static double noise(uint64_t id, long tick)
{
    double sum = 0.0;
    for (uint64_t k = 0; k < 12; k++)
        sum += tess_rng_unit(0x666973682d6e6f69ULL, id, (uint64_t)tick * 12 + k);
    return sum - 6.0;
}

/* The new heading angle of fish i at `tick` (cur: the state at tick). */
static double new_heading(const params *p, const fish *cur, long i, long tick, long informed)
{
    const fish *me = &cur[i];
    double phi = atan2_ref(me->vy, me->vx);
    double ux = cos_ref(phi), uy = sin_ref(phi);
    double rx = 0, ry = 0, ax = 0, ay = 0, bx = ux, by = uy;
    int repelled = 0;
    for (long j = 0; j < p->n; j++) {
        if (j == i) continue;
        double dx = cur[j].x - me->x, dy = cur[j].y - me->y;
        double d = sqrt_newton(dx * dx + dy * dy);
        if (d < p->alpha) {
            repelled = 1;
            if (d > 0) rx += dx / d, ry += dy / d;
        } else if (d <= p->rho) {
            double psi = atan2_ref(cur[j].vy, cur[j].vx);
            ax += dx / d, ay += dy / d;
            bx += cos_ref(psi), by += sin_ref(psi);
        }
    }
    double dx = repelled ? -rx : ax + bx, dy = repelled ? -ry : ay + by;
    if (dx == 0 && dy == 0) dx = ux, dy = uy;
    double len = sqrt_newton(dx * dx + dy * dy);
    dx /= len, dy /= len;
    if (i < informed) {
        double wx = dx + p->omega, wy = dy;
        if (wx != 0 || wy != 0) dx = wx, dy = wy;
    }
    double want = atan2_ref(dy, dx) + p->sigma * noise((uint64_t)i, tick);
    double turn = reduce_angle(want - phi), limit = p->theta * p->dt;
    if (absd(turn) <= limit) return want;
    return phi + (turn > 0 ? limit : -limit);
}

static void run(const params *p, fish *f)
{
    long informed = (long)((double)p->n * p->informed + 0.5);
    fish *next = malloc((size_t)p->n * sizeof *next);
    if (!next) {
        fprintf(stderr, "fish_ref: out of memory\n");
        exit(2);
    }
    for (long t = 0; t < p->ticks; t++) {
        for (long i = 0; i < p->n; i++) {
            double h = new_heading(p, f, i, t, informed);
            next[i].vx = p->speed * cos_ref(h);
            next[i].vy = p->speed * sin_ref(h);
            next[i].x = f[i].x + p->dt * next[i].vx;
            next[i].y = f[i].y + p->dt * next[i].vy;
        }
        memcpy(f, next, (size_t)p->n * sizeof *f);
    }
    free(next);
}

/* ---------------------------------------------------------------- files */

static void put_le(unsigned char *o, uint64_t v)
{
    for (int i = 0; i < 8; i++) o[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)in[i] << (8 * i);
    return v;
}

static double get_f64(const unsigned char *in)
{
    uint64_t v = get_le(in);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

static int write_state(const char *path, const params *p, const fish *f)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    for (long i = 0; i < p->n; i++) {
        unsigned char rec[40];
        double v[4] = {f[i].x, f[i].y, f[i].vx, f[i].vy};
        put_le(rec, (uint64_t)i);
        for (int k = 0; k < 4; k++) {
            uint64_t bits;
            memcpy(&bits, &v[k], sizeof bits);
            put_le(rec + 8 + 8 * k, bits);
        }
        fwrite(rec, sizeof rec, 1, fp);
    }
    return fclose(fp) == 0 ? 0 : -1;
}

static int check_state(const char *path, const params *p, const fish *f, double tol)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "fish_ref: cannot open %s\n", path);
        return 1;
    }
    double dpos = 0, dvel = 0;
    long worst = -1, i = 0;
    unsigned char rec[40];
    int bad = 0;
    for (; fread(rec, sizeof rec, 1, fp) == 1; i++) {
        if (i >= p->n || get_le(rec) != (uint64_t)i) {
            bad = 1;
            break;
        }
        double ex = get_f64(rec + 8) - f[i].x, ey = get_f64(rec + 16) - f[i].y;
        double evx = get_f64(rec + 24) - f[i].vx, evy = get_f64(rec + 32) - f[i].vy;
        double e = absd(ex) > absd(ey) ? absd(ex) : absd(ey);
        double ev = absd(evx) > absd(evy) ? absd(evx) : absd(evy);
        if (!(e <= dpos)) dpos = e, worst = i;
        if (!(ev <= dvel)) dvel = ev;
    }
    int trailing = fgetc(fp) != EOF;
    fclose(fp);
    if (bad || trailing || i != p->n) {
        fprintf(stderr, "fish_ref: %s: expected %ld records with ids 0..%ld in order\n", path, p->n,
                p->n - 1);
        return 1;
    }
    printf("%ld fish, %ld ticks: max position error %.3g (fish %ld), max velocity error %.3g\n",
           p->n, p->ticks, dpos, worst, dvel);
    if (!(dpos <= tol && dvel <= tol)) {
        fprintf(stderr, "fish_ref: differences above the tolerance %g\n", tol);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- main */

static int parse_double(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && *end == '\0' ? 0 : -1;
}

int main(int argc, char **argv)
{
    params p = {0, -1, 1.0, 6.0, 1.0, 2.0, 0.01, 0.5, 0.2, -1};
    const char *out = NULL, *check = NULL;
    double tol = 1e-8, n = 0, ticks = -1;
    struct {
        const char *name;
        double *value;
    } opts[] = {{"--fish", &n},        {"--informed", &p.informed},
                {"--ticks", &ticks},   {"--alpha", &p.alpha},
                {"--rho", &p.rho},     {"--speed", &p.speed},
                {"--theta", &p.theta}, {"--sigma", &p.sigma},
                {"--omega", &p.omega}, {"--dt", &p.dt},
                {"--tol", &tol}};
    for (int i = 1; i < argc; i++) {
        int done = 0;
        if (i + 1 < argc && strcmp(argv[i], "--out") == 0) out = argv[++i], done = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--check") == 0) check = argv[++i], done = 1;
        for (size_t k = 0; !done && k < sizeof opts / sizeof opts[0]; k++)
            if (i + 1 < argc && strcmp(argv[i], opts[k].name) == 0) {
                if (parse_double(argv[++i], opts[k].value) != 0) break;
                done = 1;
            }
        if (!done) {
            fprintf(stderr, "fish_ref: bad argument '%s' (see the comment in fish_ref.c)\n",
                    argv[i]);
            return 2;
        }
    }
    p.n = (long)n, p.ticks = (long)ticks;
    if (p.n < 1 || p.ticks < 0 || p.informed < 0 || (!out && !check)) {
        fprintf(stderr, "fish_ref: need --fish N --informed FRAC --ticks T and --out or --check\n");
        return 2;
    }
    fish *f = malloc((size_t)p.n * sizeof *f);
    if (!f) return 2;
    initial_state(&p, f);
    run(&p, f);
    int rc = 0;
    if (out && write_state(out, &p, f) != 0) {
        fprintf(stderr, "fish_ref: cannot write %s\n", out);
        rc = 2;
    }
    if (rc == 0 && check) rc = check_state(check, &p, f, tol);
    free(f);
    return rc;
}
