/*
 * latency.h — the latency model of the tick face's links (DESIGN §1, §6;
 * docs/latency.md).  A message from endpoint src to endpoint dst (workers or
 * ranks, small integers) is delayed by a lognormal base, with probability p a
 * capped Pareto spike, and its size over the link bandwidth.  Every random
 * number is a pure function of (seed, src, dst, sequence number on the link),
 * so a run is reproducible whatever the thread timing.  A link carries one
 * message at a time and never reorders.  Optional per-endpoint stalls model a
 * descheduled virtual machine: a message sent while its source is stalled
 * leaves when the stall ends.
 *
 * Private to the tick face (link.c applies it; the message layer adds no
 * delay, docs/latency.md).  A spec is plain data; a model
 * (tess__latency) keeps per-link state and no global state.
 */
#ifndef TESS_SRC_TICK_LATENCY_H
#define TESS_SRC_TICK_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include "core/internal.h"

typedef enum tess__latency_kind {
    TESS__LATENCY_NONE = 0,      /* zero delay, links still FIFO */
    TESS__LATENCY_FIXED = 1,     /* the same delay for every message */
    TESS__LATENCY_LOGNORMAL = 2, /* lognormal base, spikes, bandwidth, stalls */
    TESS__LATENCY_QUANTILES = 3  /* a measured distribution (latency_trace.c) */
} tess__latency_kind;

/* A measured profile is kept as its quantiles at these fixed probabilities
 * (tess__latency_quantile_p), denser in the tail where the spikes are. */
#define TESS__LATENCY_QUANTILES_N 32

/* Parsed parameters, in canonical form: a component that is switched off
 * has all its fields zero (spike_cap_us too), so two specs describe the same
 * model exactly when their fields are equal.  Times in microseconds. */
typedef struct tess__latency_spec {
    tess__latency_kind kind;
    double fixed_us;         /* FIXED */
    double median_us;        /* LOGNORMAL: median of the base delay, > 0 */
    double sigma;            /* LOGNORMAL: sigma of ln(base), >= 0 */
    double spike_p;          /* probability of a spike; 0: no spikes */
    double spike_xm_us;      /* Pareto scale (smallest spike) */
    double spike_alpha;      /* Pareto shape, > 0 (<= 1 allowed: the cap bounds it) */
    double spike_cap_us;     /* largest spike, >= spike_xm_us */
    double bw_mbps;          /* link bandwidth, 10^6 bytes/s; 0: no size term */
    double stall_rate_per_s; /* stalls begin at this rate per second of running; 0: none */
    double stall_mean_us;    /* mean stall duration */
    double quantile_us[TESS__LATENCY_QUANTILES_N]; /* QUANTILES: non-decreasing */
} tess__latency_spec;

/* Room for any text tess__latency_format writes. */
#define TESS__LATENCY_FORMAT_MAX 800

/* Parse a latency spec: none | fixed:US | lognormal:KEY=VALUE,... | cloud |
 * ec2-2011 | modern | quantiles:Q0,...,Q31 (a measured profile written out,
 * 32 non-decreasing delays at tess__latency_quantile_p); a preset may be
 * followed by ":KEY=VALUE,..." overriding its parameters (e.g.
 * "cloud:stall_rate=1,stall_mean=20000").  `trace:FILE` is not read here (no
 * I/O): see tess__latency_resolve.  Returns 0 and
 * fills *out, or TESS_ERR_INVAL with ctx's last error naming the bad field
 * ("lognormal: sigma must be >= 0, got '-1'"; ctx may be NULL) and *out
 * untouched.  No allocation; any thread. */
int tess__latency_parse(const char *text, tess__latency_spec *out, tess_ctx *ctx);

/* Whether two parsed specs are the same model (field by field: parsed specs
 * are canonical). */
int tess__latency_spec_equal(const tess__latency_spec *a, const tess__latency_spec *b);

/* The canonical text of s: "none", "fixed:US", the explicit lognormal form
 * (presets are spelled out) or "quantiles:...", which parses back to an equal spec.  Returns 0,
 * or TESS_ERR_INVAL if it does not fit in len bytes (buf then holds a
 * truncated, NUL-terminated prefix).  TESS__LATENCY_FORMAT_MAX always fits. */
