/*
 * test_tick_graph.c — the partitioned-graph state class (tick_graph.h): hop
 * labels of a small hand-made graph, query sizes, RD/RX and their
 * normalisation, DISJOINT (quick and scanned paths), region membership,
 * pack/merge round trips and malformed buffers, STEP of one PageRank tick
 * against hand-computed values (skipping what the destination holds,
 * refusing a source that lacks an in-neighbour), unpacking, and — on random
 * graphs — labels, sizes and DISJOINT against brute force, also with
 * several threads growing the labels at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"

#include "test_ctx.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tick_graph.h"

/* ------------------------------------------------------------ fixtures */

typedef struct test_graph {
    uint32_t nv;
    uint64_t *in_first;
    uint32_t *in_src;
    uint32_t *outdeg;
    tess_graph *g;
} test_graph;

/* In-edge CSR from an edge list, edge order kept per destination. */
static void tg_build(test_graph *t, uint32_t nv, const uint32_t (*edges)[2], size_t ne,
                     const int32_t *part, int nparts)
{
    t->nv = nv;
    t->in_first = calloc((size_t)nv + 1, sizeof *t->in_first);
    t->in_src = malloc((ne ? ne : 1) * sizeof *t->in_src);
    t->outdeg = calloc(nv ? nv : 1, sizeof *t->outdeg);
    assert_non_null(t->in_first);
    assert_non_null(t->in_src);
    for (size_t e = 0; e < ne; e++) {
        t->in_first[edges[e][1] + 1]++;
        t->outdeg[edges[e][0]]++;
    }
    for (uint32_t v = 0; v < nv; v++) t->in_first[v + 1] += t->in_first[v];
    uint64_t *fill = malloc(((size_t)nv + 1) * sizeof *fill);
    memcpy(fill, t->in_first, ((size_t)nv + 1) * sizeof *fill);
    for (size_t e = 0; e < ne; e++) t->in_src[fill[edges[e][1]]++] = edges[e][0];
    free(fill);
    assert_int_equal(tess_graph_create(nv, t->in_first, t->in_src, part, nparts, &t->g), TESS_OK);
}

static void tg_free(test_graph *t)
{
    tess_graph_destroy(t->g);
    free(t->in_first);
    free(t->in_src);
    free(t->outdeg);
    memset(t, 0, sizeof *t);
}

/*
 * The hand-made graph: 7 vertices, partitions {0,1} {2,3,4} {5,6}.
 *   0->1 1->2 2->3 3->4 4->5 5->6 3->0 6->6
 */
static const uint32_t small_edges[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4},
                                          {4, 5}, {5, 6}, {3, 0}, {6, 6}};
static const int32_t small_part[] = {0, 0, 1, 1, 1, 2, 2};

static void small_graph(test_graph *t)
{
    tg_build(t, 7, small_edges, sizeof small_edges / sizeof small_edges[0], small_part, 3);
}

static tess_query Q(int32_t part, int32_t kind, int32_t hops)
{
    return tess_graph_query(part, kind, hops);
}

static void assert_query(const tess_query *got, int32_t part, int32_t kind, int32_t hops)
{
    tess_graph_q q = tess_graph_q_of(got);
    assert_int_equal(q.part, part);
    assert_int_equal(q.kind, kind);
    assert_int_equal(q.hops, hops);
    tess_query want = Q(part, kind, hops);
    assert_memory_equal(got->bytes, want.bytes, TESS_QUERY_BYTES);
}

/* ------------------------------------------------------------ labels */

static void test_create_rejects(void **state)
{
    (void)state;
    uint64_t first[] = {0, 1, 1};
    uint32_t src[] = {1};
    int32_t part[] = {0, 1};
    tess_graph *g = NULL;
    assert_int_equal(tess_graph_create(2, first, src, part, 1, &g), TESS_ERR_INVAL);
    assert_int_equal(tess_graph_create(2, first, src, part, 0, &g), TESS_ERR_INVAL);
    uint32_t bad_src[] = {2};
    assert_int_equal(tess_graph_create(2, first, bad_src, part, 2, &g), TESS_ERR_INVAL);
    assert_null(g);
    assert_int_equal(tess_graph_create(2, first, src, part, 2, &g), TESS_OK);
    assert_int_equal(tess_graph_vertices(g), 2);
    assert_int_equal(tess_graph_parts(g), 2);
    tess_graph_destroy(g);
    tess_graph_destroy(NULL);
}

