/*
 * latency.c — the latency model: the --jitter spec parser and formatter, the
 * stateless per-message delay, and the per-link state that keeps a link FIFO
 * and serialises its bytes (docs/latency.md).
 *
 * Random numbers come from the counter-based generator of rng.h keyed by
 * (seed, link, sequence number), never from a shared stream, so a delay does
 * not depend on which thread asked first.  The transforms use libm log, exp,
 * sqrt and cos: this module is not on the bitwise-reproducible STEP path, and
 * the same binary on the same machine still gives the same delays.
 */
#include "tick/latency.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/rng.h"
#include "tessera/tessera.h"

/* Counters of the draws of one message: counter = seq * DRAWS_PER_MESSAGE + j.
 * Spare slots let a later component draw without shifting the others. */
enum {
    DRAW_NORMAL_RADIUS = 0,
    DRAW_NORMAL_ANGLE = 1,
    DRAW_SPIKE_COIN = 2,
    DRAW_SPIKE_SIZE = 3,
    DRAWS_PER_MESSAGE = 8
};

/* Stall schedules use streams with the top bit set; link streams
 * (src << 32 | dst, src < 2^31) never have it. */
#define STALL_STREAM_BIT (UINT64_C(1) << 63)

#define MAX_US 1e12
#define PI 3.14159265358979323846

/* ------------------------------------------------------------------ presets */

typedef struct preset {
    const char *name;
    tess__latency_spec spec;
} preset;

static const preset presets[] = {
    {"cloud", {TESS__LATENCY_LOGNORMAL, 0, 250, 0.4, 0.02, 2000, 1.5, 100000, 100, 0, 0, {0}}},
    {"ec2-2011", {TESS__LATENCY_LOGNORMAL, 0, 250, 0.4, 0.02, 2000, 1.5, 100000, 100, 0, 0, {0}}},
    {"modern", {TESS__LATENCY_LOGNORMAL, 0, 100, 0.3, 0.005, 1000, 1.5, 100000, 1250, 0, 0, {0}}},
};

/* ------------------------------------------------------------ parser pieces */

/* The keys of the lognormal form, with the range each value must fall in. */
typedef struct key_def {
    const char *name;
    size_t offset; /* of the double in tess__latency_spec */
    double min;
    int min_excluded; /* 1: value must be > min */
    double max;
} key_def;

enum {
    KEY_MEDIAN,
    KEY_SIGMA,
    KEY_SPIKE_P,
    KEY_SPIKE_XM,
    KEY_SPIKE_ALPHA,
    KEY_SPIKE_CAP,
    KEY_BW,
    KEY_STALL_RATE,
    KEY_STALL_MEAN,
    KEY_COUNT
};

#define KEY(name, field, min, excl, max)                          \
    {                                                             \
        name, offsetof(tess__latency_spec, field), min, excl, max \
    }

static const key_def keys[KEY_COUNT] = {
    KEY("median", median_us, 0, 1, MAX_US),
    KEY("sigma", sigma, 0, 0, 20),
    KEY("spike_p", spike_p, 0, 0, 1),
    KEY("spike_xm", spike_xm_us, 0, 1, MAX_US),
    KEY("spike_alpha", spike_alpha, 0, 1, 1e6),
    KEY("spike_cap", spike_cap_us, 0, 1, MAX_US),
    KEY("bw", bw_mbps, 1e-6, 0, 1e12),
    KEY("stall_rate", stall_rate_per_s, 0, 0, 1e6),
    KEY("stall_mean", stall_mean_us, 0, 1, MAX_US),
};

#define BIT(k) (1u << (k))
#define SPIKE_KEYS \
    (BIT(KEY_SPIKE_P) | BIT(KEY_SPIKE_XM) | BIT(KEY_SPIKE_ALPHA) | BIT(KEY_SPIKE_CAP))
#define STALL_KEYS (BIT(KEY_STALL_RATE) | BIT(KEY_STALL_MEAN))

/* A piece of the spec text (not NUL-terminated). */
typedef struct span {
    const char *p;
    size_t n;
} span;

static int span_is(span s, const char *word)
{
    return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}

/* s quoted for an error message: at most 40 characters, anything that is not
 * printable ASCII shown as '?', so the message stays one line. */
