/*
 * sar_io.c — the TSAR scene file (little-endian; docs/tiles.md) and the
 * synthetic scenes of `--gen`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sar.h"
#include "slurp.h"
#include "tessera/rng.h"

#define SAR_KU_MAX 1e6 /* rad/m: 2*pi*fc/c for a carrier up to about 48 THz */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sar_io.c copies little-endian samples as they are: port it to a big-endian host"
#endif

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double get_f64(const uint8_t *p)
{
    uint64_t u = (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The header's numbers; 0 or -1 with err filled. */
static int parse_header(const uint8_t *b, const char *name, sar_scene *s, char *err, size_t n)
{
    if (memcmp(b, "TSAR", 4) != 0)
        return app_fail(err, n, "%s: not a TSAR scene (bad magic)", name);
    uint32_t version = get_u32(b + 4);
    if (version != 1) return app_fail(err, n, "%s: TSAR version %u (expected 1)", name, version);
    s->pulses = get_u32(b + 8);
    s->bins = get_u32(b + 12);
    s->r0 = get_f64(b + 16);
    s->dr = get_f64(b + 24);
    s->ku = get_f64(b + 32);
    s->width = get_u32(b + 40);
    s->height = get_u32(b + 44);
    s->x0 = get_f64(b + 48);
    s->y0 = get_f64(b + 56);
    s->dx = get_f64(b + 64);
    s->dy = get_f64(b + 72);
    if (s->pulses == 0) return app_fail(err, n, "%s: 0 pulses", name);
    if (s->bins < 2) return app_fail(err, n, "%s: %u range bins (at least 2)", name, s->bins);
    if ((uint64_t)s->pulses * s->bins > (1ull << 36))
        return app_fail(err, n, "%s: %u pulses of %u bins is too many samples (at most 2^36)", name,
                        s->pulses, s->bins);
    if (s->width == 0 || s->height == 0 || s->width > (1u << 20) || s->height > (1u << 20) ||
        (uint64_t)s->width * s->height > (1ull << 32))
        return app_fail(err, n, "%s: image %u x %u (each side 1..1048576, at most 2^32 pixels)",
                        name, s->width, s->height);
    double v[] = {s->r0, s->dr, s->ku, s->x0, s->y0, s->dx, s->dy};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i])) return app_fail(err, n, "%s: a header number is not finite", name);
    if (!(s->dr > 0)) return app_fail(err, n, "%s: bin spacing dR %g is not positive", name, s->dr);
    /* 2*ku*r must stay a phase that cos and sin can take: a huge but finite
     * ku made every pixel NaN.  1e6 rad/m is a carrier near 48 THz. */
    if (!(fabs(s->ku) <= SAR_KU_MAX))
        return app_fail(err, n, "%s: wavenumber ku %g rad/m is outside [-%g, %g]", name, s->ku,
                        SAR_KU_MAX, SAR_KU_MAX);
    if (s->dx == 0 || s->dy == 0) return app_fail(err, n, "%s: pixel spacing of 0", name);
    return 0;
}

static int check_finite(const char *name, const char *what, const double *d, const float *f,
                        size_t count, char *err, size_t n)
{
    for (size_t i = 0; i < count; i++)
        if (!(d ? isfinite(d[i]) : isfinite(f[i])))
            return app_fail(err, n, "%s: %s value %zu is not finite", name, what, i);
    return 0;
}

