/*
 * latency_trace.c — measured latency profiles for the tick face (issue 40,
 * docs/latency.md).  `--jitter trace:FILE` reads one-way delays measured on a
 * real network (what `tessera bench latency --profile` writes) and keeps
 * their distribution as 32 quantiles at fixed probabilities, denser in the
 * tail where the spikes are.  The spec stays plain data that every process
 * derives alike from the same file, and its canonical text
 * (`quantiles:Q0,...,Q31`) reproduces the model without the file.  A message's
 * delay inverts the piecewise-linear CDF through the quantiles at the
 * message's own random number, so a run stays a pure function of its seed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "latency.h"

const double tess__latency_quantile_p[TESS__LATENCY_QUANTILES_N] = {
    0.00, 0.05, 0.10,  0.15,  0.20,  0.25,   0.30,   0.35,   0.40,    0.45, 0.50,
    0.55, 0.60, 0.65,  0.70,  0.75,  0.80,   0.85,   0.90,   0.925,   0.95, 0.97,
    0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9998, 0.9999, 0.99999, 1.00};

#define TRACE_MAX_DELAYS 100000000 /* 800 MB of doubles: a trace, not a disk */
#define TRACE_MAX_US 1e12          /* the spec's own bound on a delay */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tess__latency_quantiles_of(double *delays, size_t n, tess__latency_spec *out)
{
    qsort(delays, n, sizeof *delays, cmp_double);
    memset(out, 0, sizeof *out);
    out->kind = TESS__LATENCY_QUANTILES;
    for (int i = 0; i < TESS__LATENCY_QUANTILES_N; i++) {
        double pos = tess__latency_quantile_p[i] * (double)(n - 1);
        size_t lo = (size_t)pos;
        size_t hi = lo + 1 < n ? lo + 1 : lo;
        out->quantile_us[i] = delays[lo] + (pos - (double)lo) * (delays[hi] - delays[lo]);
    }
}

double tess__latency_quantile_draw(const tess__latency_spec *s, double u)
{
    const double *p = tess__latency_quantile_p, *q = s->quantile_us;
    int i = 0;
    while (i + 2 < TESS__LATENCY_QUANTILES_N && u >= p[i + 1]) i++;
    double f = (u - p[i]) / (p[i + 1] - p[i]);
    return q[i] + (f < 1 ? f : 1) * (q[i + 1] - q[i]);
}

/* One line of a trace: a delay, a blank or a comment.  1 with *delay set,
 * 0 for nothing, -1 when the line is not a delay. */
static int trace_line(char *line, double *delay)
{
    char *hash = strchr(line, '#');
    if (hash != NULL) *hash = '\0';
    char *p = line + strspn(line, " \t\r\n");
    if (*p == '\0') return 0;
    /* a plain decimal: no sign, inf, nan or hex */
    size_t len = strspn(p, "0123456789.eE+-");
    if (len == 0 || !((*p >= '0' && *p <= '9') || *p == '.')) return -1;
    if (p[len + strspn(p + len, " \t\r\n")] != '\0') return -1;
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end != p + len || errno != 0 || !(v >= 0 && v <= TRACE_MAX_US)) return -1;
    *delay = v;
    return 1;
}

static int push_delay(double **delays, size_t *n, size_t *cap, double v)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 1024;
        double *d = realloc(*delays, grown * sizeof *d);
        if (d == NULL) return -1;
        *delays = d;
        *cap = grown;
    }
    (*delays)[(*n)++] = v;
    return 0;
}

/* Every delay of the trace at path into *delays (n of them); a one-line
 * error naming the file and line. */
static int read_trace(FILE *fp, const char *path, double **delays, size_t *n, tess_ctx *ctx)
{
    char *line = NULL;
    size_t linecap = 0, cap = 0, lineno = 0;
    int rc = TESS_OK;
    while (rc == TESS_OK && getline(&line, &linecap, fp) >= 0) {
        double v;
        lineno++;
        int kind = strlen(line) > 200 ? -1 : trace_line(line, &v);
        if (kind < 0)
            rc = tess__fail(ctx, TESS_ERR_FORMAT,
                            "trace: %s:%zu: expected a delay in microseconds (0 to 1e12)", path,
                            lineno);
        else if (kind > 0 && (*n >= TRACE_MAX_DELAYS || push_delay(delays, n, &cap, v) != 0))
            rc = tess__fail(ctx, TESS_ERR_NOMEM, "trace: %s:%zu: too many delays", path, lineno);
    }
    if (rc == TESS_OK && ferror(fp))
        rc = tess__fail(ctx, TESS_ERR_IO, "trace: %s: %s", path, strerror(errno));
    if (rc == TESS_OK && *n == 0)
        rc = tess__fail(ctx, TESS_ERR_FORMAT, "trace: %s: no delays in the file", path);
    free(line);
    return rc;
}

static int load_trace(const char *path, tess__latency_spec *out, tess_ctx *ctx)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) return tess__fail(ctx, TESS_ERR_IO, "trace: %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        return tess__fail(ctx, TESS_ERR_IO, "trace: %s: not a regular file", path);
    }
    double *delays = NULL;
    size_t n = 0;
    int rc = read_trace(fp, path, &delays, &n, ctx);
    fclose(fp);
    if (rc == TESS_OK) tess__latency_quantiles_of(delays, n, out);
    free(delays);
    return rc;
}

int tess__latency_resolve(const char *text, tess__latency_spec *out, tess_ctx *ctx)
{
    if (text == NULL) text = "none";
    if (strncmp(text, "trace:", 6) != 0) return tess__latency_parse(text, out, ctx);
    if (text[6] == '\0') return tess__fail(ctx, TESS_ERR_INVAL, "trace: missing file (trace:FILE)");
    tess__latency_spec s;
    int rc = load_trace(text + 6, &s, ctx);
    if (rc == TESS_OK) *out = s;
    return rc == TESS_OK ? TESS_OK : TESS_ERR_INVAL;
}