static void test_small_labels(void **state)
{
    (void)state;
    test_graph t;
    small_graph(&t);
    /* in_hops(p, v): hops from v to partition p along edges. */
    static const int in[3][7] = {
        {0, 0, 2, 1, -1, -1, -1}, {2, 1, 0, 0, 0, -1, -1}, {5, 4, 3, 2, 1, 0, 0}};
    /* out_hops(p, v): hops from partition p to v along edges. */
    static const int out[3][7] = {
        {0, 0, 1, 2, 3, 4, 5}, {1, 2, 0, 0, 0, 1, 2}, {-1, -1, -1, -1, -1, 0, 0}};
    for (int p = 0; p < 3; p++)
        for (uint32_t v = 0; v < 7; v++) {
            assert_int_equal(tess_graph_hops(t.g, p, TESS_GRAPH_IN_HOPS, v), in[p][v]);
            assert_int_equal(tess_graph_hops(t.g, p, TESS_GRAPH_OUT_HOPS, v), out[p][v]);
        }
    assert_int_equal(tess_graph_hops(t.g, 3, TESS_GRAPH_IN_HOPS, 0), -1);
    assert_int_equal(tess_graph_hops(t.g, 0, TESS_GRAPH_OWN, 0), -1);
    assert_int_equal(tess_graph_hops(t.g, 0, TESS_GRAPH_IN_HOPS, 7), -1);
    tg_free(&t);
}

