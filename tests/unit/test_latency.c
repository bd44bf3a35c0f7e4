/*
 * test_latency.c — the latency model: the --jitter parser on every profile,
 * every field and every kind of bad spec; the canonical format; determinism
 * per (seed, src, dst, seq); FIFO links that serialise their bytes; the
 * statistics of `cloud`; stalls; and the DESIGN's "simple model" — local
 * synchronisation on a 7×7 grid under `cloud` runs at about 15% of its
 * jitter-free throughput (the figure is printed; docs/latency.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tick/latency.h"
#include "core/internal.h"
#include "tessera/tessera.h"

static const char cloud_text[] = "lognormal:median=250,sigma=0.4,spike_p=0.02,spike_xm=2000,"
                                 "spike_alpha=1.5,spike_cap=100000,bw=100";

static tess__latency_spec parse_ok(const char *text)
{
    tess__latency_spec s;
    tess_ctx *ctx = tess__ctx_alloc(NULL);
    int rc = tess__latency_parse(text, &s, ctx);
    if (rc != 0) fail_msg("'%s' rejected: %s", text, tess_last_error(ctx));
    tess__ctx_free(ctx);
    return s;
}

static void assert_formats_as(const tess__latency_spec *s, const char *expected)
{
    char buf[TESS__LATENCY_FORMAT_MAX];
    assert_int_equal(tess__latency_format(s, buf, sizeof buf), 0);
    assert_string_equal(buf, expected);
    tess__latency_spec again = parse_ok(buf);
    assert_true(tess__latency_spec_equal(s, &again));
}

/* ------------------------------------------------------------------ parser */

static void test_parse_presets(void **state)
{
    (void)state;
    tess__latency_spec c = parse_ok("cloud");
    assert_int_equal(c.kind, TESS__LATENCY_LOGNORMAL);
    assert_true(c.median_us == 250 && c.sigma == 0.4 && c.spike_p == 0.02);
    assert_true(c.spike_xm_us == 2000 && c.spike_alpha == 1.5 && c.spike_cap_us == 100000);
    assert_true(c.bw_mbps == 100 && c.stall_rate_per_s == 0 && c.stall_mean_us == 0);
    assert_formats_as(&c, cloud_text);

    tess__latency_spec e = parse_ok("ec2-2011");
    assert_true(tess__latency_spec_equal(&c, &e));
    assert_true(tess__latency_spec_equal(&c, (tess__latency_spec[]){parse_ok(cloud_text)}));

    tess__latency_spec m = parse_ok("modern");
    assert_true(m.median_us == 100 && m.sigma == 0.3 && m.spike_p == 0.005);
    assert_true(m.spike_xm_us == 1000 && m.spike_alpha == 1.5 && m.spike_cap_us == 100000);
    assert_true(m.bw_mbps == 1250);
    assert_formats_as(&m, "lognormal:median=100,sigma=0.3,spike_p=0.005,spike_xm=1000,"
                          "spike_alpha=1.5,spike_cap=100000,bw=1250");
}

static void test_parse_none_and_fixed(void **state)
{
    (void)state;
    tess__latency_spec n = parse_ok("none");
    assert_int_equal(n.kind, TESS__LATENCY_NONE);
    assert_formats_as(&n, "none");

    tess__latency_spec f = parse_ok("fixed:150");
    assert_int_equal(f.kind, TESS__LATENCY_FIXED);
    assert_true(f.fixed_us == 150);
    assert_formats_as(&f, "fixed:150");
    f = parse_ok("fixed:0");
    assert_true(f.fixed_us == 0);
    f = parse_ok("fixed:2.5e3");
    assert_true(f.fixed_us == 2500);
    assert_formats_as(&f, "fixed:2500");
}