static const char *quoted(span s, char *buf, size_t buflen)
{
    size_t n = s.n < 40 ? s.n : 40;
    size_t i;
    for (i = 0; i < n && i + 1 < buflen; i++) {
        unsigned char c = (unsigned char)s.p[i];
        buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    buf[i] = '\0';
    if (s.n > n && i + 4 < buflen) memcpy(buf + i, "...", 4);
    return buf;
}

static int fail(tess_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tess__vfail(ctx, TESS_ERR_INVAL, fmt, ap);
    va_end(ap);
    return TESS_ERR_INVAL;
}

/* A plain decimal: [+-]digits[.digits][(e|E)[+-]digits], at least one digit
 * before the exponent.  strtod alone would also take "inf", "nan", hex and
 * leading blanks, none of which belong on a command line. */
static int is_decimal(span s)
{
    size_t i = 0, digits = 0;
    if (i < s.n && (s.p[i] == '+' || s.p[i] == '-')) i++;
    for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) digits++;
    if (i < s.n && s.p[i] == '.')
        for (i++; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) digits++;
    if (digits == 0) return 0;
    if (i < s.n && (s.p[i] == 'e' || s.p[i] == 'E')) {
        size_t exp_digits = 0;
        i++;
        if (i < s.n && (s.p[i] == '+' || s.p[i] == '-')) i++;
        for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) exp_digits++;
        if (exp_digits == 0) return 0;
    }
    return i == s.n;
}

/* The number in s, in [min, max] (min excluded if asked); else an error
 * naming `what` under `profile`. */
static int parse_number(span s, const char *profile, const char *what, double min, int min_excluded,
                        double max, double *value_out, tess_ctx *ctx)
{
    char text[64], q[48];
    if (!is_decimal(s) || s.n >= sizeof text)
        return fail(ctx, "%s: %s must be a number, got '%s'", profile, what,
                    quoted(s, q, sizeof q));
    memcpy(text, s.p, s.n);
    text[s.n] = '\0';
    double v = strtod(text, NULL);
    if (min_excluded ? !(v > min) : !(v >= min))
        return fail(ctx, "%s: %s must be %s %g, got '%s'", profile, what,
                    min_excluded ? ">" : ">=", min, quoted(s, q, sizeof q));
    if (!(v <= max))
        return fail(ctx, "%s: %s must be <= %g, got '%s'", profile, what, max,
                    quoted(s, q, sizeof q));
    *value_out = v;
    return 0;
}

static const key_def *find_key(span name)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (span_is(name, keys[k].name)) return &keys[k];
    return NULL;
}

static double *key_field(tess__latency_spec *s, const key_def *k)
{
    return (double *)((char *)s + k->offset);
}

static double key_value(const tess__latency_spec *s, const key_def *k)
{
    return *(const double *)((const char *)s + k->offset);
}

/* One KEY=VALUE; seen collects the keys given so far. */
static int parse_param(span param, const char *profile, tess__latency_spec *s, unsigned *seen,
                       tess_ctx *ctx)
{
    char q[48];
    const char *eq = memchr(param.p, '=', param.n);
    if (param.n == 0) return fail(ctx, "%s: empty parameter (expected KEY=VALUE)", profile);
    if (eq == NULL)
        return fail(ctx, "%s: expected KEY=VALUE, got '%s'", profile, quoted(param, q, sizeof q));
    span name = {param.p, (size_t)(eq - param.p)};
    span value = {eq + 1, param.n - name.n - 1};
    const key_def *k = find_key(name);
    if (k == NULL)
        return fail(ctx,
                    "%s: unknown key '%s' (expected median, sigma, spike_p, "
                    "spike_xm, spike_alpha, spike_cap, bw, stall_rate or stall_mean)",
                    profile, quoted(name, q, sizeof q));
    unsigned bit = BIT(k - keys);
    if (*seen & bit) return fail(ctx, "%s: %s given twice", profile, k->name);
    *seen |= bit;
    return parse_number(value, profile, k->name, k->min, k->min_excluded, k->max, key_field(s, k),
                        ctx);
}

/* A component's keys come all together or not at all (for a preset, the
 * preset already holds them). */
static int check_group(unsigned have, unsigned group, const char *profile, tess_ctx *ctx)
{
    if ((have & group) == 0 || (have & group) == group) return 0;
    for (int k = 0; k < KEY_COUNT; k++)
        if ((group & BIT(k)) && !(have & BIT(k)))
            for (int g = 0; g < KEY_COUNT; g++)
                if (have & group & BIT(g))
                    return fail(ctx, "%s: %s is required with %s", profile, keys[k].name,
                                keys[g].name);
    return 0;
}