static void test_small_sizes(void **state)
{
    (void)state;
    test_graph t;
    small_graph(&t);
    /* In order: labels grow lazily, level by level, so a small hop count comes first. */
    static const struct {
        int32_t part, kind, hops;
        int64_t size;
    } cases[] = {
        {0, TESS_GRAPH_IN_HOPS, 1, 3}, /* 0 1 3 */
        {0, TESS_GRAPH_OWN, 0, 2},
        {0, TESS_GRAPH_IN_HOPS, 0, 2},
        {0, TESS_GRAPH_IN_HOPS, 2, 4},
        {0, TESS_GRAPH_IN_HOPS, TESS_GRAPH_MAX_HOPS, 4},
        {0, TESS_GRAPH_OUT_HOPS, 1, 3}, /* 0 1 2 */
        {0, TESS_GRAPH_OUT_HOPS, 5, 7},
        {2, TESS_GRAPH_OUT_HOPS, 3, 2},
        {0, TESS_GRAPH_ALL, 0, 7},
        {5, TESS_GRAPH_OWN, 0, TESS_ERR_INVAL},
        {0, TESS_GRAPH_IN_HOPS, TESS_GRAPH_MAX_HOPS + 1, TESS_ERR_INVAL},
        {0, 9, 0, TESS_ERR_INVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tess_query q = Q(cases[i].part, cases[i].kind, cases[i].hops);
        assert_int_equal(tess_graph_query_size(t.g, &q), cases[i].size);
    }
    assert_int_equal(tess_graph_prepare(t.g, 3), TESS_OK);
    tg_free(&t);
}

/* A normalisation rule (RD, RX or SAME) as one signature; SAME ignores the graph. */
typedef void (*rule_fn)(tess_graph *g, const tess_query *in, tess_query *out);

static void rule_same(tess_graph *g, const tess_query *in, tess_query *out)
{
    (void)g;
    tess_graph_same(in, out);
}

/* Applies rule to in, checks the result is exactly Q(part, kind, hops) and
 * returns it, so that a test can feed one step's output to the next. */
static tess_query rule_gives(tess_graph *g, rule_fn rule, tess_query in, int32_t part, int32_t kind,
                             int32_t hops)
{
    tess_query out;
    rule(g, &in, &out);
    assert_query(&out, part, kind, hops);
    return out;
}

static void test_small_rd_rx(void **state)
{
    (void)state;
    test_graph t;
    small_graph(&t);
    tess_graph *g = t.g;
    /* Short names for the kinds, so that each step reads as one line. */
    const int32_t own = TESS_GRAPH_OWN, in = TESS_GRAPH_IN_HOPS, inner = TESS_GRAPH_INNER;
    const int32_t all = TESS_GRAPH_ALL, none = TESS_GRAPH_NONE;
    tess_query q = rule_gives(g, tess_graph_rd, Q(0, own, 0), 0, in, 1);
    q = rule_gives(g, tess_graph_rd, q, 0, in, 2);
    rule_gives(g, tess_graph_rd, q, 0, in, 2); /* level 2 is the last: IN(0, 3) is IN(0, 2) */
    /* RX shrinks (Table 1): the vertices whose in-neighbours are all inside. */
    q = rule_gives(g, tess_graph_rx, Q(0, own, 0), 0, inner, 1);
    rule_gives(g, tess_graph_rx, q, 0, inner, 2);
    rule_gives(g, tess_graph_rx, Q(2, own, 0), 2, inner, 1);
    q = rule_gives(g, tess_graph_rx, Q(0, in, 2), 0, in, 1);
    rule_gives(g, tess_graph_rx, q, 0, own, 0);
    rule_gives(g, tess_graph_rx, Q(0, all, 0), 0, all, 0);
    /* No deeper INNER: nothing. */
    rule_gives(g, tess_graph_rx, Q(0, inner, TESS_GRAPH_MAX_HOPS), 0, none, 0);
    q = rule_gives(g, tess_graph_rx, Q(9, own, 0), 0, none,
                   0); /* invalid: nothing, the safe side */
    assert_int_equal(tess_graph_query_size(g, &q), 0);
    rule_gives(g, tess_graph_rd, Q(2, in, 0), 2, in, 1); /* spelled IN(2, 0): still OWN-based */
    /* Anything else: ALL. */
    rule_gives(g, tess_graph_rd, Q(0, TESS_GRAPH_OUT_HOPS, 1), 0, all, 0);
    rule_gives(g, tess_graph_rd, Q(0, all, 0), 0, all, 0);
    rule_gives(g, tess_graph_rd, Q(7, own, 0), 0, all, 0);
    rule_gives(g, rule_same, Q(1, in, 1), 1, in, 1);
    tg_free(&t);
}

static void test_small_disjoint(void **state)
{
    (void)state;
    test_graph t;
    small_graph(&t);
    struct {
        tess_query a, b;
        int want;
    } cases[] = {
        {Q(0, TESS_GRAPH_OWN, 0), Q(1, TESS_GRAPH_OWN, 0), 1},
        {Q(0, TESS_GRAPH_OWN, 0), Q(0, TESS_GRAPH_OWN, 0), 0},
        {Q(0, TESS_GRAPH_OWN, 0), Q(1, TESS_GRAPH_IN_HOPS, 1), 0}, /* {1,2,3,4} */
        {Q(0, TESS_GRAPH_OWN, 0), Q(2, TESS_GRAPH_IN_HOPS, 1), 1}, /* {4,5,6} */
        {Q(0, TESS_GRAPH_IN_HOPS, 1), Q(2, TESS_GRAPH_OUT_HOPS, 5), 1},
        {Q(0, TESS_GRAPH_IN_HOPS, 1), Q(1, TESS_GRAPH_OUT_HOPS, 1), 0},
        /* Both touch partition 1 (vertex 3 vs 4) yet share no vertex. */
        {Q(0, TESS_GRAPH_IN_HOPS, 1), Q(2, TESS_GRAPH_IN_HOPS, 1), 1},
        {Q(0, TESS_GRAPH_IN_HOPS, 2), Q(2, TESS_GRAPH_IN_HOPS, 2), 0},
        {Q(0, TESS_GRAPH_ALL, 0), Q(2, TESS_GRAPH_OWN, 0), 0},
        {Q(9, TESS_GRAPH_OWN, 0), Q(2, TESS_GRAPH_OWN, 0), 0}, /* invalid: unsure */
    };
    for (int round = 0; round < 2; round++) /* the second answers from the cache */
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            assert_int_equal(tess_graph_disjoint(t.g, &cases[i].a, &cases[i].b), cases[i].want);
            assert_int_equal(tess_graph_disjoint(t.g, &cases[i].b, &cases[i].a), cases[i].want);
        }
    tg_free(&t);
}