int sar_parse(const uint8_t *buf, size_t len, const char *name, sar_scene *s, char *err,
              size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (len < SAR_HEADER_BYTES)
        return app_fail(err, errlen, "%s: expected a %d-byte header, found %zu bytes", name,
                        SAR_HEADER_BYTES, len);
    if (parse_header(buf, name, s, err, errlen) != 0) return -1;
    uint64_t pos_bytes = (uint64_t)s->pulses * 24;
    uint64_t sample_bytes = (uint64_t)s->pulses * s->bins * SAR_PIXEL_BYTES;
    uint64_t have = len - SAR_HEADER_BYTES;
    if (have < pos_bytes)
        return app_fail(err, errlen, "%s: expected %llu bytes of positions, found %llu", name,
                        (unsigned long long)pos_bytes, (unsigned long long)have);
    have -= pos_bytes;
    if (have != sample_bytes)
        return app_fail(err, errlen, "%s: expected %llu bytes of samples, found %llu", name,
                        (unsigned long long)sample_bytes, (unsigned long long)have);
    s->pos = malloc(pos_bytes);
    s->samples = malloc(sample_bytes);
    if (s->pos == NULL || s->samples == NULL) {
        sar_free(s);
        return app_fail(err, errlen, "%s: out of memory for %u pulses", name, s->pulses);
    }
    for (uint32_t i = 0; i < 3 * s->pulses; i++)
        s->pos[i] = get_f64(buf + SAR_HEADER_BYTES + 8 * (size_t)i);
    memcpy(s->samples, buf + SAR_HEADER_BYTES + pos_bytes, sample_bytes);
    if (check_finite(name, "position", s->pos, NULL, 3 * (size_t)s->pulses, err, errlen) != 0 ||
        check_finite(name, "sample", NULL, s->samples, 2 * (size_t)s->pulses * s->bins, err,
                     errlen) != 0) {
        sar_free(s);
        return -1;
    }
    return 0;
}

int sar_read(const char *path, sar_scene *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    uint8_t *buf;
    size_t len, size;
    if (app_slurp(path, 0, &buf, &len, &size, err, errlen) != 0) return -1;
    int rc = sar_parse(buf, len, path, s, err, errlen);
    free(buf);
    return rc;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put_u32(p, (uint32_t)u);
    put_u32(p + 4, (uint32_t)(u >> 32));
}

int sar_write(const sar_scene *s, FILE *fp)
{
    uint8_t h[SAR_HEADER_BYTES];
    memcpy(h, "TSAR", 4);
    put_u32(h + 4, 1);
    put_u32(h + 8, s->pulses);
    put_u32(h + 12, s->bins);
    put_f64(h + 16, s->r0);
    put_f64(h + 24, s->dr);
    put_f64(h + 32, s->ku);
    put_u32(h + 40, s->width);
    put_u32(h + 44, s->height);
    put_f64(h + 48, s->x0);
    put_f64(h + 56, s->y0);
    put_f64(h + 64, s->dx);
    put_f64(h + 72, s->dy);
    size_t nsamples = 2 * (size_t)s->pulses * s->bins;
    if (fwrite(h, 1, sizeof h, fp) != sizeof h) return -1;
    for (size_t i = 0; i < 3 * (size_t)s->pulses; i++) {
        uint8_t b[8];
        put_f64(b, s->pos[i]);
        if (fwrite(b, 1, 8, fp) != 8) return -1;
    }
    return fwrite(s->samples, sizeof(float), nsamples, fp) == nsamples ? 0 : -1;
}

void sar_free(sar_scene *s)
{
    free(s->pos);
    free(s->samples);
    s->pos = NULL;
    s->samples = NULL;
}

/* ---------------------------------------------------------------- --gen */

#define SAR_C 299792458.0
#define SAR_FC 10e9         /* X band: wavelength 3 cm */
#define SAR_PIXEL 0.5       /* ground pixel spacing, m */
#define SAR_STANDOFF 1000.0 /* ground distance of the flight path from the scene centre */
#define SAR_ALTITUDE 500.0
#define SAR_NOISE 0.02 /* amplitude of the uniform noise on each sample */

static double sinc(double x)
{
    if (fabs(x) < 1e-12) return 1.0;
    double px = M_PI * x;
    return sin(px) / px;
}

/* Scatterers at pixel centres away from the edges, amplitudes 1, 0.8, ... */
static int place_targets(const sar_scene *s, uint64_t seed, double t[16])
{
    int n = s->width >= 16 && s->height >= 16 ? 5 : 1;
    for (int k = 0; k < n; k++) {
        double u = n == 1 ? 0.5 : 0.15 + 0.7 * tess_rng_unit(seed, 11, (uint64_t)k);
        double v = n == 1 ? 0.5 : 0.15 + 0.7 * tess_rng_unit(seed, 12, (uint64_t)k);
        int64_t ix = (int64_t)(u * (s->width - 1)), iy = (int64_t)(v * (s->height - 1));
        t[2 * k] = s->x0 + (double)ix * s->dx;
        t[2 * k + 1] = s->y0 + (double)iy * s->dy;
    }
    return n;
}