static int check_lognormal(const tess__latency_spec *s, unsigned have, const char *profile,
                           tess_ctx *ctx)
{
    if (!(have & BIT(KEY_MEDIAN))) return fail(ctx, "%s: median is required", profile);
    if (!(have & BIT(KEY_SIGMA))) return fail(ctx, "%s: sigma is required", profile);
    int rc = check_group(have, SPIKE_KEYS, profile, ctx);
    if (rc == 0) rc = check_group(have, STALL_KEYS, profile, ctx);
    if (rc == 0 && (have & SPIKE_KEYS) && s->spike_cap_us < s->spike_xm_us)
        rc = fail(ctx, "%s: spike_cap must be >= spike_xm (%g), got %g", profile, s->spike_xm_us,
                  s->spike_cap_us);
    return rc;
}

/* Switched-off components get all-zero fields (the canonical form). */
static void canonicalise(tess__latency_spec *s)
{
    if (s->spike_p == 0) { /* also turns -0 into 0 */
        s->spike_p = 0;
        s->spike_xm_us = 0;
        s->spike_alpha = 0;
        s->spike_cap_us = 0;
    }
    if (s->stall_rate_per_s == 0) {
        s->stall_rate_per_s = 0;
        s->stall_mean_us = 0;
    }
}

/* The lognormal form or a preset with overrides: params is the text after
 * ':', possibly empty. */
static int parse_lognormal(span params, const char *profile, const preset *base,
                           tess__latency_spec *s, tess_ctx *ctx)
{
    unsigned seen = 0, have = 0;
    memset(s, 0, sizeof *s);
    s->kind = TESS__LATENCY_LOGNORMAL;
    if (base != NULL) {
        *s = base->spec;
        have = BIT(KEY_MEDIAN) | BIT(KEY_SIGMA) | SPIKE_KEYS | BIT(KEY_BW);
    }
    const char *p = params.p, *end = params.p + params.n;
    while (params.n > 0) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        span param = {p, (size_t)((comma != NULL ? comma : end) - p)};
        int rc = parse_param(param, profile, s, &seen, ctx);
        if (rc != 0) return rc;
        if (comma == NULL) break;
        p = comma + 1;
        if (p == end) return fail(ctx, "%s: empty parameter (expected KEY=VALUE)", profile);
    }
    int rc = check_lognormal(s, have | seen, profile, ctx);
    if (rc == 0) canonicalise(s);
    return rc;
}

static int parse_fixed(span params, tess__latency_spec *s, tess_ctx *ctx)
{
    memset(s, 0, sizeof *s);
    s->kind = TESS__LATENCY_FIXED;
    if (params.n == 0) return fail(ctx, "fixed: missing delay (expected fixed:US)");
    return parse_number(params, "fixed", "delay", 0, 0, MAX_US, &s->fixed_us, ctx);
}

/* quantiles:Q0,...,Q31: a measured profile written out. */
static int parse_quantiles(span params, tess__latency_spec *s, tess_ctx *ctx)
{
    memset(s, 0, sizeof *s);
    s->kind = TESS__LATENCY_QUANTILES;
    const char *p = params.p, *end = params.p + params.n;
    for (int i = 0; i < TESS__LATENCY_QUANTILES_N; i++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        span value = {p, (size_t)((comma != NULL ? comma : end) - p)};
        char what[32];
        snprintf(what, sizeof what, "value %d", i + 1);
        double floor_us = i > 0 ? s->quantile_us[i - 1] : 0;
        int rc =
            parse_number(value, "quantiles", what, floor_us, 0, MAX_US, &s->quantile_us[i], ctx);
        if (rc != 0) return rc;
        if ((comma == NULL) != (i == TESS__LATENCY_QUANTILES_N - 1))
            return fail(ctx, "quantiles: expected %d non-decreasing delays in microseconds",
                        TESS__LATENCY_QUANTILES_N);
        p = comma != NULL ? comma + 1 : end;
    }
    return 0;
}