static void test_small_regions(void **state)
{
    (void)state;
    test_graph t;
    small_graph(&t);
    tess_query pos1[] = {Q(0, TESS_GRAPH_IN_HOPS, 2)}, neg1[] = {Q(0, TESS_GRAPH_OWN, 0)};
    tess_region r1 = {1, 1, pos1, neg1}; /* {2, 3} */
    tess_query pos2[] = {Q(1, TESS_GRAPH_IN_HOPS, 1), Q(1, TESS_GRAPH_OUT_HOPS, 1)};
    tess_region r2 = {2, 0, pos2, NULL}; /* {1,2,3,4} & {0,2,3,4,5} */
    tess_query pos3[] = {Q(0, TESS_GRAPH_ALL, 0)};
    tess_query neg3[] = {Q(1, TESS_GRAPH_OWN, 0), Q(2, TESS_GRAPH_IN_HOPS, 1)};
    tess_region r3 = {1, 2, pos3, neg3}; /* {0, 1} */
    static const int want[3][7] = {
        {0, 0, 1, 1, 0, 0, 0}, {0, 0, 1, 1, 1, 0, 0}, {1, 1, 0, 0, 0, 0, 0}};
    const tess_region *rs[] = {&r1, &r2, &r3};
    for (int i = 0; i < 3; i++)
        for (uint32_t v = 0; v < 7; v++)
            assert_int_equal(tess_graph_region_contains(t.g, rs[i], v), want[i][v]);
    assert_int_equal(tess_graph_region_contains(t.g, &r1, 99), 0);
    tess_query bad[] = {Q(0, TESS_GRAPH_IN_HOPS, -1)};
    tess_region rb = {1, 0, bad, NULL};
    assert_int_equal(tess_graph_region_contains(t.g, &rb, 0), TESS_ERR_INVAL);
    tg_free(&t);
}

/* ------------------------------------------------------------ the class */

typedef struct pr_user {
    const test_graph *t;
    double damping;
    int init_calls;
} pr_user;

static double init_scaled(void *user, uint32_t v)
{
    pr_user *u = user;
    u->init_calls++;
    return 1.5 * v + 0.25;
}

static double init_pr(void *user, uint32_t v)
{
    (void)v;
    pr_user *u = user;
    return 1.0 / u->t->nv;
}

static void step_pr(void *user, const double *prev, const uint32_t *vs, size_t n, int64_t tick,
                    double *out)
{
    (void)tick;
    const pr_user *u = user;
    const test_graph *t = u->t;
    for (size_t i = 0; i < n; i++) {
        double sum = 0;
        for (uint64_t e = t->in_first[vs[i]]; e < t->in_first[vs[i] + 1]; e++)
            sum += prev[t->in_src[e]] / t->outdeg[t->in_src[e]];
        out[i] = (1 - u->damping) / t->nv + u->damping * sum;
    }
}

typedef struct fixture {
    test_graph t;
    pr_user user;
    tess_graph_fns fns;
    tess_tick_app app;
} fixture;

static void fixture_init(fixture *f, double (*init)(void *, uint32_t))
{
    memset(f, 0, sizeof *f);
    small_graph(&f->t);
    f->user = (pr_user){&f->t, 0.85, 0};
    f->fns = (tess_graph_fns){f->t.g, init, step_pr};
    f->app.name = "test";
    f->app.state = &tess_graph_class;
    f->app.user = &f->user;
    f->app.class_fns = &f->fns;
    f->app.universe = Q(0, TESS_GRAPH_ALL, 0);
}