static void test_parse_every_field(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("lognormal:bw=50,stall_mean=3000,spike_cap=5e4,"
                                    "spike_alpha=0.8,sigma=0.25,spike_xm=700,"
                                    "stall_rate=0.5,median=120.5,spike_p=0.1");
    assert_int_equal(s.kind, TESS__LATENCY_LOGNORMAL);
    assert_true(s.median_us == 120.5);
    assert_true(s.sigma == 0.25);
    assert_true(s.spike_p == 0.1);
    assert_true(s.spike_xm_us == 700);
    assert_true(s.spike_alpha == 0.8); /* alpha <= 1 is allowed: the cap bounds it */
    assert_true(s.spike_cap_us == 50000);
    assert_true(s.bw_mbps == 50);
    assert_true(s.stall_rate_per_s == 0.5);
    assert_true(s.stall_mean_us == 3000);
    assert_formats_as(&s, "lognormal:median=120.5,sigma=0.25,spike_p=0.1,spike_xm=700,"
                          "spike_alpha=0.8,spike_cap=50000,bw=50,stall_rate=0.5,"
                          "stall_mean=3000");

    /* Minimal form; optional components off. */
    s = parse_ok("lognormal:median=80,sigma=0");
    assert_true(s.median_us == 80 && s.sigma == 0 && s.spike_p == 0 && s.bw_mbps == 0 &&
                s.stall_rate_per_s == 0 && s.spike_cap_us == 0);
    assert_formats_as(&s, "lognormal:median=80,sigma=0");

    /* A switched-off component is canonical: its other fields vanish. */
    s = parse_ok("lognormal:median=80,sigma=0,spike_p=0,spike_xm=5,spike_alpha=2,"
                 "spike_cap=9,stall_rate=0,stall_mean=7");
    assert_true(s.spike_xm_us == 0 && s.spike_alpha == 0 && s.spike_cap_us == 0 &&
                s.stall_mean_us == 0);
    assert_formats_as(&s, "lognormal:median=80,sigma=0");

    /* A value that needs all 17 digits survives the round trip. */
    s = parse_ok("lognormal:median=0.1000000000000000055511151231257827,sigma=0.30000000000000004");
    assert_formats_as(&s, "lognormal:median=0.1,sigma=0.30000000000000004");
}

static void test_parse_preset_overrides(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("cloud:stall_rate=2,stall_mean=5000,bw=1000");
    assert_true(s.median_us == 250 && s.spike_p == 0.02 && s.spike_cap_us == 100000);
    assert_true(s.bw_mbps == 1000 && s.stall_rate_per_s == 2 && s.stall_mean_us == 5000);
    s = parse_ok("modern:spike_p=0");
    assert_true(s.spike_p == 0 && s.spike_xm_us == 0 && s.median_us == 100);
    s = parse_ok("cloud:");
    assert_true(tess__latency_spec_equal(&s, (tess__latency_spec[]){parse_ok("cloud")}));
}

typedef struct bad_case {
    const char *text;
    const char *message; /* the whole message */
} bad_case;

