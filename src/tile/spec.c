/*
 * spec.c — the --processors and --policy specs of the tiles face, and the
 * work area a job has under a policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile/tile_internal.h"

static int parse_count(const char *s, char **end, long min, long max, long *out)
{
    errno = 0;
    long v = strtol(s, end, 10);
    if (errno != 0 || *end == s || v < min || v > max) return -1;
    *out = v;
    return 0;
}

#define TILE_MIN_FRACTION 1e-3

static int parse_fraction(const char *s, char **end, double *out)
{
    errno = 0;
    double v = strtod(s, end);
    /* at most 1000 times slower: cpu@1e-300 slept practically forever */
    if (errno != 0 || *end == s || !(v >= TILE_MIN_FRACTION && v <= 1.0)) return -1;
    *out = v;
    return 0;
}

/* "cpu", "cpu*N", "cpu@F", "cpu@F/S" from s; *count processors of *one. */
static int parse_cpu(const char *s, const char *end, tess__tile_proc_spec *one, long *count)
{
    char *e = (char *)s + 3;
    *one = (tess__tile_proc_spec){.kind = TESS_TILE_CPU, .frac = 1.0};
    *count = 1;
    if (e < end && *e == '*') {
        if (parse_count(e + 1, &e, 1, TILE_MAX_PROCS, count) != 0) return -1;
    } else if (e < end && *e == '@') {
        if (parse_fraction(e + 1, &e, &one->frac) != 0) return -1;
        if (e < end && *e == '/') {
            errno = 0;
            char *f;
            one->after_s = strtod(e + 1, &f);
            if (errno != 0 || f == e + 1 || !(one->after_s >= 0 && one->after_s < 1e6)) return -1;
            e = f;
        }
    }
    if (e != end) return -1;
    snprintf(one->text, sizeof one->text, "%.*s", (int)(end - s), s);
    return 0;
}

/* "opencl", "opencl:N", "cuda", "cuda:N". */
static int parse_device(const char *s, const char *end, tess__tile_proc_spec *one)
{
    size_t n = strncmp(s, "opencl", 6) == 0 ? 6 : 4;
    *one = (tess__tile_proc_spec){.kind = n == 6 ? TESS_TILE_OPENCL : TESS_TILE_CUDA, .frac = 1.0};
    char *e = (char *)s + n;
    long dev = 0;
    if (e < end && *e == ':' && parse_count(e + 1, &e, 0, 63, &dev) != 0) return -1;
    if (e != end) return -1;
    one->device = (int)dev;
    snprintf(one->text, sizeof one->text, "%.*s", (int)(end - s), s);
    return 0;
}

static int parse_one(const char *s, const char *end, tess__tile_proc_spec *one, long *count)
{
    *count = 1;
    if (end - s >= 3 && strncmp(s, "cpu", 3) == 0) return parse_cpu(s, end, one, count);
    if ((end - s >= 6 && strncmp(s, "opencl", 6) == 0) ||
        (end - s >= 4 && strncmp(s, "cuda", 4) == 0))
        return parse_device(s, end, one);
    return -1;
}

static int default_cpus(tess__tile_proc_spec *out, int *n)
{
    long cores = tess__usable_cores();
    if (cores > TILE_MAX_PROCS) cores = TILE_MAX_PROCS;
    for (long i = 0; i < cores; i++)
        out[i] = (tess__tile_proc_spec){.kind = TESS_TILE_CPU, .frac = 1.0};
    for (long i = 0; i < cores; i++) snprintf(out[i].text, sizeof out[i].text, "cpu");
    *n = (int)cores;
    return TESS_OK;
}

int tess__tile_parse_processors(tess_ctx *ctx, const char *spec, tess__tile_proc_spec *out, int *n)
{
    if (spec == NULL || *spec == '\0') return default_cpus(out, n);
    *n = 0;
    for (const char *s = spec; *s;) {
        const char *end = strchr(s, '+');
        if (end == NULL) end = s + strlen(s);
        tess__tile_proc_spec one;
        long count;
        TESS_RETURN_IF(ctx, parse_one(s, end, &one, &count) != 0, TESS_ERR_INVAL,
                       "processors '%s': cannot read '%.*s' (expected cpu, cpu*N, cpu@F, "
                       "cpu@F/S with F in [0.001, 1], opencl[:N] or cuda[:N], joined with '+')",
                       spec, (int)(end - s), s);
        TESS_RETURN_IF(ctx, *n + count > TILE_MAX_PROCS, TESS_ERR_INVAL,
                       "processors '%s': more than %d processors on one rank", spec,
                       TILE_MAX_PROCS);
        for (long i = 0; i < count; i++) {
            out[*n] = one;
            if (count > 1) snprintf(out[*n].text, sizeof out[*n].text, "cpu");
            (*n)++;
        }
        s = *end ? end + 1 : end;
        TESS_RETURN_IF(ctx, *end && *s == '\0', TESS_ERR_INVAL,
                       "processors '%s': nothing after the last '+'", spec);
    }
    return TESS_OK;
}

/* "123" cells or "AxB[xC[xD]]" extents. */
static int parse_size(const char *s, int ndims, tess__tile_policy_spec *out)
{
    char *e;
    long v;
    if (parse_count(s, &e, 1, (long)(INT64_MAX / 2), &v) != 0) return -1;
    if (*e == '\0') {
        out->cells = (uint64_t)v;
        return 0;
    }
    out->nbox = 0;
    out->cells = 1;
    for (;;) {
        if (out->nbox == TESS_TILE_MAX_DIMS || out->cells > (UINT64_C(1) << 62) / (uint64_t)v)
            return -1;
        out->box[out->nbox++] = v;
        out->cells *= (uint64_t)v;
        if (*e == '\0') break;
        if (*e != 'x' || parse_count(e + 1, &e, 1, (long)(INT64_MAX / 2), &v) != 0) return -1;
    }
    return out->nbox == ndims ? 0 : -2;
}