static void test_pack_merge(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, init_scaled);
    const tess_state_class *c = &tess_graph_class;
    tess_query own = Q(0, TESS_GRAPH_OWN, 0), all = Q(0, TESS_GRAPH_ALL, 0);
    void *a = c->create(&f.app, 2, &all, &all), *b = c->create(&f.app, 3, &own, &all);
    assert_non_null(a);
    assert_non_null(b);
    tess_region ra = {1, 0, &all, NULL};
    assert_int_equal(c->init(a, 1, &ra), TESS_OK);
    assert_int_equal(f.user.init_calls, 7);
    assert_int_equal(c->count(a, 1, &ra), 7);
    assert_int_equal(c->count(a, 0, &ra), 0);

    tess_query in1 = Q(0, TESS_GRAPH_IN_HOPS, 1);
    tess_region rin = {1, 0, &in1, NULL};
    tess_buf buf = {0};
    assert_int_equal(c->pack(a, 1, &rin, &buf), TESS_OK);
    assert_int_equal(buf.len, 3 * TESS_GRAPH_RECORD_BYTES);

    /* Merge keeping only OWN(0): vertices 0 and 1. */
    tess_region rown = {1, 0, &own, NULL};
    assert_int_equal(c->merge(b, 2, buf.data, buf.len, &rown), TESS_OK);
    assert_int_equal(c->count(b, 2, &ra), 2);
    assert_int_equal(c->merge(b, 2, buf.data, buf.len, NULL), TESS_OK);
    assert_int_equal(c->count(b, 2, &ra), 3);
    assert_int_equal(c->count(b, 2, &rown), 2);
    const tess_graph_view *view = c->snapshot(b, 2);
    assert_non_null(view);
    assert_int_equal(view->nv, 7);
    for (uint32_t v = 0; v < 7; v++) {
        int have = v == 0 || v == 1 || v == 3;
        assert_int_equal((int)((view->present[0] >> v) & 1), have);
        if (have) assert_true(view->values[v] == 1.5 * v + 0.25);
    }

    /* Malformed: not whole records; a vertex out of range (nothing applied). */
    assert_int_equal(c->merge(b, 1, buf.data, buf.len - 1, NULL), TESS_ERR_FORMAT);
    unsigned char bad[2 * TESS_GRAPH_RECORD_BYTES];
    memcpy(bad, buf.data, TESS_GRAPH_RECORD_BYTES);
    uint32_t far = 7;
    memcpy(bad + TESS_GRAPH_RECORD_BYTES, &far, 4);
    memset(bad + TESS_GRAPH_RECORD_BYTES + 4, 0, 8);
    assert_int_equal(c->merge(b, 1, bad, sizeof bad, NULL), TESS_ERR_FORMAT);
    assert_int_equal(c->count(b, 1, &ra), 0);
    assert_int_equal(c->merge(b, 1, NULL, 0, NULL), TESS_OK);
    assert_int_equal(c->merge(b, 9, buf.data, buf.len, NULL), TESS_ERR_INVAL);

    /* A whole version packs, clears and unpacks. */
    buf.len = 0;
    assert_int_equal(c->pack(a, 1, &ra, &buf), TESS_OK);
    double vals[7];
    uint64_t count = 0;
    assert_int_equal(tess_graph_unpack(buf.data, buf.len, 7, vals, &count), TESS_OK);
    assert_int_equal(count, 7);
    for (uint32_t v = 0; v < 7; v++) assert_true(vals[v] == 1.5 * v + 0.25);
    unsigned char twice[2 * TESS_GRAPH_RECORD_BYTES];
    memcpy(twice, buf.data, TESS_GRAPH_RECORD_BYTES);
    memcpy(twice + TESS_GRAPH_RECORD_BYTES, buf.data, TESS_GRAPH_RECORD_BYTES);
    assert_int_equal(tess_graph_unpack(twice, sizeof twice, 7, vals, NULL), TESS_ERR_FORMAT);
    assert_int_equal(tess_graph_unpack(buf.data, buf.len, 6, vals, NULL), TESS_ERR_FORMAT);
    c->clear(a, 1);
    assert_int_equal(c->count(a, 1, &ra), 0);

    c->destroy(a);
    c->destroy(b);
    c->destroy(NULL);
    tess_buf_free(&buf);
    tg_free(&f.t);
}

/* One PageRank tick of the small graph, by hand (outdeg 3 is 2, others 1;
 * in-lists 0:[3] 1:[0] 2:[1] 3:[2] 4:[3] 5:[4] 6:[5,6]). */
static double hand_tick(uint32_t v)
{
    const double x = 1.0 / 7, base = (1 - 0.85) / 7;
    switch (v) {
    case 0: return base + 0.85 * (x / 2);
    case 1: return base + 0.85 * (x / 1);
    case 4: return base + 0.85 * (x / 2);
    case 6: return base + 0.85 * (x / 1 + x / 1);
    default: return base + 0.85 * (x / 1);
    }
}