static const bad_case bad_cases[] = {
    {"", "missing profile (expected none, fixed:US, lognormal:median=US,sigma=S,..., cloud, "
         "ec2-2011, modern or trace:FILE)"},
    {"gcp", "unknown profile 'gcp' (expected none, fixed:US, lognormal:median=US,sigma=S,..., "
            "cloud, ec2-2011, modern or trace:FILE)"},
    {"Cloud", NULL},
    {"none:5", "none: takes no parameters, got '5'"},
    {"fixed", "fixed: missing delay (expected fixed:US)"},
    {"fixed:", "fixed: missing delay (expected fixed:US)"},
    {"fixed:-1", "fixed: delay must be >= 0, got '-1'"},
    {"fixed:abc", "fixed: delay must be a number, got 'abc'"},
    {"fixed:1e13", "fixed: delay must be <= 1e+12, got '1e13'"},
    {"lognormal", "lognormal: median is required"},
    {"lognormal:sigma=0.4", "lognormal: median is required"},
    {"lognormal:median=250", "lognormal: sigma is required"},
    {"lognormal:median=250,sigma=-1", "lognormal: sigma must be >= 0, got '-1'"},
    {"lognormal:median=250,sigma=21", "lognormal: sigma must be <= 20, got '21'"},
    {"lognormal:median=0,sigma=1", "lognormal: median must be > 0, got '0'"},
    {"lognormal:median=,sigma=1", "lognormal: median must be a number, got ''"},
    {"lognormal:median=inf,sigma=1", "lognormal: median must be a number, got 'inf'"},
    {"lognormal:median=nan,sigma=1", "lognormal: median must be a number, got 'nan'"},
    {"lognormal:median=0x10,sigma=1", "lognormal: median must be a number, got '0x10'"},
    {"lognormal:median= 5,sigma=1", "lognormal: median must be a number, got ' 5'"},
    {"lognormal:median=5us,sigma=1", "lognormal: median must be a number, got '5us'"},
    {"lognormal:median=1e,sigma=1", "lognormal: median must be a number, got '1e'"},
    {"lognormal:median=250,sigma=0.4,jitter=3",
     "lognormal: unknown key 'jitter' (expected median, sigma, spike_p, spike_xm, spike_alpha, "
     "spike_cap, bw, stall_rate or stall_mean)"},
    {"lognormal:median=250,sigma=0.4,median=3", "lognormal: median given twice"},
    {"lognormal:median=250,sigma", "lognormal: expected KEY=VALUE, got 'sigma'"},
    {"lognormal:median=250,,sigma=1", "lognormal: empty parameter (expected KEY=VALUE)"},
    {"lognormal:median=250,sigma=1,", "lognormal: empty parameter (expected KEY=VALUE)"},
    {"lognormal:median=1,sigma=1,spike_p=1.5,spike_xm=1,spike_alpha=1,spike_cap=1",
     "lognormal: spike_p must be <= 1, got '1.5'"},
    {"lognormal:median=1,sigma=1,spike_p=-0.1,spike_xm=1,spike_alpha=1,spike_cap=1",
     "lognormal: spike_p must be >= 0, got '-0.1'"},
    {"lognormal:median=1,sigma=1,spike_p=0.1,spike_xm=0,spike_alpha=1,spike_cap=1",
     "lognormal: spike_xm must be > 0, got '0'"},
    {"lognormal:median=1,sigma=1,spike_p=0.1,spike_xm=1,spike_alpha=0,spike_cap=1",
     "lognormal: spike_alpha must be > 0, got '0'"},
    {"lognormal:median=1,sigma=1,spike_p=0.1,spike_xm=1,spike_alpha=1,spike_cap=-3",
     "lognormal: spike_cap must be > 0, got '-3'"},
    {"lognormal:median=1,sigma=1,spike_p=0.1,spike_xm=2000,spike_alpha=1,spike_cap=1000",
     "lognormal: spike_cap must be >= spike_xm (2000), got 1000"},
    {"lognormal:median=1,sigma=1,spike_p=0.1", "lognormal: spike_xm is required with spike_p"},
    {"lognormal:median=1,sigma=1,spike_p=0.1,spike_xm=1,spike_alpha=2",
     "lognormal: spike_cap is required with spike_p"},
    {"lognormal:median=1,sigma=1,spike_cap=5", "lognormal: spike_p is required with spike_cap"},
    {"lognormal:median=1,sigma=1,bw=0", "lognormal: bw must be >= 1e-06, got '0'"},
    {"lognormal:median=1,sigma=1,bw=-5", "lognormal: bw must be >= 1e-06, got '-5'"},
    {"lognormal:median=1,sigma=1,stall_rate=1",
     "lognormal: stall_mean is required with stall_rate"},
    {"lognormal:median=1,sigma=1,stall_mean=1",
     "lognormal: stall_rate is required with stall_mean"},
    {"lognormal:median=1,sigma=1,stall_rate=-1,stall_mean=1",
     "lognormal: stall_rate must be >= 0, got '-1'"},
    {"lognormal:median=1,sigma=1,stall_rate=1,stall_mean=0",
     "lognormal: stall_mean must be > 0, got '0'"},
    {"cloud:sigma=-2", "cloud: sigma must be >= 0, got '-2'"},
    {"ec2-2011:spike_cap=10", "ec2-2011: spike_cap must be >= spike_xm (2000), got 10"},
    {"modern:foo=1", NULL},
    {"lognormal:median=1\n,sigma=1", "lognormal: median must be a number, got '1?'"},
};

static void test_parse_errors(void **state)
{
    (void)state;
    tess_ctx *ctx = tess__ctx_alloc(NULL);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        tess__latency_spec s, sentinel;
        memset(&sentinel, 0xa5, sizeof sentinel);
        s = sentinel;
        int rc = tess__latency_parse(c->text, &s, ctx);
        const char *err = tess_last_error(ctx);
        if (rc != TESS_ERR_INVAL) fail_msg("'%s' accepted (rc %d)", c->text, rc);
        assert_memory_equal(&s, &sentinel, sizeof s); /* no output on failure */
        assert_null(strchr(err, '\n'));
        /* the library speaks of values; a CLI adds the flag's name */
        assert_null(strstr(err, "--"));
        if (c->message != NULL && strcmp(err, c->message) != 0)
            fail_msg("'%s': got \"%s\", expected \"%s\"", c->text, err, c->message);
    }
    /* NULL text, and no context to keep the message, are safe. */
    tess__latency_spec s;
    assert_int_equal(tess__latency_parse(NULL, &s, ctx), TESS_ERR_INVAL);
    assert_int_equal(tess__latency_parse("x", &s, NULL), TESS_ERR_INVAL);
    /* A long value is quoted shortened. */
    char text[300] = "fixed:";
    memset(text + 6, 'z', 200);
    text[206] = '\0';
    assert_int_equal(tess__latency_parse(text, &s, ctx), TESS_ERR_INVAL);
    assert_true(strlen(tess_last_error(ctx)) < 120);
    tess__ctx_free(ctx);
}