int tess__tile_parse_policy(tess_ctx *ctx, const char *spec, int ndims, tess__tile_policy_spec *out)
{
    *out = (tess__tile_policy_spec){.kind = TILE_APC};
    if (spec == NULL || strcmp(spec, "apc") == 0) return TESS_OK;
    if (strcmp(spec, "capc") == 0) { /* the centralised APC (policy_central.c) */
        out->kind = TILE_CAPC;
        return TESS_OK;
    }
    static const struct {
        const char *name;
        tess__tile_policy_kind kind;
    } names[] = {{"dd:", TILE_DD}, {"static:", TILE_STATIC}, {"ws:", TILE_WS}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].name);
        if (strncmp(spec, names[i].name, n) != 0) continue;
        out->kind = names[i].kind;
        int rc = parse_size(spec + n, ndims, out);
        TESS_RETURN_IF(ctx, rc == -2, TESS_ERR_INVAL,
                       "policy '%s': the tile box has %d extents, the area %d dimensions", spec,
                       out->nbox, ndims);
        TESS_RETURN_IF(ctx, rc != 0, TESS_ERR_INVAL,
                       "policy '%s': SIZE must be a cell count or a box AxB[xC[xD]] of "
                       "positive extents",
                       spec);
        return TESS_OK;
    }
    return tess__fail(ctx, TESS_ERR_INVAL,
                      "policy '%s': expected apc, capc, dd:SIZE, static:SIZE or ws:SIZE", spec);
}

static int64_t clamp_extent(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* A cell count lies between the plan's smallest and largest tile: the
 * fewest and most rows of the widest cross-section (tess__tile_area_max_cross). */
static int fit_cells(const tess_tile_job *job, tess__tile_policy_spec *pol)
{
    uint64_t cross = 1;
    for (int d = 1; d < job->ndims; d++)
        cross *= (uint64_t)clamp_extent(job->max_tile[d], 1, job->extent[d]);
    int64_t most_rows = clamp_extent(job->max_tile[0], job->min_tile[0], job->extent[0]);
    uint64_t least = cross * (uint64_t)job->min_tile[0], most = cross * (uint64_t)most_rows;
    uint64_t cells = pol->cells < least ? least : pol->cells > most ? most : pol->cells;
    int moved = cells != pol->cells;
    pol->cells = cells;
    return moved;
}

/* The job's bounds are the kernel's contract (whole rows, a stencil's
 * width): a fixed tile outside them is moved inside, not obeyed. */
int tess__tile_policy_fit(const tess_tile_job *job, tess__tile_policy_spec *pol)
{
    if (pol->kind == TILE_APC || pol->kind == TILE_CAPC) return 0;
    if (pol->nbox == 0) return fit_cells(job, pol);
    int moved = 0;
    pol->cells = 1;
    for (int d = 0; d < pol->nbox && d < job->ndims; d++) {
        int64_t v = clamp_extent(pol->box[d], job->min_tile[d], job->max_tile[d]);
        moved |= v != pol->box[d];
        pol->box[d] = v;
        pol->cells *= (uint64_t)v;
    }
    return moved;
}

int tess__tile_job_area(tess_ctx *ctx, const tess_tile_job *job, const tess__tile_policy_spec *pol,
                        tess__tile_area *area)
{
    TESS_RETURN_IF(ctx, job->ndims < 1 || job->ndims > TESS_TILE_MAX_DIMS, TESS_ERR_INVAL,
                   "tile job '%s': %d dimensions (1 to %d)", job->name, job->ndims,
                   TESS_TILE_MAX_DIMS);
    int64_t min[TESS_TILE_MAX_DIMS], max[TESS_TILE_MAX_DIMS];
    for (int d = 0; d < job->ndims; d++) {
        TESS_RETURN_IF(ctx, job->extent[d] < 1, TESS_ERR_INVAL,
                       "tile job '%s': the area is empty (extent %lld in dimension %d)", job->name,
                       (long long)job->extent[d], d);
        TESS_RETURN_IF(ctx, job->min_tile[d] < 1 || job->min_tile[d] > job->max_tile[d],
                       TESS_ERR_INVAL,
                       "tile job '%s': dimension %d: the minimum tile extent %lld is not between "
                       "1 and the maximum %lld",
                       job->name, d, (long long)job->min_tile[d], (long long)job->max_tile[d]);
        min[d] = job->min_tile[d];
        max[d] = job->max_tile[d];
        if (pol->nbox > 0 && d > 0) /* a fixed box sets the tiles' shape (its extents fitted) */
            min[d] = max[d] = pol->box[d];
        else if (pol->nbox > 0) max[d] = pol->box[d];
    }
    int rc = tess__tile_area_init(area, job->ndims, job->extent, min, max);
    TESS_RETURN_IF(ctx, rc != TESS_OK, TESS_ERR_INVAL, "tile job '%s': bad area", job->name);
    return TESS_OK;
}

int tess_tile_count_processors(const char *spec)
{
    tess__tile_proc_spec p[TILE_MAX_PROCS];
    int n = 0;
    return tess__tile_parse_processors(NULL, spec, p, &n) == TESS_OK ? n : TESS_ERR_INVAL;
}