static void test_step(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, init_pr);
    const tess_state_class *c = &tess_graph_class;
    tess_query all = Q(0, TESS_GRAPH_ALL, 0);
    void *s = c->create(&f.app, 3, &all, &all);
    assert_non_null(s);
    tess_region ra = {1, 0, &all, NULL};
    assert_int_equal(c->init(s, 0, &ra), TESS_OK);

    /* The destination already holds vertex 6 (a different value): kept. */
    unsigned char rec[TESS_GRAPH_RECORD_BYTES];
    uint32_t six = 6;
    double marker = -1;
    memcpy(rec, &six, 4);
    memcpy(rec + 4, &marker, 8);
    assert_int_equal(c->merge(s, 1, rec, sizeof rec, NULL), TESS_OK);

    /* OWN(1) first, then the rest: each vertex computed once. */
    tess_query own1 = Q(1, TESS_GRAPH_OWN, 0);
    tess_region r1 = {1, 0, &own1, NULL};
    assert_int_equal(c->step(s, 0, 1, &r1, 0), 3);
    assert_int_equal(c->step(s, 0, 1, &r1, 0), 0);
    assert_int_equal(c->step(s, 0, 1, &ra, 0), 3);
    assert_int_equal(c->count(s, 1, &ra), 7);
    const tess_graph_view *view = c->snapshot(s, 1);
    for (uint32_t v = 0; v < 6; v++) assert_true(view->values[v] == hand_tick(v));
    assert_true(view->values[6] == marker);

    /* A second tick from a partial source: OWN(0) needs 0 1 3 only. */
    tess_query own0 = Q(0, TESS_GRAPH_OWN, 0), in01 = Q(0, TESS_GRAPH_IN_HOPS, 1);
    tess_region r0 = {1, 0, &own0, NULL}, rin = {1, 0, &in01, NULL};
    tess_buf buf = {0};
    assert_int_equal(c->pack(s, 1, &rin, &buf), TESS_OK);
    c->clear(s, 0);
    assert_int_equal(c->merge(s, 0, buf.data, buf.len, NULL), TESS_OK);
    c->clear(s, 2);
    assert_int_equal(c->step(s, 0, 2, &r0, 1), 2);
    view = c->snapshot(s, 2);
    const double base = (1 - 0.85) / 7;
    assert_true(view->values[0] == base + 0.85 * (hand_tick(3) / 2));
    assert_true(view->values[1] == base + 0.85 * (hand_tick(0) / 1));
    /* Vertex 2 reads vertex 1 (present) — fine; vertex 4 reads 3 — fine;
     * vertex 5 reads 4, which slot 0 lacks: the runtime broke its promise. */
    tess_query own2 = Q(2, TESS_GRAPH_OWN, 0);
    tess_region r2 = {1, 0, &own2, NULL};
    assert_int_equal(c->step(s, 0, 2, &r2, 1), TESS_ERR_MISUSE);
    assert_int_equal(c->step(s, 1, 1, &r2, 1), TESS_ERR_INVAL);
    assert_int_equal(c->step(s, 0, 3, &r2, 1), TESS_ERR_INVAL);
    tess_query bad = Q(0, TESS_GRAPH_IN_HOPS, 400);
    tess_region rbad = {1, 0, &bad, NULL};
    assert_int_equal(c->step(s, 0, 2, &rbad, 1), TESS_ERR_INVAL);
    assert_int_equal(c->pack(s, 0, &rbad, &buf), TESS_ERR_INVAL);

    tess_buf_free(&buf);
    c->destroy(s);
    tg_free(&f.t);
}

static void test_part(void **state)
{
    (void)state;
    test_graph t;
    small_graph(&t);
    tess_query parts[3];
    tess_ctx *ctx = test_ctx(1);
    assert_int_equal(tess_graph_part(ctx, t.g, 3, parts), 0);
    for (int p = 0; p < 3; p++) assert_query(&parts[p], p, TESS_GRAPH_OWN, 0);
    assert_int_equal(tess_graph_part(ctx, t.g, 2, parts), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "3 parts"));
    tess_finalize(ctx);
    tg_free(&t);
}

/* ------------------------------------------------------------ random graphs */

static uint64_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

/* Brute force: hop distances from partition p by repeated relaxation. */
static void brute_hops(const uint32_t (*edges)[2], size_t ne, uint32_t nv, const int32_t *part,
                       int p, int out_dir, int *dist)
{
    for (uint32_t v = 0; v < nv; v++) dist[v] = part[v] == p ? 0 : -1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t e = 0; e < ne; e++) {
            uint32_t from = out_dir ? edges[e][0] : edges[e][1];
            uint32_t to = out_dir ? edges[e][1] : edges[e][0];
            if (dist[from] >= 0 && (dist[to] < 0 || dist[to] > dist[from] + 1)) {
                dist[to] = dist[from] + 1;
                changed = 1;
            }
        }
    }
}