int tess__latency_parse(const char *text, tess__latency_spec *out, tess_ctx *ctx)
{
    char q[48];
    if (text == NULL || text[0] == '\0')
        return fail(ctx, "missing profile (expected none, fixed:US, "
                         "lognormal:median=US,sigma=S,..., cloud, ec2-2011, modern or trace:FILE)");
    const char *colon = strchr(text, ':');
    span name = {text, colon != NULL ? (size_t)(colon - text) : strlen(text)};
    span params = {colon != NULL ? colon + 1 : text + name.n, 0};
    params.n = strlen(params.p);
    tess__latency_spec s;
    int rc;
    if (span_is(name, "none")) {
        if (colon != NULL)
            return fail(ctx, "none: takes no parameters, got '%s'", quoted(params, q, sizeof q));
        memset(&s, 0, sizeof s);
        s.kind = TESS__LATENCY_NONE;
        rc = 0;
    } else if (span_is(name, "fixed")) {
        rc = parse_fixed(params, &s, ctx);
    } else if (span_is(name, "lognormal")) {
        rc = parse_lognormal(params, "lognormal", NULL, &s, ctx);
    } else if (span_is(name, "quantiles")) {
        rc = parse_quantiles(params, &s, ctx);
    } else {
        const preset *base = NULL;
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
            if (span_is(name, presets[i].name)) base = &presets[i];
        if (base == NULL)
            return fail(ctx,
                        "unknown profile '%s' (expected none, fixed:US, "
                        "lognormal:median=US,sigma=S,..., cloud, ec2-2011, modern or "
                        "trace:FILE)",
                        quoted(name, q, sizeof q));
        rc = parse_lognormal(params, base->name, base, &s, ctx);
    }
    if (rc == 0) *out = s;
    return rc;
}

int tess__latency_spec_equal(const tess__latency_spec *a, const tess__latency_spec *b)
{
    return a->kind == b->kind && a->fixed_us == b->fixed_us && a->median_us == b->median_us &&
           a->sigma == b->sigma && a->spike_p == b->spike_p && a->spike_xm_us == b->spike_xm_us &&
           a->spike_alpha == b->spike_alpha && a->spike_cap_us == b->spike_cap_us &&
           a->bw_mbps == b->bw_mbps && a->stall_rate_per_s == b->stall_rate_per_s &&
           a->stall_mean_us == b->stall_mean_us &&
           memcmp(a->quantile_us, b->quantile_us, sizeof a->quantile_us) == 0;
}

/* ---------------------------------------------------------------- formatter */

/* The shortest text that reads back as exactly v; whole numbers without an
 * exponent ("250", not "2.5e+02"). */
static void format_number(double v, char *buf, size_t len)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, len, "%.0f", v);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* Append ",KEY=VALUE" (or "KEY=VALUE" at the start of the parameters). */
static void append_key(char *text, size_t size, int key, const tess__latency_spec *s)
{
    char number[40];
    size_t used = strlen(text);
    format_number(key_value(s, &keys[key]), number, sizeof number);
    snprintf(text + used, size - used, "%s%s=%s", text[used - 1] == ':' ? "" : ",", keys[key].name,
             number);
}

int tess__latency_format(const tess__latency_spec *s, char *buf, size_t len)
{
    char text[TESS__LATENCY_FORMAT_MAX], number[40];
    switch (s->kind) {
    case TESS__LATENCY_NONE: snprintf(text, sizeof text, "none"); break;
    case TESS__LATENCY_FIXED:
        format_number(s->fixed_us, number, sizeof number);
        snprintf(text, sizeof text, "fixed:%s", number);
        break;
    case TESS__LATENCY_QUANTILES:
        snprintf(text, sizeof text, "quantiles");
        for (int i = 0; i < TESS__LATENCY_QUANTILES_N; i++) {
            size_t used = strlen(text);
            format_number(s->quantile_us[i], number, sizeof number);
            snprintf(text + used, sizeof text - used, "%c%s", i ? ',' : ':', number);
        }
        break;
    default:
        snprintf(text, sizeof text, "lognormal:");
        append_key(text, sizeof text, KEY_MEDIAN, s);
        append_key(text, sizeof text, KEY_SIGMA, s);
        if (s->spike_p > 0)
            for (int k = KEY_SPIKE_P; k <= KEY_SPIKE_CAP; k++) append_key(text, sizeof text, k, s);
        if (s->bw_mbps > 0) append_key(text, sizeof text, KEY_BW, s);
        if (s->stall_rate_per_s > 0) {
            append_key(text, sizeof text, KEY_STALL_RATE, s);
            append_key(text, sizeof text, KEY_STALL_MEAN, s);
        }
        break;
    }
    if (len == 0) return TESS_ERR_INVAL;
    int n = snprintf(buf, len, "%s", text);
    return n >= 0 && (size_t)n < len ? 0 : TESS_ERR_INVAL;
}