static void test_format_small_buffer(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("cloud");
    char buf[16];
    assert_int_equal(tess__latency_format(&s, buf, sizeof buf), TESS_ERR_INVAL);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    assert_int_equal(tess__latency_format(&s, buf, 0), TESS_ERR_INVAL);
    char exact[sizeof cloud_text];
    assert_int_equal(tess__latency_format(&s, exact, sizeof exact), 0);
    assert_int_equal(tess__latency_format(&s, exact, sizeof exact - 1), TESS_ERR_INVAL);

    /* The longest canonical text fits in TESS__LATENCY_FORMAT_MAX. */
    s = parse_ok("lognormal:median=0.30000000000000004e-300,sigma=0.30000000000000004e-300,"
                 "spike_p=0.30000000000000004e-300,spike_xm=0.30000000000000004e-300,"
                 "spike_alpha=0.30000000000000004e-300,spike_cap=0.30000000000000004e-300,"
                 "bw=100.00000000000001,stall_rate=0.30000000000000004e-300,"
                 "stall_mean=0.30000000000000004e-300");
    char big[TESS__LATENCY_FORMAT_MAX];
    assert_int_equal(tess__latency_format(&s, big, sizeof big), 0);
    assert_true(tess__latency_spec_equal(&s, (tess__latency_spec[]){parse_ok(big)}));
}

/* ----------------------------------------------------------- determinism */

static void test_determinism(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("cloud");
    int differ_seed = 0, differ_dir = 0, differ_seq = 0;
    for (uint64_t seq = 0; seq < 1000; seq++) {
        double d = tess__latency_sample_delay(&s, 11, 2, 5, seq, 800);
        assert_true(d == tess__latency_sample_delay(&s, 11, 2, 5, seq, 800));
        assert_true(d > 0 && isfinite(d));
        differ_seed += d != tess__latency_sample_delay(&s, 12, 2, 5, seq, 800);
        differ_dir += d != tess__latency_sample_delay(&s, 11, 5, 2, seq, 800);
        differ_seq += d != tess__latency_sample_delay(&s, 11, 2, 5, seq + 1, 800);
    }
    assert_int_equal(differ_seed, 1000);
    assert_int_equal(differ_dir, 1000);
    assert_int_equal(differ_seq, 1000);

    /* Two models with one seed deliver identically, whatever the order in
     * which their links are used; another seed does not. */
    tess__latency *a = tess__latency_new(&s, 99, 4);
    tess__latency *b = tess__latency_new(&s, 99, 4);
    tess__latency *c = tess__latency_new(&s, 100, 4);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    double da[4][50], db[4][50];
    int same_c = 0;
    for (int k = 0; k < 50; k++)
        for (int dst = 0; dst < 4; dst++) {
            da[dst][k] = tess__latency_deliver_at(a, 1, dst, 1000.0 * k, 64);
            same_c += da[dst][k] == tess__latency_deliver_at(c, 1, dst, 1000.0 * k, 64);
        }
    for (int dst = 3; dst >= 0; dst--)
        for (int k = 0; k < 50; k++)
            db[dst][k] = tess__latency_deliver_at(b, 1, dst, 1000.0 * k, 64);
    assert_memory_equal(da, db, sizeof da);
    assert_true(same_c < 10);
    tess__latency_free(a);
    tess__latency_free(b);
    tess__latency_free(c);
    tess__latency_free(NULL);
}

/* ------------------------------------------------------------------ links */