typedef struct random_case {
    uint32_t nv;
    size_t ne;
    int nparts;
    uint32_t (*edges)[2];
    int32_t *part;
    int *dist; /* [p][dir][v] */
} random_case;

static void random_case_make(random_case *rc, uint64_t seed, uint32_t nv, size_t ne, int nparts)
{
    rc->nv = nv;
    rc->ne = ne;
    rc->nparts = nparts;
    rc->edges = malloc(ne * sizeof *rc->edges);
    rc->part = malloc(nv * sizeof *rc->part);
    rc->dist = malloc((size_t)nparts * 2 * nv * sizeof *rc->dist);
    for (size_t e = 0; e < ne; e++) {
        rc->edges[e][0] = (uint32_t)(next_random(&seed) % nv);
        rc->edges[e][1] = (uint32_t)(next_random(&seed) % nv);
    }
    for (uint32_t v = 0; v < nv; v++)
        rc->part[v] = (int32_t)(next_random(&seed) % (uint64_t)nparts);
    for (int p = 0; p < nparts; p++)
        for (int dir = 0; dir < 2; dir++)
            brute_hops((const uint32_t(*)[2])rc->edges, ne, nv, rc->part, p, dir,
                       rc->dist + ((size_t)p * 2 + (size_t)dir) * nv);
}

static void random_case_free(random_case *rc)
{
    free(rc->edges);
    free(rc->part);
    free(rc->dist);
}

/* INNER(p, h) by brute force: v in p, and every vertex with a path of at
 * most h edges to v in p too (h rounds of "an in-neighbour outside"). */
static int brute_inner(const random_case *rc, int p, int h, uint32_t v)
{
    if (rc->part[v] != p) return 0;
    unsigned char *bad = calloc(rc->nv, 1), *next = calloc(rc->nv, 1);
    assert_non_null(bad);
    assert_non_null(next);
    for (uint32_t u = 0; u < rc->nv; u++) bad[u] = rc->part[u] != p;
    for (int r = 0; r < h; r++) { /* bad: reached from outside in <= r hops */
        memcpy(next, bad, rc->nv);
        for (size_t e = 0; e < rc->ne; e++)
            if (bad[rc->edges[e][0]]) next[rc->edges[e][1]] = 1;
        memcpy(bad, next, rc->nv);
    }
    int in = !bad[v];
    free(bad);
    free(next);
    return in;
}

static int brute_has(const random_case *rc, tess_graph_q q, uint32_t v)
{
    if (q.kind == TESS_GRAPH_ALL) return 1;
    if (q.kind == TESS_GRAPH_NONE) return 0;
    if (q.kind == TESS_GRAPH_INNER) return brute_inner(rc, q.part, q.hops, v);
    int dir = q.kind == TESS_GRAPH_OUT_HOPS;
    int h = q.kind == TESS_GRAPH_OWN ? 0 : q.hops;
    int d = rc->dist[((size_t)q.part * 2 + (size_t)dir) * rc->nv + v];
    return d >= 0 && d <= h;
}

static tess_query random_query(const random_case *rc, uint64_t *seed)
{
    int kind = (int)(next_random(seed) % 4);
    if (kind == TESS_GRAPH_ALL && next_random(seed) % 4 != 0) kind = TESS_GRAPH_IN_HOPS;
    int part = kind == TESS_GRAPH_ALL ? 0 : (int)(next_random(seed) % (uint64_t)rc->nparts);
    int hops = kind == TESS_GRAPH_IN_HOPS || kind == TESS_GRAPH_OUT_HOPS
                   ? (int)(next_random(seed) % 6)
                   : 0;
    return Q(part, kind, hops);
}