/* Range bins covering every pixel seen from every pulse, 8 bins of margin. */
static void choose_bins(sar_scene *s)
{
    double ymin = s->y0, ymax = s->y0 + (s->height - 1) * s->dy;
    double xs[2] = {s->x0, s->x0 + (s->width - 1) * s->dx};
    double ypath = s->pos[1], z = s->pos[2];
    double rmin = hypot(ymin - ypath, z), rmax = 0;
    uint32_t ends[2] = {0, s->pulses - 1}; /* the far corners are seen from the path's ends */
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 2; i++) {
            double r = sqrt(pow(xs[i] - s->pos[3 * ends[e]], 2) + pow(ymax - ypath, 2) + z * z);
            if (r > rmax) rmax = r;
        }
    double dr = (rmax - rmin) / (double)(s->bins > 24 ? s->bins - 16 : 8);
    s->dr = dr > SAR_PIXEL / 2 ? dr : SAR_PIXEL / 2;
    s->r0 = rmin - 8 * s->dr;
}

static void synthesize(sar_scene *s, uint64_t seed, const double *t, int nt)
{
    double rho = s->dr * 2 > SAR_PIXEL ? s->dr * 2 : SAR_PIXEL; /* range resolution */
    for (uint32_t p = 0; p < s->pulses; p++) {
        float *row = s->samples + 2 * (size_t)p * s->bins;
        for (uint32_t b = 0; b < s->bins; b++) {
            uint64_t at = (uint64_t)p * s->bins + b;
            row[2 * b] = (float)(SAR_NOISE * (2 * tess_rng_unit(seed, 21, at) - 1));
            row[2 * b + 1] = (float)(SAR_NOISE * (2 * tess_rng_unit(seed, 22, at) - 1));
        }
        for (int k = 0; k < nt; k++) {
            const double *q = s->pos + 3 * p;
            double rt = sqrt(pow(q[0] - t[2 * k], 2) + pow(q[1] - t[2 * k + 1], 2) + q[2] * q[2]);
            double amp = 1.0 - 0.2 * k, ph = -2 * s->ku * rt;
            for (uint32_t b = 0; b < s->bins; b++) {
                double a = amp * sinc((s->r0 + b * s->dr - rt) / rho);
                row[2 * b] += (float)(a * cos(ph));
                row[2 * b + 1] += (float)(a * sin(ph));
            }
        }
    }
}

int sar_generate(uint32_t pulses, uint32_t bins, uint32_t width, uint32_t height, uint64_t seed,
                 sar_scene *s, double targets[16], int *ntargets)
{
    memset(s, 0, sizeof *s);
    if (pulses == 0 || bins < 2 || width == 0 || height == 0) return -1;
    s->pulses = pulses;
    s->bins = bins;
    s->width = width;
    s->height = height;
    s->ku = 2 * M_PI * SAR_FC / SAR_C;
    s->dx = s->dy = SAR_PIXEL;
    s->x0 = -((double)width - 1) / 2.0 * SAR_PIXEL;
    s->y0 = -((double)height - 1) / 2.0 * SAR_PIXEL;
    s->pos = malloc(3 * sizeof(double) * pulses);
    s->samples = malloc(2 * sizeof(float) * (size_t)pulses * bins);
    if (s->pos == NULL || s->samples == NULL) {
        sar_free(s);
        return -1;
    }
    /* an aperture whose cross-range resolution is the pixel spacing */
    double wavelength = SAR_C / SAR_FC;
    double aperture = wavelength * hypot(SAR_STANDOFF, SAR_ALTITUDE) / (2 * SAR_PIXEL);
    for (uint32_t p = 0; p < pulses; p++) {
        double f = pulses > 1 ? (double)p / (pulses - 1) - 0.5 : 0.0;
        s->pos[3 * p] = f * aperture;
        s->pos[3 * p + 1] = -SAR_STANDOFF;
        s->pos[3 * p + 2] = SAR_ALTITUDE;
    }
    choose_bins(s);
    *ntargets = place_targets(s, seed, targets);
    synthesize(s, seed, targets, *ntargets);
    return 0;
}