static void test_no_reordering(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("cloud");
    const uint64_t seed = 7;
    /* A message whose delay exceeds the next one's by far (a spike). */
    uint64_t k = 0;
    while (tess__latency_sample_delay(&s, seed, 0, 1, k, 100) <=
           tess__latency_sample_delay(&s, seed, 0, 1, k + 1, 100) + 1000)
        k++;
    double dk = tess__latency_sample_delay(&s, seed, 0, 1, k, 100);
    double dk1 = tess__latency_sample_delay(&s, seed, 0, 1, k + 1, 100);

    tess__latency *m = tess__latency_new(&s, seed, 2);
    assert_non_null(m);
    /* Far apart, earlier messages see an idle link: exactly the stateless delay. */
    for (uint64_t i = 0; i < k; i++) {
        double t = 1e6 * (double)i;
        assert_true(fabs(tess__latency_deliver_at(m, 0, 1, t, 100) -
                         (t + tess__latency_sample_delay(&s, seed, 0, 1, i, 100))) < 1e-6);
    }
    double t = 1e6 * (double)k;
    double first = tess__latency_deliver_at(m, 0, 1, t, 100);
    double second = tess__latency_deliver_at(m, 0, 1, t + 1, 100);
    assert_true(fabs(first - (t + dk)) < 1e-6);
    assert_true(t + 1 + dk1 < first); /* on its own it would overtake */
    assert_true(second >= first);
    assert_true(fabs(second - (first + 1.0)) < 1e-9); /* waits, then its 100 bytes at 100 MB/s */
    /* The reverse link is independent. */
    assert_true(fabs(tess__latency_deliver_at(m, 1, 0, t + 1, 100) -
                     (t + 1 + tess__latency_sample_delay(&s, seed, 1, 0, 0, 100))) < 1e-6);
    tess__latency_free(m);
}

static void test_bandwidth_serialises(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("lognormal:median=100,sigma=0.5,bw=100");
    const size_t mb = 1000000;
    assert_true(fabs(tess__latency_sample_delay(&s, 3, 0, 1, 0, mb) -
                     tess__latency_sample_delay(&s, 3, 0, 1, 0, 0) - 10000.0) < 1e-9);
    for (uint64_t seed = 0; seed < 20; seed++) {
        tess__latency *m = tess__latency_new(&s, seed, 2);
        assert_non_null(m);
        double a = tess__latency_deliver_at(m, 0, 1, 0.0, mb);
        double b = tess__latency_deliver_at(m, 0, 1, 0.0, mb);
        assert_true(a >= 10000.0);
        assert_true(b - a >= 10000.0 - 1e-6); /* rounding only */
        tess__latency_free(m);
    }
    /* Big messages on different links do not wait for each other (one
     * would deliver after 20 ms if they did). */
    tess__latency *m = tess__latency_new(&s, 1, 3);
    double a = tess__latency_deliver_at(m, 0, 1, 0.0, mb);
    double b = tess__latency_deliver_at(m, 0, 2, 0.0, mb);
    assert_true(a >= 10000.0 && b >= 10000.0 && a < 20000.0 && b < 20000.0);
    tess__latency_free(m);
}

static void test_none_keeps_time_and_order(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("none");
    tess__latency *m = tess__latency_new(&s, 5, 3);
    assert_non_null(m);
    for (int i = 0; i < 100; i++)
        assert_true(tess__latency_deliver_at(m, i % 3, (i + 1) % 3, 10.0 * i, 1 << 20) == 10.0 * i);
    /* A message stamped earlier than its predecessor still comes after it. */
    assert_true(tess__latency_deliver_at(m, 0, 1, 5000.0, 0) == 5000.0);
    assert_true(tess__latency_deliver_at(m, 0, 1, 4000.0, 0) == 5000.0);
    assert_true(tess__latency_deliver_at(m, 0, 1, 6000.0, 0) == 6000.0);
    assert_true(tess__latency_sample_delay(&s, 5, 0, 1, 3, 1 << 20) == 0.0);
    tess__latency_free(m);

    s = parse_ok("fixed:300");
    m = tess__latency_new(&s, 5, 2);
    assert_true(tess__latency_deliver_at(m, 0, 1, 1000.0, 1 << 20) == 1300.0);
    assert_true(tess__latency_deliver_at(m, 1, 1, 0.0, 1) == 300.0);
    tess__latency_free(m);
    assert_null(tess__latency_new(&s, 5, 0));
}

/* A sender's model (what each tick process keeps) gives the times the
 * whole model gives for that sender, stalls included, in memory linear in
 * the endpoints; it refuses the other senders. */
static void test_sender_model_matches(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("lognormal:median=200,sigma=1.2,stall_rate=50,stall_mean=2000");
    tess__latency *all = tess__latency_new(&s, 11, 5);
    tess__latency *one = tess__latency_new_sender(&s, 11, 5, 3);
    assert_non_null(all);
    assert_non_null(one);
    for (int i = 0; i < 200; i++) {
        double t = 37.0 * i, a = tess__latency_deliver_at(all, 3, i % 5, t, 100 * i);
        assert_true(a == tess__latency_deliver_at(one, 3, i % 5, t, 100 * i));
        assert_true(tess__latency_stall_end(all, 3, t) == tess__latency_stall_end(one, 3, t));
    }
#ifdef NDEBUG /* another sender's endpoint: asserted, NAN without assertions (latency.h) */
    assert_true(isnan(tess__latency_stall_end(one, 2, 0.0)));
#endif
    tess__latency_free(all);
    tess__latency_free(one);
    assert_null(tess__latency_new_sender(&s, 11, 5, 5));
    assert_null(tess__latency_new_sender(&s, 11, 5, -1));
}