static void check_random(const random_case *rc, tess_graph *g, uint64_t seed, int queries)
{
    for (int p = 0; p < rc->nparts; p++)
        for (uint32_t v = 0; v < rc->nv; v += 7) {
            assert_int_equal(tess_graph_hops(g, p, TESS_GRAPH_IN_HOPS, v),
                             rc->dist[((size_t)p * 2) * rc->nv + v]);
            assert_int_equal(tess_graph_hops(g, p, TESS_GRAPH_OUT_HOPS, v),
                             rc->dist[((size_t)p * 2 + 1) * rc->nv + v]);
        }
    for (int i = 0; i < queries; i++) {
        tess_query a = random_query(rc, &seed), b = random_query(rc, &seed);
        tess_graph_q qa = tess_graph_q_of(&a), qb = tess_graph_q_of(&b);
        int64_t size = 0;
        int meet = 0;
        for (uint32_t v = 0; v < rc->nv; v++) {
            size += brute_has(rc, qa, v);
            meet |= brute_has(rc, qa, v) && brute_has(rc, qb, v);
        }
        assert_int_equal(tess_graph_query_size(g, &a), size);
        assert_int_equal(tess_graph_disjoint(g, &a, &b), !meet);
        /* RD gives a superset of one more hop; RX a subset of the vertices
         * of the query whose in-neighbours all lie in it. */
        tess_query rd, rx;
        tess_graph_rd(g, &a, &rd);
        tess_graph_rx(g, &a, &rx);
        tess_graph_q qrd = tess_graph_q_of(&rd), qrx = tess_graph_q_of(&rx);
        for (uint32_t v = 0; v < rc->nv; v++) {
            int reads = 0; /* v -> member */
            for (size_t e = 0; e < rc->ne; e++) {
                reads |= rc->edges[e][0] == v && brute_has(rc, qa, rc->edges[e][1]);
            }
            if (reads || brute_has(rc, qa, v)) assert_true(brute_has(rc, qrd, v));
            if (brute_has(rc, qrx, v)) {
                assert_true(brute_has(rc, qa, v));
                for (size_t e = 0; e < rc->ne; e++)
                    if (rc->edges[e][1] == v) assert_true(brute_has(rc, qa, rc->edges[e][0]));
            }
        }
        /* INNER against brute force, its size and its RX. */
        int p = (int)(next_random(&seed) % (uint64_t)rc->nparts), h = 1 + (int)(seed % 4);
        tess_query inner = Q(p, TESS_GRAPH_INNER, h);
        int64_t n = 0;
        for (uint32_t v = 0; v < rc->nv; v++) {
            tess_region r = {.npos = 1, .pos = &inner};
            int want = brute_inner(rc, p, h, v);
            n += want;
            assert_int_equal(tess_graph_region_contains(g, &r, v), want);
        }
        assert_int_equal(tess_graph_query_size(g, &inner), n);
    }
}

static void test_random_graphs(void **state)
{
    (void)state;
    static const struct {
        uint32_t nv;
        size_t ne;
        int nparts;
    } shapes[] = {{40, 30, 3}, {200, 400, 7}, {300, 300, 70}, {150, 900, 2}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        random_case rc;
        random_case_make(&rc, 17 + s, shapes[s].nv, shapes[s].ne, shapes[s].nparts);
        test_graph t;
        tg_build(&t, rc.nv, (const uint32_t(*)[2])rc.edges, rc.ne, rc.part, rc.nparts);
        check_random(&rc, t.g, 99 + s, 60);
        tg_free(&t);
        random_case_free(&rc);
    }
}

/* Several threads grow the labels of one graph at once. */
typedef struct thread_arg {
    const random_case *rc;
    tess_graph *g;
    uint64_t seed;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *a = p;
    check_random(a->rc, a->g, a->seed, 25);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    random_case rc;
    random_case_make(&rc, 5, 400, 700, 6);
    test_graph t;
    tg_build(&t, rc.nv, (const uint32_t(*)[2])rc.edges, rc.ne, rc.part, rc.nparts);
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){&rc, t.g, 1000 + (uint64_t)i};
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    tg_free(&t);
    random_case_free(&rc);
}

TEST_MAIN(cmocka_unit_test(test_create_rejects), cmocka_unit_test(test_small_labels),
          cmocka_unit_test(test_small_sizes), cmocka_unit_test(test_small_rd_rx),
          cmocka_unit_test(test_small_disjoint), cmocka_unit_test(test_small_regions),
          cmocka_unit_test(test_pack_merge), cmocka_unit_test(test_step),
          cmocka_unit_test(test_part), cmocka_unit_test(test_random_graphs),
          cmocka_unit_test(test_threads))