int tess__latency_format(const tess__latency_spec *s, char *buf, size_t len);

/* The stateless delay of message seq on link (src, dst), in parts: the base,
 * the spike (0 if none) and the size term (bytes / bandwidth).  It is the
 * delay the message would see on an idle link from an endpoint that is not
 * stalled.  Pure function of its arguments; any thread. */
typedef struct tess__latency_parts {
    double base_us;
    double spike_us;
    double size_us;
} tess__latency_parts;

void tess__latency_sample_parts(const tess__latency_spec *s, uint64_t seed, int src, int dst,
                                uint64_t seq, size_t bytes, tess__latency_parts *parts_out);

/* base + spike + size of tess__latency_sample_parts. */
double tess__latency_sample_delay(const tess__latency_spec *s, uint64_t seed, int src, int dst,
                                  uint64_t seq, size_t bytes);

/* ---- measured profiles (latency_trace.c) ---- */

extern const double tess__latency_quantile_p[TESS__LATENCY_QUANTILES_N];

/* The spec a tick run's `jitter` option names: NULL means none; `trace:FILE`
 * reads FILE, one one-way delay in microseconds per line ('#' starts a
 * comment; what `tessera bench latency --profile` writes), into its
 * quantiles; anything else is tess__latency_parse's.  Errors name the file
 * and line ("trace: prof.txt:7: expected a delay in microseconds, got 'x'"). */
int tess__latency_resolve(const char *text, tess__latency_spec *out, tess_ctx *ctx);

/* The quantiles of n delays (sorted in place), n >= 1. */
void tess__latency_quantiles_of(double *delays, size_t n, tess__latency_spec *out);

/* The delay at probability u in [0, 1) of a QUANTILES spec: the inverse of
 * the piecewise-linear CDF through its quantiles. */
double tess__latency_quantile_draw(const tess__latency_spec *s, double u);

typedef struct tess__latency tess__latency;

/* A model for endpoints 0 .. endpoints-1 (every ordered pair is a link; a
 * self-link src == dst is an ordinary link).  Copies *s.  NULL if endpoints
 * is not positive or on out-of-memory.  Memory grows as endpoints². */
tess__latency *tess__latency_new(const tess__latency_spec *s, uint64_t seed, int endpoints);
/* The same model restricted to the links from `sender` (memory grows as
 * endpoints): its delivery times are those tess__latency_new's model gives
 * for that sender.  Each tick process keeps one for its own sends. */
tess__latency *tess__latency_new_sender(const tess__latency_spec *s, uint64_t seed, int endpoints,
                                        int sender);

/* Accepts NULL. */
void tess__latency_free(tess__latency *m);

/* The delivery time (µs, on the caller's clock, whose origin is also the
 * origin of the stall schedules) of the next message on link (src, dst), sent
 * at send_time_us with the given size:
 *
 *   depart_k   = end of the source's stall if it is stalled at send_time_us,
 *                else send_time_us
 *   deliver_k  = max(depart_k + base_k + spike_k, deliver_{k-1}) + bytes_k / bw
 *
 * so delivery times on a link never decrease and consecutive messages are at
 * least their size term apart.  Advances the link's sequence number.
 *
 * Threads: all calls with the same src (this one and tess__latency_stall_end
 * on that endpoint) must be serialised by the caller — in the tick face each
 * worker computes the delivery times of the messages it sends.  Calls with
 * different src may run concurrently without locking.  src and dst must be in
 * [0, endpoints) (asserted; NAN without assertions). */
double tess__latency_deliver_at(tess__latency *m, int src, int dst, double send_time_us,
                                size_t bytes);

/* When endpoint stops being stalled: t itself if it is not stalled at t,
 * else the end of the stall that covers t.  Costs O(1) amortised for
 * increasing t; walking the schedule takes time proportional to t × rate.
 * Same threading rule as
 * tess__latency_deliver_at with src = endpoint. */
double tess__latency_stall_end(tess__latency *m, int endpoint, double t);

#endif
