/*
 * points.c — the point sets k-means clusters: the text points file reader and
 * the --gen N:DIM:K[:SEED] generator (docs/kmeans.md).  The generator draws
 * every number from the counter-based generator keyed by what it is for
 * (centre j coordinate d, point i's cluster, point i coordinate d), so every
 * rank makes the same points without sharing state.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmeans.h"
#include "slurp.h"
#include "tessera/rng.h"

void kmeans_points_free(kmeans_points *p)
{
    if (!p) return;
    free(p->coords);
    p->coords = NULL;
    p->n = 0;
}

/* ---- reader ---- */

typedef struct points_reader {
    const char *path;
    FILE *fp;
    char *line;
    size_t line_cap;
    unsigned long lineno;
    kmeans_points pts;
    uint64_t cap; /* points the coords array can hold */
    char *err;
    size_t err_cap;
} points_reader;

/* At most 60 printable characters of a line, for error messages. */
static void line_excerpt(const char *line, char *out, size_t cap)
{
    size_t n = 0;
    for (; line[n] && line[n] != '\n' && line[n] != '\r' && n < 60 && n + 4 < cap; n++)
        out[n] = isprint((unsigned char)line[n]) ? line[n] : '?';
    if (line[n] && line[n] != '\n' && line[n] != '\r' && n + 4 < cap)
        out[n++] = '.', out[n++] = '.', out[n++] = '.';
    out[n] = '\0';
}

static int count_fields(const char *s)
{
    int n = 0;
    while (*s) {
        while (isspace((unsigned char)*s)) s++;
        if (!*s) break;
        n++;
        while (*s && !isspace((unsigned char)*s)) s++;
    }
    return n;
}

/* Plain decimals only: strtod would also take "nan", "inf" and hex floats. */
static int field_chars_ok(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789+-.eE", s[i])) return 0;
    return len > 0;
}

/* Parse the next field of *sp into *out, advancing *sp; 0 or -1. */
static int parse_field(const char **sp, double *out)
{
    const char *s = *sp;
    while (isspace((unsigned char)*s)) s++;
    size_t len = 0;
    while (s[len] && !isspace((unsigned char)s[len])) len++;
    *sp = s + len;
    if (!field_chars_ok(s, len)) return -1;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end != s + len || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int reader_fail(points_reader *r, const char *reason)
{
    char excerpt[80];
    line_excerpt(r->line, excerpt, sizeof excerpt);
    snprintf(r->err, r->err_cap, "%s:%lu: %s%s%s", r->path, r->lineno, reason,
             excerpt[0] ? ": " : "", excerpt);
    return -1;
}

static int reader_reserve(points_reader *r)
{
    if (r->pts.n < r->cap) return 0;
    uint64_t cap = r->cap ? 2 * r->cap : 1024;
    double *c = realloc(r->pts.coords, (size_t)cap * (size_t)r->pts.dim * sizeof *c);
    if (!c) {
        snprintf(r->err, r->err_cap, "%s:%lu: out of memory", r->path, r->lineno);
        return -1;
    }
    r->pts.coords = c;
    r->cap = cap;
    return 0;
}

/* The first data line sets DIM; every later one must match it. */
static int reader_check_count(points_reader *r, int fields)
{
    char reason[96];
    if (r->pts.dim == 0 && fields == 0)
        return reader_fail(r, "expected coordinates, got an empty line");
    if (r->pts.dim == 0 && fields > KMEANS_MAX_DIM) {
        snprintf(reason, sizeof reason, "%d coordinates, more than the limit of %d", fields,
                 KMEANS_MAX_DIM);
        return reader_fail(r, reason);
    }
    if (r->pts.dim == 0) r->pts.dim = fields;
    if (fields == r->pts.dim) return 0;
    snprintf(reason, sizeof reason, "expected %d coordinate%s, got %d", r->pts.dim,
             r->pts.dim == 1 ? "" : "s", fields);
    return reader_fail(r, reason);
}

static int reader_point(points_reader *r, const char *text)
{
    if (reader_check_count(r, count_fields(text)) != 0 || reader_reserve(r) != 0) return -1;
    double *row = r->pts.coords + r->pts.n * (uint64_t)r->pts.dim;
    const char *s = text;
    for (int d = 0; d < r->pts.dim; d++) {
        char reason[128];
        if (parse_field(&s, &row[d]) != 0) {
            snprintf(reason, sizeof reason, "coordinate %d is not a finite decimal number", d + 1);
            return reader_fail(r, reason);
        }
        if (fabs(row[d]) > KMEANS_MAX_ABS) {
            snprintf(reason, sizeof reason,
                     "coordinate %d is %g, beyond the limit of %g (squared distances would "
                     "overflow)",
                     d + 1, row[d], KMEANS_MAX_ABS);
            return reader_fail(r, reason);
        }
    }
    r->pts.n++;
    if (r->pts.n > KMEANS_MAX_POINTS) return reader_fail(r, "too many points");
    return 0;
}

static int reader_line(points_reader *r, ssize_t len)
{
    if ((size_t)len != strlen(r->line)) return reader_fail(r, "unexpected NUL byte");
    if (app_load_interrupted((unsigned long)r->lineno))
        return reader_fail(r, "interrupted while loading");
    const char *s = r->line;
    while (isspace((unsigned char)*s) && *s != '\n') s++;
    if (*s == '#') return 0;
    return reader_point(r, r->line);
}

static int reader_run(points_reader *r)
{
    ssize_t len;
    errno = 0;
    while ((len = getline(&r->line, &r->line_cap, r->fp)) >= 0) {
        r->lineno++;
        if (reader_line(r, len) != 0) return -1;
    }
    if (ferror(r->fp) || errno == ENOMEM) {
        snprintf(r->err, r->err_cap, "cannot read %s: %s", r->path, strerror(errno ? errno : EIO));
        return -1;
    }
    if (r->pts.n == 0) {
        snprintf(r->err, r->err_cap, "%s: no points", r->path);
        return -1;
    }
    return 0;
}

int kmeans_points_read(const char *path, kmeans_points *out, char *err, size_t err_cap)
{
    points_reader r = {.path = path, .err = err, .err_cap = err_cap};
    char why[512];
    r.fp = app_fopen_regular(path, why, sizeof why);
    if (!r.fp) {
        snprintf(err, err_cap, "cannot read %s", why);
        return -1;
    }
    int rc = reader_run(&r);
    fclose(r.fp);
    free(r.line);
    if (rc != 0) {
        kmeans_points_free(&r.pts);
        return -1;
    }
    *out = r.pts;
    return 0;
}

/* ---- generator ---- */

/* Digits only, the whole text, value <= max. */
static int parse_u64_field(const char *text, size_t len, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 20) return -1;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)text[i])) return -1;
        uint64_t digit = (uint64_t)(text[i] - '0');
        if (v > (max - digit) / 10) return -1;
        v = v * 10 + digit;
    }
    *out = v;
    return 0;
}