/* ------------------------------------------------------------- statistics */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_cloud_statistics(void **state)
{
    (void)state;
    enum { N = 200000 };
    tess__latency_spec s = parse_ok("cloud");
    double *base = malloc(N * sizeof *base);
    assert_non_null(base);
    size_t nbase = 0, spikes = 0, at_cap = 0, above_2xm = 0;
    double sum_ln = 0, sum_ln2 = 0;
    for (uint64_t seq = 0; seq < N; seq++) {
        tess__latency_parts p;
        tess__latency_sample_parts(&s, 42, 3, 5, seq, 0, &p);
        assert_true(p.size_us == 0);
        assert_true(p.base_us > 0);
        sum_ln += log(p.base_us);
        sum_ln2 += log(p.base_us) * log(p.base_us);
        if (p.spike_us == 0) {
            base[nbase++] = p.base_us;
            continue;
        }
        spikes++;
        assert_true(p.spike_us >= 2000 && p.spike_us <= 100000);
        at_cap += p.spike_us == 100000;
        above_2xm += p.spike_us > 4000;
    }
    qsort(base, nbase, sizeof *base, cmp_double);
    double median = base[nbase / 2];
    double mean_ln = sum_ln / N;
    double sd_ln = sqrt(sum_ln2 / N - mean_ln * mean_ln);
    double frac = (double)spikes / N;
    double tail = (double)above_2xm / (double)spikes;
    printf("cloud, %d samples: median %.1f us, sd(ln) %.4f, spikes %.4f, at cap %zu, "
           "P(spike > 2 xm) %.3f\n",
           N, median, sd_ln, frac, at_cap, tail);
    assert_true(fabs(median - 250.0) < 0.02 * 250.0);
    assert_true(fabs(sd_ln - 0.4) < 0.02 * 0.4);
    assert_true(fabs(frac - 0.02) < 0.1 * 0.02);
    assert_true(at_cap > 0); /* P(Pareto > cap) = (2000/100000)^1.5 = 0.28% of spikes */
    assert_true(fabs(tail - pow(0.5, 1.5)) < 0.03);
    free(base);

    /* With bytes, the size term is exact: 800 bytes at 100 MB/s = 8 us. */
    tess__latency_parts p;
    tess__latency_sample_parts(&s, 42, 3, 5, 0, 800, &p);
    assert_true(fabs(p.size_us - 8.0) < 1e-12);
}

/* ------------------------------------------------------------------ stalls */

static void test_stalls(void **state)
{
    (void)state;
    /* Stalls start 10000 times a second of running (every 100 us on
     * average) and last 1 ms: the endpoint is stalled 1000/1100 of the time. */
    tess__latency_spec s = parse_ok("lognormal:median=100,sigma=0,stall_rate=10000,"
                                    "stall_mean=1000");
    tess__latency_spec calm = parse_ok("lognormal:median=100,sigma=0");
    enum { N = 4000 };
    const double spacing = 1e5; /* far beyond any stall, so the link is idle */
    tess__latency *m = tess__latency_new(&s, 8, 2);
    tess__latency *q = tess__latency_new(&calm, 8, 2);
    assert_non_null(m);
    assert_non_null(q);
    int delayed = 0;
    double waited = 0;
    for (int i = 0; i < N; i++) {
        double t = spacing * i + 17.0;
        double end = tess__latency_stall_end(m, 1, t);
        double d = tess__latency_deliver_at(m, 1, 0, t, 0);
        assert_true(d == end + 100.0); /* leaves when the source's stall ends */
        assert_true(tess__latency_deliver_at(q, 1, 0, t, 0) == t + 100.0);
        delayed += end > t;
        waited += end - t;
    }
    double frac = (double)delayed / N;
    double mean_wait = waited / delayed;
    printf("stalls: %.3f of messages delayed, mean wait %.0f us\n", frac, mean_wait);
    assert_true(fabs(frac - 1000.0 / 1100.0) < 0.05);
    assert_true(fabs(mean_wait - 1000.0) < 150.0); /* memoryless: the rest of a stall */

    /* The schedule is a function of (seed, endpoint, t): asking backwards, or
     * on another model with the same seed, gives the same answers; another
     * endpoint or seed gives a different schedule. */
    tess__latency *b = tess__latency_new(&s, 8, 2);
    tess__latency *c = tess__latency_new(&s, 9, 2);
    int same_other_endpoint = 0, same_other_seed = 0;
    for (int i = N - 1; i >= 0; i--) {
        double t = 37.5 * i;
        double e = tess__latency_stall_end(b, 1, t);
        same_other_endpoint += e == tess__latency_stall_end(b, 0, t) && e > t;
        same_other_seed += e == tess__latency_stall_end(c, 1, t) && e > t;
    }
    for (int i = 0; i < N; i++) {
        double t = 37.5 * i;
        assert_true(tess__latency_stall_end(m, 1, t) == tess__latency_stall_end(b, 1, t));
    }
    assert_true(same_other_endpoint < N / 10);
    assert_true(same_other_seed < N / 10);
    /* Before the clock's origin nothing is stalled. */
    assert_true(tess__latency_stall_end(m, 0, -5.0) == -5.0);
    tess__latency_free(m);
    tess__latency_free(q);
    tess__latency_free(b);
    tess__latency_free(c);
}