/* -------------------------------------------------------- stateless delays */

static uint64_t link_stream(int src, int dst)
{
    return (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
}

static double message_draw(uint64_t seed, uint64_t stream, uint64_t seq, unsigned j)
{
    return tess_rng_unit(seed, stream, seq * DRAWS_PER_MESSAGE + j);
}

/* Box–Muller; 1 - u is in (0, 1], so the logarithm is finite. */
static double standard_normal(uint64_t seed, uint64_t stream, uint64_t seq)
{
    double u = message_draw(seed, stream, seq, DRAW_NORMAL_RADIUS);
    double v = message_draw(seed, stream, seq, DRAW_NORMAL_ANGLE);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * PI * v);
}

/* Inverse CDF of Pareto(xm, alpha), capped; an overflow to infinity (tiny
 * alpha) is caught by the cap. */
static double capped_pareto(const tess__latency_spec *s, double u)
{
    double x = s->spike_xm_us * pow(1.0 - u, -1.0 / s->spike_alpha);
    return x < s->spike_cap_us ? x : s->spike_cap_us;
}

void tess__latency_sample_parts(const tess__latency_spec *s, uint64_t seed, int src, int dst,
                                uint64_t seq, size_t bytes, tess__latency_parts *parts_out)
{
    tess__latency_parts parts = {0, 0, 0};
    uint64_t stream = link_stream(src, dst);
    if (s->kind == TESS__LATENCY_FIXED) {
        parts.base_us = s->fixed_us;
    } else if (s->kind == TESS__LATENCY_LOGNORMAL) {
        parts.base_us = s->median_us * exp(s->sigma * standard_normal(seed, stream, seq));
        if (s->spike_p > 0 && message_draw(seed, stream, seq, DRAW_SPIKE_COIN) < s->spike_p)
            parts.spike_us = capped_pareto(s, message_draw(seed, stream, seq, DRAW_SPIKE_SIZE));
        if (s->bw_mbps > 0) parts.size_us = (double)bytes / s->bw_mbps; /* 1 MB/s is 1 byte/µs */
    } else if (s->kind == TESS__LATENCY_QUANTILES) { /* measured at its size: no size term */
        parts.base_us = tess__latency_quantile_draw(s, message_draw(seed, stream, seq, 0));
    }
    *parts_out = parts;
}

double tess__latency_sample_delay(const tess__latency_spec *s, uint64_t seed, int src, int dst,
                                  uint64_t seq, size_t bytes)
{
    tess__latency_parts parts;
    tess__latency_sample_parts(s, seed, src, dst, seq, bytes, &parts);
    return parts.base_us + parts.spike_us + parts.size_us;
}

/* ------------------------------------------------------------------- model */

typedef struct latency_link {
    uint64_t seq;            /* of the next message */
    double last_delivery_us; /* of the previous message; -inf before the first */
} latency_link;

/* Where an endpoint's stall schedule was last read: stall `index` covers
 * [stall_start, stall_end), and the endpoint ran during [run_start,
 * stall_start) before it. */
typedef struct stall_cursor {
    uint64_t index;
    double run_start, stall_start, stall_end;
} stall_cursor;

struct tess__latency {
    tess__latency_spec spec;
    uint64_t seed;
    int endpoints;
    int sender;           /* >= 0: a model of this sender's links only */
    latency_link *links;  /* endpoints × endpoints, row src (one row for a sender) */
    stall_cursor *stalls; /* per endpoint (one for a sender) */
};

/* Index of src's row and stall cursor: a sender's model holds only its own. */
static size_t row_of(const tess__latency *m, int src) { return m->sender >= 0 ? 0 : (size_t)src; }

static double stall_draw_exp(const tess__latency *m, int endpoint, uint64_t counter, double mean)
{
    double u = tess_rng_unit(m->seed, STALL_STREAM_BIT | (uint32_t)endpoint, counter);
    return -mean * log(1.0 - u);
}

/* Stall i of an endpoint starts an Exp(1/rate) running time after stall i-1
 * ends (after time 0 for i = 0) and lasts Exp(mean). */