/* Split "a:b:c[:d]" into up to 4 fields; returns the field count or -1. */
static int split_spec(const char *text, const char *field[4], size_t len[4])
{
    int n = 0;
    const char *s = text;
    for (;;) {
        if (n == 4) return -1;
        const char *colon = strchr(s, ':');
        field[n] = s;
        len[n] = colon ? (size_t)(colon - s) : strlen(s);
        n++;
        if (!colon) return n;
        s = colon + 1;
    }
}

static int gen_fields(const char *text, kmeans_gen_spec *g)
{
    const char *f[4];
    size_t len[4];
    uint64_t dim, k;
    int n = split_spec(text, f, len);
    if (n < 3 || parse_u64_field(f[0], len[0], KMEANS_MAX_POINTS, &g->n) != 0 ||
        parse_u64_field(f[1], len[1], KMEANS_MAX_DIM, &dim) != 0 ||
        parse_u64_field(f[2], len[2], KMEANS_MAX_K, &k) != 0)
        return -1;
    g->seed = 1;
    if (n == 4 && parse_u64_field(f[3], len[3], UINT64_MAX, &g->seed) != 0) return -1;
    g->dim = (int)dim;
    g->k = (int)k;
    return 0;
}

int kmeans_gen_parse(const char *text, kmeans_gen_spec *out, char *err, size_t err_cap)
{
    kmeans_gen_spec g;
    if (gen_fields(text, &g) != 0 || g.n == 0 || g.dim == 0 || g.k == 0) {
        snprintf(err, err_cap,
                 "expected N:DIM:K[:SEED] with N in [1, 2^40], DIM in [1, %d], K in [1, %d], "
                 "got '%s'",
                 KMEANS_MAX_DIM, KMEANS_MAX_K, text);
        return -1;
    }
    if ((uint64_t)g.k > g.n) {
        snprintf(err, err_cap, "K (%d) is larger than N (%llu) in '%s'", g.k,
                 (unsigned long long)g.n, text);
        return -1;
    }
    *out = g;
    return 0;
}

double *kmeans_gen_centres(const kmeans_gen_spec *spec)
{
    size_t count = (size_t)spec->k * (size_t)spec->dim;
    double *c = malloc(count * sizeof *c);
    for (size_t j = 0; c && j < count; j++)
        c[j] = 100.0 * tess_rng_unit(spec->seed, 0, j); /* j = centre*DIM + d */
    return c;
}

/* Standard normal by Box-Muller from two uniforms of stream 2. */
static double gen_normal(uint64_t seed, uint64_t counter)
{
    const double pi = 3.14159265358979323846;
    double u1 = tess_rng_unit(seed, 2, 2 * counter);
    double u2 = tess_rng_unit(seed, 2, 2 * counter + 1);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * pi * u2);
}

void kmeans_gen_point(const kmeans_gen_spec *spec, const double *centres, uint64_t i,
                      double *row_out)
{
    uint64_t c = tess_rng_u64(spec->seed, 1, i) % (uint64_t)spec->k;
    const double *centre = centres + c * (uint64_t)spec->dim;
    for (int d = 0; d < spec->dim; d++)
        row_out[d] = centre[d] + 2.0 * gen_normal(spec->seed, i * (uint64_t)spec->dim + d);
}

int kmeans_points_generate(const kmeans_gen_spec *spec, kmeans_points *out)
{
    if (spec->n > SIZE_MAX / sizeof(double) / (size_t)spec->dim) return -1;
    double *centres = kmeans_gen_centres(spec);
    double *coords = malloc((size_t)spec->n * (size_t)spec->dim * sizeof *coords);
    if (!centres || !coords) {
        free(centres);
        free(coords);
        return -1;
    }
    for (uint64_t i = 0; i < spec->n; i++)
        kmeans_gen_point(spec, centres, i, coords + i * (uint64_t)spec->dim);
    free(centres);
    out->coords = coords;
    out->n = spec->n;
    out->dim = spec->dim;
    return 0;
}