/* --------------------------------------------------------------- threads */

typedef struct sender_args {
    tess__latency *m;
    int src;
    double out[4][2000];
} sender_args;

static void *sender(void *arg)
{
    sender_args *a = arg;
    for (int k = 0; k < 2000; k++)
        for (int dst = 0; dst < 4; dst++)
            a->out[dst][k] = tess__latency_deliver_at(a->m, a->src, dst, 500.0 * k, 1000);
    return NULL;
}

/* Different sources need no lock, and give what one thread gives. */
static void test_sources_in_parallel(void **state)
{
    (void)state;
    tess__latency_spec s = parse_ok("cloud:stall_rate=5,stall_mean=3000");
    tess__latency *par = tess__latency_new(&s, 21, 4);
    tess__latency *ser = tess__latency_new(&s, 21, 4);
    static sender_args args[4], expect[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        args[i].m = par;
        args[i].src = i;
        assert_int_equal(pthread_create(&threads[i], NULL, sender, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        expect[i].m = ser;
        expect[i].src = i;
        sender(&expect[i]);
        assert_memory_equal(args[i].out, expect[i].out, sizeof args[i].out);
    }
    tess__latency_free(par);
    tess__latency_free(ser);
}

/* ----------------------------------------------------------- simple model */

/* Local synchronisation on a side × side grid of processes: each tick a
 * process computes for 1 ms, then sends its result (800 bytes, a 100-cell
 * boundary) to each of its grid neighbours (4 inside, fewer on the edge;
 * torus: always 4), and starts the next tick once it has its neighbours'
 * results of the tick before.  Returns throughput relative to zero latency:
 * ticks × 1 ms over the time the last process finishes. */
static double grid_relative_throughput(const tess__latency_spec *s, uint64_t seed, int side,
                                       int ticks, int torus)
{
    const double compute_us = 1000.0;
    int n = side * side;
    double *done = calloc((size_t)n, sizeof *done);   /* end of the previous tick */
    double *ready = calloc((size_t)n, sizeof *ready); /* start of the next */
    tess__latency *m = tess__latency_new(s, seed, n);
    assert_true(done != NULL && ready != NULL && m != NULL);
    static const int dr[4] = {-1, 1, 0, 0}, dc[4] = {0, 0, -1, 1};
    for (int t = 0; t < ticks; t++) {
        for (int p = 0; p < n; p++) done[p] = ready[p] + compute_us;
        for (int p = 0; p < n; p++) ready[p] = done[p];
        for (int q = 0; q < n; q++)
            for (int k = 0; k < 4; k++) {
                int r = q / side + dr[k], c = q % side + dc[k];
                if (!torus && (r < 0 || r >= side || c < 0 || c >= side)) continue;
                int p = (r + side) % side * side + (c + side) % side;
                double at = tess__latency_deliver_at(m, q, p, done[q], 800);
                if (at > ready[p]) ready[p] = at;
            }
    }
    double makespan = 0;
    for (int p = 0; p < n; p++) makespan = done[p] > makespan ? done[p] : makespan;
    tess__latency_free(m);
    free(done);
    free(ready);
    return ticks * compute_us / makespan;
}

static void test_simple_model_grid(void **state)
{
    (void)state;
    tess__latency_spec none = parse_ok("none"), fixed = parse_ok("fixed:250");
    assert_true(grid_relative_throughput(&none, 1, 7, 500, 0) == 1.0);
    /* 250 us after every tick but the last. */
    assert_true(fabs(grid_relative_throughput(&fixed, 1, 7, 500, 0) -
                     500000.0 / (500000.0 + 499 * 250.0)) < 1e-12);

    tess__latency_spec cloud = parse_ok("cloud"), modern = parse_ok("modern");
    double sum = 0, lo = 1, hi = 0;
    enum { SEEDS = 5 };
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        double r = grid_relative_throughput(&cloud, seed, 7, 500, 0);
        assert_true(r > 0.08 && r < 0.30);
        sum += r;
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
    }
    printf("simple model, 7x7 grid, 500 ticks of 1 ms, cloud: %.3f of jitter-free throughput "
           "(mean of %d seeds, range %.3f-%.3f)\n",
           sum / SEEDS, SEEDS, lo, hi);
    printf("simple model, 7x7 torus, cloud: %.3f; 7x7 grid, modern: %.3f\n",
           grid_relative_throughput(&cloud, 1, 7, 500, 1),
           grid_relative_throughput(&modern, 1, 7, 500, 0));
}

/* ------------------------------------------------ measured profiles */

static void test_quantiles(void **state)
{
    (void)state;
    double d[1000];
    for (int i = 0; i < 1000; i++) d[i] = 1000 - i; /* 1..1000, unsorted */
    tess__latency_spec s;
    tess__latency_quantiles_of(d, 1000, &s);
    assert_int_equal(s.kind, TESS__LATENCY_QUANTILES);
    assert_true(s.quantile_us[0] == 1 && s.quantile_us[TESS__LATENCY_QUANTILES_N - 1] == 1000);
    assert_true(s.quantile_us[10] == 500.5); /* p = 0.50 */
    char buf[TESS__LATENCY_FORMAT_MAX];
    assert_int_equal(tess__latency_format(&s, buf, sizeof buf), 0);
    tess__latency_spec again = parse_ok(buf); /* the canonical text is the model */
    assert_true(tess__latency_spec_equal(&s, &again));
    /* the draw inverts the CDF: monotone, its median the data's */
    double prev = 0, below = 0;
    for (int i = 0; i < 100000; i++) {
        double v = tess__latency_quantile_draw(&s, (i + 0.5) / 100000);
        assert_true(v >= prev && v >= 1 && v <= 1000);
        below += v < 500.5;
        prev = v;
    }
    assert_true(below == 50000);
    for (uint64_t seq = 0; seq < 1000; seq++) {
        double v = tess__latency_sample_delay(&s, 7, 0, 1, seq, 16384);
        assert_true(v >= 1 && v <= 1000); /* no size term: measured at its size */
    }
}

static void test_quantiles_errors(void **state)
{
    (void)state;
    tess_ctx *ctx = tess__ctx_alloc(NULL);
    tess__latency_spec s;
    assert_int_equal(tess__latency_parse("quantiles:1,2", &s, ctx), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "expected 32 non-decreasing"));
    char text[400] = "quantiles:5";
    for (int i = 1; i < TESS__LATENCY_QUANTILES_N; i++) strcat(text, i == 3 ? ",4" : ",6");
    assert_int_equal(tess__latency_parse(text, &s, ctx), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "value 4 must be >= 6"));
    assert_int_equal(tess__latency_resolve("trace:", &s, ctx), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "missing file"));
    tess__ctx_free(ctx);
}

TEST_MAIN(cmocka_unit_test(test_parse_presets), cmocka_unit_test(test_parse_none_and_fixed),
          cmocka_unit_test(test_parse_every_field), cmocka_unit_test(test_parse_preset_overrides),
          cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_format_small_buffer),
          cmocka_unit_test(test_determinism), cmocka_unit_test(test_no_reordering),
          cmocka_unit_test(test_bandwidth_serialises),
          cmocka_unit_test(test_none_keeps_time_and_order), cmocka_unit_test(test_cloud_statistics),
          cmocka_unit_test(test_stalls), cmocka_unit_test(test_sender_model_matches),
          cmocka_unit_test(test_sources_in_parallel), cmocka_unit_test(test_simple_model_grid),
          cmocka_unit_test(test_quantiles), cmocka_unit_test(test_quantiles_errors))