static void stall_cursor_set(const tess__latency *m, int endpoint, stall_cursor *c, uint64_t index,
                             double run_start)
{
    c->index = index;
    c->run_start = run_start;
    c->stall_start =
        run_start + stall_draw_exp(m, endpoint, 2 * index, 1e6 / m->spec.stall_rate_per_s);
    c->stall_end =
        c->stall_start + stall_draw_exp(m, endpoint, 2 * index + 1, m->spec.stall_mean_us);
}

/* Send times from one endpoint mostly increase, so the cursor moves forward
 * a step at a time; a time before it restarts the walk from stall 0, which
 * recomputes the same sums in the same order. */
static double stall_release(tess__latency *m, int endpoint, double t)
{
    if (m->spec.stall_rate_per_s <= 0 || !(t >= 0) || isinf(t)) return t;
    stall_cursor *c = &m->stalls[row_of(m, endpoint)];
    if (t < c->run_start) stall_cursor_set(m, endpoint, c, 0, 0.0);
    while (t >= c->stall_end) stall_cursor_set(m, endpoint, c, c->index + 1, c->stall_end);
    return t >= c->stall_start ? c->stall_end : t;
}

static tess__latency *model_new(const tess__latency_spec *s, uint64_t seed, int endpoints,
                                int sender)
{
    size_t rows = sender >= 0 ? 1 : (size_t)endpoints;
    if (s == NULL || endpoints <= 0 || (size_t)endpoints > SIZE_MAX / sizeof(latency_link) / rows)
        return NULL;
    tess__latency *m = calloc(1, sizeof *m);
    if (m == NULL) return NULL;
    size_t n = (size_t)endpoints;
    m->links = malloc(rows * n * sizeof *m->links);
    m->stalls = malloc(rows * sizeof *m->stalls);
    if (m->links == NULL || m->stalls == NULL) {
        tess__latency_free(m);
        return NULL;
    }
    m->spec = *s;
    m->seed = seed;
    m->endpoints = endpoints;
    m->sender = sender;
    for (size_t i = 0; i < rows * n; i++) m->links[i] = (latency_link){0, -INFINITY};
    for (int e = 0; e < endpoints; e++)
        if (s->stall_rate_per_s > 0 && (sender < 0 || e == sender))
            stall_cursor_set(m, e, &m->stalls[row_of(m, e)], 0, 0.0);
    return m;
}

tess__latency *tess__latency_new(const tess__latency_spec *s, uint64_t seed, int endpoints)
{
    return model_new(s, seed, endpoints, -1);
}

tess__latency *tess__latency_new_sender(const tess__latency_spec *s, uint64_t seed, int endpoints,
                                        int sender)
{
    if (sender < 0 || sender >= endpoints) return NULL;
    return model_new(s, seed, endpoints, sender);
}

void tess__latency_free(tess__latency *m)
{
    if (m == NULL) return;
    free(m->links);
    free(m->stalls);
    free(m);
}

static int endpoint_ok(const tess__latency *m, int e) { return e >= 0 && e < m->endpoints; }

double tess__latency_stall_end(tess__latency *m, int endpoint, double t)
{
    assert(endpoint_ok(m, endpoint) && (m->sender < 0 || endpoint == m->sender));
    if (!endpoint_ok(m, endpoint) || (m->sender >= 0 && endpoint != m->sender)) return NAN;
    return stall_release(m, endpoint, t);
}

double tess__latency_deliver_at(tess__latency *m, int src, int dst, double send_time_us,
                                size_t bytes)
{
    assert(endpoint_ok(m, src) && endpoint_ok(m, dst) && (m->sender < 0 || src == m->sender));
    if (!endpoint_ok(m, src) || !endpoint_ok(m, dst) || (m->sender >= 0 && src != m->sender))
        return NAN;
    latency_link *link = &m->links[row_of(m, src) * (size_t)m->endpoints + (size_t)dst];
    tess__latency_parts parts;
    tess__latency_sample_parts(&m->spec, m->seed, src, dst, link->seq, bytes, &parts);
    double arrival = stall_release(m, src, send_time_us) + parts.base_us + parts.spike_us;
    /* The bytes cross the link only after the previous message's have. */
    double delivery =
        (arrival > link->last_delivery_us ? arrival : link->last_delivery_us) + parts.size_us;
    link->seq++;
    link->last_delivery_us = delivery;
    return delivery;
}
