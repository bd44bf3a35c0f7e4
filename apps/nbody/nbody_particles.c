/*
 * nbody_particles.c — particle files (`id x y z vx vy vz` per line) and the
 * generator of a starting state.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbody.h"
#include "slurp.h"
#include "tessera/rng.h"

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const nbody_particle *)a)->id, y = ((const nbody_particle *)b)->id;
    return (x > y) - (x < y);
}

void nbody_sort_by_id(nbody_particle *p, size_t n)
{
    if (n > 1) qsort(p, n, sizeof *p, by_id);
}

/* A line's seven fields; 0, or -1 with the reason in why. */
static int parse_line(char *s, nbody_particle *p, const char **why)
{
    char *end;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '-' || *s == '+') {
        *why = "the id must be a non-negative integer";
        return -1;
    }
    errno = 0;
    unsigned long long id = strtoull(s, &end, 10);
    if (end == s || errno != 0 || (*end != ' ' && *end != '\t')) {
        *why = "expected 'id x y z vx vy vz' with an integer id";
        return -1;
    }
    p->id = id;
    double *f[6] = {&p->x[0], &p->x[1], &p->x[2], &p->v[0], &p->v[1], &p->v[2]};
    for (int k = 0; k < 6; k++) {
        s = end;
        *f[k] = strtod(s, &end);
        if (end == s ||
            (*end != ' ' && *end != '\t' && *end != '\0' && *end != '\n' && *end != '\r')) {
            *why = "expected 'id x y z vx vy vz' (7 numbers)";
            return -1;
        }
        if (!isfinite(*f[k])) {
            *why = "a value is not finite";
            return -1;
        }
    }
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
    if (*end != '\0') {
        *why = "more than 7 fields";
        return -1;
    }
    return 0;
}

static int in_box(const nbody_particle *p, double box)
{
    for (int k = 0; k < 3; k++)
        if (!(p->x[k] >= 0.0 && p->x[k] < box)) return 0;
    return 1;
}

/* Append p to the growing array. */
static int push(nbody_particle **a, size_t *n, size_t *cap, const nbody_particle *p)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 1024;
        nbody_particle *g = realloc(*a, ncap * sizeof *g);
        if (!g) return -1;
        *a = g;
        *cap = ncap;
    }
    (*a)[(*n)++] = *p;
    return 0;
}

/* Duplicate ids, once sorted: the first one, or -1. */
static long long first_duplicate(const nbody_particle *p, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (p[i].id == p[i - 1].id) return (long long)p[i].id;
    return -1;
}

#define NBODY_LINE_MAX 1023 /* bytes of a line, its newline included */

/* A line's own trouble, before it is parsed: NULL when it may be parsed. */
static const char *line_trouble(const char *line, ssize_t len)
{
    if ((size_t)len != strlen(line)) return "NUL byte in the line";
    if (len > NBODY_LINE_MAX) return "line too long";
    for (const char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r' && *c != '\n')
            return "control character in the line";
    return NULL;
}

static int read_lines(FILE *fp, const char *path, double box, nbody_particle **a, size_t *n,
                      char *err, size_t errlen)
{
    char *line = NULL;
    size_t line_cap = 0, cap = 0;
    unsigned long lineno = 0;
    ssize_t len;
    int rc = 0;
    errno = 0;
    while (rc == 0 && (len = getline(&line, &line_cap, fp)) >= 0) {
        lineno++;
        const char *why = line_trouble(line, len);
        if (why == NULL && app_load_interrupted(lineno)) why = "interrupted while loading";
        const char *s = line + strspn(line, " \t\r\n");
        if (why == NULL && (*s == '\0' || *s == '#')) continue;
        nbody_particle p;
        if (why == NULL && parse_line(line, &p, &why) == 0 && !in_box(&p, box)) {
            snprintf(err, errlen, "%s:%lu: position outside the box [0, %g)", path, lineno, box);
            rc = -1;
        } else if (why != NULL) {
            snprintf(err, errlen, "%s:%lu: %s", path, lineno, why);
            rc = -1;
        } else if (push(a, n, &cap, &p) != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
        }
    }
    free(line);
    if (rc == 0 && (ferror(fp) || errno == ENOMEM)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno ? errno : EIO));
        rc = -1;
    }
    return rc;
}

int nbody_read_stream(FILE *fp, const char *name, double box, nbody_particle **out, size_t *n_out,
                      char *err, size_t errlen)
{
    nbody_particle *a = NULL;
    size_t n = 0;
    int rc = read_lines(fp, name, box, &a, &n, err, errlen);
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "%s: no particles", name);
        rc = -1;
    }
    if (rc == 0) {
        nbody_sort_by_id(a, n);
        long long dup = first_duplicate(a, n);
        if (dup >= 0) {
            snprintf(err, errlen, "%s: particle id %lld appears twice", name, dup);
            rc = -1;
        }
    }
    if (rc != 0) {
        free(a);
        return -1;
    }
    *out = a;
    *n_out = n;
    return 0;
}

int nbody_read(const char *path, double box, nbody_particle **out, size_t *n_out, char *err,
               size_t errlen)
{
    FILE *fp = app_fopen_regular(path, err, errlen);
    if (!fp) return -1;
    int rc = nbody_read_stream(fp, path, box, out, n_out, err, errlen);
    fclose(fp);
    return rc;
}

nbody_particle *nbody_generate(size_t n, double box, double vmax, uint64_t seed)
{
    nbody_particle *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return NULL;
    double mean[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        p[i].id = i;
        for (int k = 0; k < 3; k++) {
            double x = box * tess_rng_unit(seed, (uint64_t)k, i);
            p[i].x[k] = x < box ? x : 0.0;
            p[i].v[k] = vmax * (2.0 * tess_rng_unit(seed, (uint64_t)k + 3, i) - 1.0);
            mean[k] += p[i].v[k];
        }
    }
    for (int k = 0; k < 3 && n > 0; k++) mean[k] /= (double)n;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) p[i].v[k] -= mean[k];
    return p;
}

int nbody_write(FILE *fp, const nbody_particle *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fprintf(fp, "%llu %.17g %.17g %.17g %.17g %.17g %.17g\n", (unsigned long long)p[i].id,
                    p[i].x[0], p[i].x[1], p[i].x[2], p[i].v[0], p[i].v[1], p[i].v[2]) < 0)
            return -1;
    return 0;
}
