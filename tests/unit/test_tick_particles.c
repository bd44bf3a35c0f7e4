/*
 * test_tick_particles.c — the particles state class (tick_particles.h)
 * driven directly, without the engine: the packed format and pack/merge
 * round trips, malformed buffers, region evaluation (half-open edges,
 * infinite bounds, neg rectangles), STEP over a region with a trivial STEP
 * (candidates from WD, particles already present skipped, particles leaving
 * the region dropped, a version filled in several calls, candidates pruned
 * by the region's negs), neighbour lists
 * against brute force in ascending id order whatever the insertion order,
 * snapshot and unpack; the checking mode's reads across held regions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/rng.h"
#include "tessera/tick_particles.h"

#define MAXN 400

/* The test application: NEW puts particle i at pts[i]; STEP moves by
 * (shift, 0) and records what it was given. */
typedef struct fixture {
    tess_particle_fns fns;
    tess_tick_app app;
    tess_particle pts[MAXN];
    double shift;  /* STEP: x += shift */
    double reach;  /* WD grows rectangles by this */
    int64_t steps; /* STEP calls */
    int sorted_ok; /* every neighbour list was ascending */
    /* neighbours seen for each id, as a count and an order-insensitive sum */
    uint64_t nbr_count[MAXN];
    uint64_t nbr_hash[MAXN];
} fixture;

static void fx_init(void *user, uint64_t id, tess_particle *out)
{
    fixture *f = user;
    *out = f->pts[id];
    out->id = 999999; /* the class sets the id */
}

static void fx_step(void *user, const tess_particle *self, const tess_particle *nbrs, size_t n,
                    int64_t tick, tess_particle *out)
{
    fixture *f = user;
    (void)tick;
    f->steps++;
    for (size_t i = 1; i < n; i++)
        if (nbrs[i - 1].id >= nbrs[i].id) f->sorted_ok = 0;
    f->nbr_count[self->id] = n;
    f->nbr_hash[self->id] = 0;
    for (size_t i = 0; i < n; i++) f->nbr_hash[self->id] += tess_mix64(nbrs[i].id);
    *out = *self;
    out->x = self->x + f->shift;
    out->vx = self->vx + 1.0;
}

static void fx_wd(void *user, const tess_query *q, tess_query *out)
{
    fixture *f = user;
    tess_particle_rect r = tess_particle_rect_of(q);
    r.x0 -= f->reach, r.x1 += f->reach, r.y0 -= f->reach, r.y1 += f->reach;
    *out = tess_particle_query(r);
}

static fixture *fixture_new(uint64_t n, double radius)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->fns.count = n;
    f->fns.radius = radius;
    f->fns.init = fx_init;
    f->fns.step = fx_step;
    f->app.name = "test";
    f->app.state = &tess_particles_class;
    f->app.user = f;
    f->app.class_fns = &f->fns;
    f->app.wd = fx_wd;
    f->sorted_ok = 1;
    for (uint64_t i = 0; i < n; i++)
        f->pts[i] = (tess_particle){i, (double)i, -(double)i, 0.5 * (double)i, 0.25};
    return f;
}

static void *instance(fixture *f, int nslots)
{
    tess_query all =
        tess_particle_query((tess_particle_rect){-INFINITY, INFINITY, -INFINITY, INFINITY});
    void *st = tess_particles_class.create(&f->app, nslots, &all, &all);
    assert_non_null(st);
    return st;
}

/* The end of every test: the class instance, then the fixture it reads. */
static void fixture_free(fixture *f, void *st)
{
    tess_particles_class.destroy(st);
    free(f);
}

static tess_query rect(double x0, double x1, double y0, double y1)
{
    return tess_particle_query((tess_particle_rect){x0, x1, y0, y1});
}

static tess_region region1(const tess_query *q) { return (tess_region){1, 0, q, NULL}; }

static const tess_particles_view *view(void *st, int slot)
{
    return tess_particles_class.snapshot(st, slot);
}

/* The ids of a slot as a bitmap (n <= 64). */
static uint64_t ids_of(void *st, int slot)
{
    const tess_particles_view *v = view(st, slot);
    uint64_t bits = 0;
    for (int64_t i = 0; i < v->count; i++) {
        assert_true(v->p[i].id < 64);
        assert_false(bits & (1ull << v->p[i].id)); /* no id twice */
        bits |= 1ull << v->p[i].id;
    }
    return bits;
}

/* ------------------------------------------------------------------ format */

static void test_encode_little_endian(void **state)
{
    (void)state;
    tess_particle p = {0x0102030405060708ull, 1.0, -2.0, 0.5, 3.0};
    unsigned char b[TESS_PARTICLE_BYTES];
    tess_particle_encode(&p, b);
    assert_int_equal(b[0], 0x08);
    assert_int_equal(b[7], 0x01);
    /* 1.0 = 0x3ff0000000000000: little-endian, the exponent byte last. */
    assert_int_equal(b[8], 0x00);
    assert_int_equal(b[15], 0x3f);
    assert_int_equal(b[14], 0xf0);
    tess_particle q;
    tess_particle_decode(b, &q);
    assert_memory_equal(&p, &q, sizeof p);
    assert_int_equal(sizeof(tess_particle), TESS_PARTICLE_BYTES);
}

static void test_pack_merge_round_trip(void **state)
{
    (void)state;
    fixture *f = fixture_new(20, 1.0);
    void *st = instance(f, 3);
    tess_query all = rect(-INFINITY, INFINITY, -INFINITY, INFINITY);
    tess_region rall = region1(&all);
    assert_int_equal(tess_particles_class.init(st, 0, &rall), 0);
    assert_int_equal(tess_particles_class.count(st, 0, &rall), 20);

    /* ids 5..9 have x in [5, 10) */
    tess_query mid = rect(5, 10, -INFINITY, INFINITY);
    tess_region rmid = region1(&mid);
    tess_buf buf = {0};
    assert_int_equal(tess_particles_class.pack(st, 0, &rmid, &buf), 0);
    assert_int_equal(buf.len, 5 * TESS_PARTICLE_BYTES);
    assert_int_equal(tess_particles_class.merge(st, 1, buf.data, buf.len, NULL), 0);
    assert_int_equal(ids_of(st, 1), 0x3e0ull);
    const tess_particles_view *v = view(st, 1);
    for (int64_t i = 0; i < v->count; i++)
        assert_memory_equal(&v->p[i], &f->pts[v->p[i].id], sizeof(tess_particle));

    /* Merging again adds nothing (ids already present). */
    assert_int_equal(tess_particles_class.merge(st, 1, buf.data, buf.len, NULL), 0);
    assert_int_equal(view(st, 1)->count, 5);

    /* merge with a region keeps only the particles in it: x in [7, 8.5) */
    tess_query some = rect(7, 8.5, -INFINITY, INFINITY);
    tess_region rsome = region1(&some);
    assert_int_equal(tess_particles_class.merge(st, 2, buf.data, buf.len, &rsome), 0);
    assert_int_equal(ids_of(st, 2), 0x180ull);

    /* clear empties a slot and forgets its ids */
    tess_particles_class.clear(st, 1);
    assert_int_equal(view(st, 1)->count, 0);
    assert_int_equal(tess_particles_class.merge(st, 1, buf.data, buf.len, NULL), 0);
    assert_int_equal(ids_of(st, 1), 0x3e0ull);

    tess_buf_free(&buf);
    fixture_free(f, st);
}

/* pack() skips blocks of 16 particles by their bounding boxes, kept
 * between packs; particles merged in after a pack (into the last, partial
 * block and beyond) must be found by the next. */
static size_t packed_count(void *st, int slot, double x0, double x1)
{
    tess_query q = rect(x0, x1, -INFINITY, INFINITY);
    tess_region r = region1(&q);
    tess_buf buf = {0};
    assert_int_equal(tess_particles_class.pack(st, slot, &r, &buf), 0);
    size_t n = buf.len / TESS_PARTICLE_BYTES;
    tess_buf_free(&buf);
    return n;
}

static void test_pack_after_merge_appends(void **state)
{
    (void)state;
    fixture *f = fixture_new(40, 1.0);
    void *st = instance(f, 2);
    tess_query lo = rect(0, 20, -INFINITY, INFINITY), hi = rect(20, 40, -INFINITY, INFINITY);
    tess_region rlo = region1(&lo), rhi = region1(&hi);
    assert_int_equal(tess_particles_class.init(st, 0, &rlo), 0);
    assert_int_equal(tess_particles_class.init(st, 1, &rhi), 0);
    assert_int_equal(packed_count(st, 0, 0, 3), 3); /* boxes built for 0..19 */
    assert_int_equal(packed_count(st, 0, 20, 40), 0);
    /* A block wholly inside is copied at once; x = 15 is outside [0, 15). */
    assert_int_equal(packed_count(st, 0, 0, 16), 16);
    assert_int_equal(packed_count(st, 0, 0, 15), 15);
    tess_buf buf = {0};
    assert_int_equal(tess_particles_class.pack(st, 1, &rhi, &buf), 0);
    assert_int_equal(tess_particles_class.merge(st, 0, buf.data, buf.len, NULL), 0);
    tess_buf_free(&buf);
    assert_int_equal(packed_count(st, 0, 20, 40), 20);
    assert_int_equal(packed_count(st, 0, 18, 22), 4); /* across the old last block */
    assert_int_equal(packed_count(st, 0, 0, 3), 3);
    fixture_free(f, st);
}

static void test_merge_rejects_malformed(void **state)
{
    (void)state;
    fixture *f = fixture_new(4, 1.0);
    void *st = instance(f, 1);
    unsigned char rec[2 * TESS_PARTICLE_BYTES];
    tess_particle good = {1, 0, 0, 0, 0}, bad_id = {4, 0, 0, 0, 0}, nan = {2, NAN, 0, 0, 0};
    tess_particle_encode(&good, rec);

    assert_int_equal(tess_particles_class.merge(st, 0, rec, TESS_PARTICLE_BYTES - 1, NULL),
                     TESS_ERR_FORMAT);
    tess_particle_encode(&bad_id, rec + TESS_PARTICLE_BYTES);
    assert_int_equal(tess_particles_class.merge(st, 0, rec, sizeof rec, NULL), TESS_ERR_FORMAT);
    tess_particle_encode(&nan, rec + TESS_PARTICLE_BYTES);
    assert_int_equal(tess_particles_class.merge(st, 0, rec, sizeof rec, NULL), TESS_ERR_FORMAT);
    assert_int_equal(view(st, 0)->count, 0); /* nothing merged from a bad buffer */

    assert_int_equal(tess_particles_class.merge(st, 0, rec, TESS_PARTICLE_BYTES, NULL), 0);
    assert_int_equal(tess_particles_class.merge(st, 0, NULL, 0, NULL), 0);
    assert_int_equal(view(st, 0)->count, 1);
    assert_int_equal(tess_particles_class.merge(st, 1, rec, TESS_PARTICLE_BYTES, NULL),
                     TESS_ERR_INVAL);   /* no such slot */
    tess_particles_class.destroy(NULL); /* must be a no-op */
    fixture_free(f, st);
}

static void test_create_rejects(void **state)
{
    (void)state;
    fixture *f = fixture_new(4, 1.0);
    tess_query all = rect(-INFINITY, INFINITY, -INFINITY, INFINITY);
    assert_null(tess_particles_class.create(&f->app, 0, &all, &all));
    f->fns.radius = -1;
    assert_null(tess_particles_class.create(&f->app, 1, &all, &all));
    f->fns.radius = NAN;
    assert_null(tess_particles_class.create(&f->app, 1, &all, &all));
    f->fns.radius = 1;
    f->fns.step = NULL;
    assert_null(tess_particles_class.create(&f->app, 1, &all, &all));
    free(f);
}

/* ------------------------------------------------------------------ regions */

static void test_region_filtering(void **state)
{
    (void)state;
    /* Half-open: [0, 1) contains 0 but not 1. */
    tess_particle_rect unit = {0, 1, 0, 1};
    assert_true(tess_particle_rect_contains(&unit, 0, 0));
    assert_false(tess_particle_rect_contains(&unit, 1, 0.5));
    assert_false(tess_particle_rect_contains(&unit, 0.5, 1));
    assert_false(tess_particle_rect_contains(&unit, NAN, 0.5));
    tess_particle_rect plane = {-INFINITY, INFINITY, -INFINITY, INFINITY};
    assert_true(tess_particle_rect_contains(&plane, -1e308, 1e308));

    /* pos: x < 10 and y < 0 (two rectangles); neg: x in [2, 4) */
    tess_query pos[2] = {rect(-INFINITY, 10, -INFINITY, INFINITY),
                         rect(-INFINITY, INFINITY, -INFINITY, 0)};
    tess_query neg[1] = {rect(2, 4, -INFINITY, INFINITY)};
    tess_region r = {2, 1, pos, neg};
    assert_true(tess_particle_region_contains(&r, 1, -1));
    assert_false(tess_particle_region_contains(&r, 1, 0));   /* y = 0 outside [.., 0) */
    assert_false(tess_particle_region_contains(&r, 10, -1)); /* x = 10 outside */
    assert_false(tess_particle_region_contains(&r, 2, -1));  /* in neg */
    assert_true(tess_particle_region_contains(&r, 4, -1));   /* neg is half-open too */

    /* particles at (i, -i): in r for i in {1, 4..9}; count and pack agree. */
    fixture *f = fixture_new(20, 1.0);
    void *st = instance(f, 1);
    assert_int_equal(tess_particles_class.init(st, 0, &r), 0);
    assert_int_equal(ids_of(st, 0), 0x3f2ull);
    tess_query all = rect(-INFINITY, INFINITY, -INFINITY, INFINITY);
    tess_region rall = region1(&all);
    assert_int_equal(tess_particles_class.init(st, 0, &rall), 0); /* adds the rest only */
    assert_int_equal(view(st, 0)->count, 20);
    assert_int_equal(tess_particles_class.count(st, 0, &r), 7);
    tess_buf buf = {0};
    assert_int_equal(tess_particles_class.pack(st, 0, &r, &buf), 0);
    assert_int_equal(buf.len, 7 * TESS_PARTICLE_BYTES);
    tess_buf_free(&buf);
    fixture_free(f, st);
}

/* pack() and count() of r against a filter of the snapshot, in slot order. */
static void check_pack_is_filter(void *st, const tess_region *r)
{
    const tess_particles_view *v = view(st, 0);
    tess_buf want = {0}, got = {0};
    int64_t n = 0;
    for (int64_t i = 0; i < v->count; i++) {
        const tess_particle *p = &v->p[i];
        if (!tess_particle_region_contains(r, p->x, p->y)) continue;
        unsigned char *d = tess_buf_reserve(&want, TESS_PARTICLE_BYTES);
        assert_non_null(d);
        tess_particle_encode(p, d);
        want.len += TESS_PARTICLE_BYTES;
        n++;
    }
    assert_int_equal(tess_particles_class.pack(st, 0, r, &got), 0);
    assert_int_equal(got.len, want.len);
    if (n > 0) assert_memory_equal(got.data, want.data, want.len);
    assert_int_equal(tess_particles_class.count(st, 0, r), n);
    tess_buf_free(&want);
    tess_buf_free(&got);
}

/* Packing skips blocks of particles whose box misses the region: the
 * bytes must be those of a full scan, in the slot's order, for a slot in
 * spatial order (blocks skipped) or not, on region edges (integer
 * coordinates), with negs and infinite bounds, and after the slot changed. */
static void test_pack_skips_blocks_in_order(void **state)
{
    (void)state;
    fixture *f = fixture_new(MAXN, 1.0);
    for (uint64_t i = 0; i < MAXN; i++) { /* rows of 20 in id order, then scattered */
        double x = (double)(i % 20), y = (double)(i / 20);
        if (i >= MAXN / 2) x = (double)(tess_mix64(i) % 20), y = (double)(tess_mix64(~i) % 20);
        f->pts[i] = (tess_particle){i, x, y, 0, 0};
    }
    void *st = instance(f, 1);
    tess_query lower = rect(-INFINITY, INFINITY, -INFINITY, 10);
    tess_region rl = region1(&lower);
    assert_int_equal(tess_particles_class.init(st, 0, &rl), 0);
    for (int round = 0; round < 2; round++) {
        for (uint64_t k = 0; k < 200; k++) {
            double x0 = (double)(tess_mix64(k) % 22) - 1,
                   y0 = (double)(tess_mix64(k + 1000) % 22) - 1;
            double w = (double)(tess_mix64(k + 2000) % 6), h = (double)(tess_mix64(k + 3000) % 6);
            tess_query pos[2] = {rect(x0, x0 + w, y0, y0 + h),
                                 rect(k % 3 ? -INFINITY : x0 + 1, INFINITY, -INFINITY, INFINITY)};
            tess_query neg[1] = {rect(x0 + 1, x0 + 2, -INFINITY, INFINITY)};
            tess_region r = {1 + (int)(k % 2), (int)(k % 5 == 0), pos, neg};
            check_pack_is_filter(st, &r);
        }
        /* Merge the rest: the slot changes, its block boxes must too. */
        tess_query all = rect(-INFINITY, INFINITY, -INFINITY, INFINITY);
        tess_region ra = region1(&all);
        assert_int_equal(tess_particles_class.init(st, 0, &ra), 0);
    }
    assert_int_equal(view(st, 0)->count, MAXN);
    fixture_free(f, st);
}

/* ------------------------------------------------------------------ step */

/* Checking mode (TESS_TICK_CHECK=1): a STEP's reads may span two regions
 * a version holds, recorded apart (computing ahead per side: its own part
 * and a neighbour's merged one), and a gap between two is still caught. */
static void test_check_reads_across_held_regions(void **state)
{
    (void)state;
    for (int gap = 0; gap <= 1; gap++) {
        setenv("TESS_TICK_CHECK", "1", 1);
        fixture *f = fixture_new(2, 1.0);
        f->pts[0] = (tess_particle){0, 9.5, 0.0, 0.0, 0.0}; /* reads [8.5, 10.5] x [-1, 1] */
        f->pts[1] = (tess_particle){1, 12.0, 0.0, 0.0, 0.0};
        void *st = instance(f, 2);
        unsetenv("TESS_TICK_CHECK");
        tess_query own = rect(0, 10, -INFINITY, INFINITY);
        tess_query side = rect(gap ? 10.25 : 10, 20, -INFINITY, INFINITY);
        tess_region ro = region1(&own), rs = region1(&side);
        assert_int_equal(tess_particles_class.init(st, 0, &ro), TESS_OK);
        assert_int_equal(tess_particles_class.init(st, 0, &rs), TESS_OK);
        tess_query target = rect(9, 10, -INFINITY, INFINITY);
        tess_region rt = region1(&target);
        int64_t got = tess_particles_class.step(st, 0, 1, &rt, 3);
        if (gap) assert_int_equal(got, TESS_ERR_MISUSE); /* [10, 10.25) is not held */
        else assert_int_equal(got, 1);
        fixture_free(f, st);
    }
}

/* n particles at x = id (y = -id) in slot 0 of an instance of nslots;
 * STEP moves x by +1.5; WD grows by 2. */
static void *shifted_line(fixture **out, uint64_t n, int nslots)
{
    fixture *f = fixture_new(n, 0.0);
    f->shift = 1.5;
    f->reach = 2;
    void *st = instance(f, nslots);
    tess_query all = rect(-INFINITY, INFINITY, -INFINITY, INFINITY);
    tess_region rall = region1(&all);
    assert_int_equal(tess_particles_class.init(st, 0, &rall), 0);
    *out = f;
    return st;
}

static void test_step_region(void **state)
{
    (void)state;
    fixture *f;
    void *st = shifted_line(&f, 20, 3);

    /* Region x in [5, 10): at tick+1 ids 4..8 (x = 5.5 .. 9.5) */
    tess_query q = rect(5, 10, -INFINITY, INFINITY);
    tess_region r = region1(&q);
    assert_int_equal(tess_particles_class.step(st, 0, 1, &r, 7), 5);
    assert_int_equal(ids_of(st, 1), 0x1f0ull);
    const tess_particles_view *v = view(st, 1);
    for (int64_t i = 0; i < v->count; i++) {
        assert_true(v->p[i].x == (double)v->p[i].id + 1.5);
        assert_true(v->p[i].vx == 0.5 * (double)v->p[i].id + 1.0);
    }
    /* Candidates are only those in WD(r) = [3, 12): ids 3..11. */
    assert_int_equal(f->steps, 9);

    /* Again: the particles of r are already there and are not computed
     * again; only the candidates that left r (ids 3, 9, 10, 11) are. */
    f->steps = 0;
    assert_int_equal(tess_particles_class.step(st, 0, 1, &r, 7), 0);
    assert_int_equal(f->steps, 4);

    /* Filled in two calls: [0, 5) then [5, 10) minus [7, 8) gives the same
     * particles as one call over [0, 10) minus [7, 8). */
    tess_query q0 = rect(0, 5, -INFINITY, INFINITY), hole = rect(7, 8, -INFINITY, INFINITY);
    tess_region r0 = region1(&q0), rh = {1, 1, &q, &hole};
    assert_int_equal(tess_particles_class.step(st, 0, 2, &r0, 7), 4); /* ids 0..3 */
    assert_int_equal(tess_particles_class.step(st, 0, 2, &rh, 7), 4); /* 4, 5, 7, 8 */
    assert_int_equal(ids_of(st, 2), 0x1bfull);

    /* An empty region computes nothing; a bad slot is an error. */
    tess_query empty = rect(3, 3, -INFINITY, INFINITY);
    tess_region re = region1(&empty);
    assert_int_equal(tess_particles_class.step(st, 0, 2, &re, 7), 0);
    assert_true(tess_particles_class.step(st, 0, 0, &r, 7) < 0);
    assert_true(tess_particles_class.step(st, 0, 5, &r, 7) < 0);
    fixture_free(f, st);
}

/* A region with negs (computing ahead per side subtracts the late sides):
 * the kept particles are those of stepping the positive part and dropping
 * what lands in a neg, but the candidates are pruned to WD of the
 * region's pieces, so a particle that can only land in a neg is not
 * stepped.  Many negs (more pieces than the class cuts) give the same
 * particles, unpruned. */
static void test_step_prunes_by_negs(void **state)
{
    (void)state;
    fixture *f;
    void *st = shifted_line(&f, 40, 4);
    tess_query pos = rect(0, 40, -INFINITY, INFINITY);
    tess_region rpos = region1(&pos);
    assert_int_equal(tess_particles_class.step(st, 0, 1, &rpos, 7), 39); /* ids 0..38 */

    tess_query late = rect(10, 30, -INFINITY, INFINITY);
    tess_region r = {1, 1, &pos, &late};
    f->steps = 0;
    assert_int_equal(tess_particles_class.step(st, 0, 2, &r, 7), 19); /* 0..8, 29..38 */
    assert_int_equal(ids_of(st, 2), ((1ull << 9) - 1) | (((1ull << 10) - 1) << 29));
    assert_int_equal(f->steps, 24); /* WD [-2, 12) and [28, 42): ids 0..11, 28..39 */

    /* 12 negs shorter than the region (3 pieces each) cut it into more
     * pieces than the class keeps: every candidate of WD(pos) is stepped,
     * and the same particles are kept. */
    tess_query holes[12];
    for (int i = 0; i < 12; i++) holes[i] = rect(3 * i + 0.5, 3 * i + 1.0, -50, 50);
    tess_query narrow = rect(0, 40, -100, 100); /* finite y: pieces are 2-D */
    tess_region rmany = {1, 12, &narrow, holes};
    f->steps = 0;
    int64_t kept = tess_particles_class.step(st, 0, 3, &rmany, 7);
    uint64_t want = 0;
    for (uint64_t id = 0; id < 40; id++) {
        double x = (double)id + 1.5;
        int in = x < 40;
        for (int i = 0; i < 12; i++) in &= !(x >= 3 * i + 0.5 && x < 3 * i + 1.0);
        if (in) want |= 1ull << id;
    }
    assert_int_equal(kept, __builtin_popcountll(want));
    assert_int_equal(ids_of(st, 3), want);
    assert_int_equal(f->steps, 40);
    fixture_free(f, st);
}

/* ------------------------------------------------------------------ neighbours */

/* A random cloud in a square of the given side (with one particle far
 * away: a sparse bounding box, so a few large cells), inserted in a
 * shuffled order through merge(): every STEP sees exactly the brute-force
 * neighbour set, in ascending id order. */
static void neighbours_match_brute_force(double side, int far)
{
    const uint64_t n = MAXN;
    const double radius = 3.0;
    fixture *f = fixture_new(n, radius);
    f->reach = 0;
    for (uint64_t i = 0; i < n; i++) {
        f->pts[i].x = side * tess_rng_unit(1, i, 0) - side / 2;
        f->pts[i].y = side * tess_rng_unit(1, i, 1) - side / 2;
    }
    f->pts[7].x = f->pts[3].x + radius; /* exactly at the radius: a neighbour */
    f->pts[7].y = f->pts[3].y;
    f->pts[9] = f->pts[11]; /* two particles at one place */
    f->pts[9].id = 9;
    if (far) f->pts[300].x = 1e6; /* far away: a sparse bounding box */

    /* Shuffle the insertion order. */
    uint64_t order[MAXN];
    for (uint64_t i = 0; i < n; i++) order[i] = i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = tess_rng_u64(2, 0, i) % (i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    unsigned char *buf = malloc(n * TESS_PARTICLE_BYTES);
    assert_non_null(buf);
    for (uint64_t i = 0; i < n; i++)
        tess_particle_encode(&f->pts[order[i]], buf + i * TESS_PARTICLE_BYTES);
    void *st = instance(f, 2);
    assert_int_equal(tess_particles_class.merge(st, 0, buf, n * TESS_PARTICLE_BYTES, NULL), 0);

    tess_query all = rect(-INFINITY, INFINITY, -INFINITY, INFINITY);
    tess_region rall = region1(&all);
    assert_int_equal(tess_particles_class.step(st, 0, 1, &rall, 0), (int64_t)n);
    assert_true(f->sorted_ok);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t count = 0, hash = 0;
        for (uint64_t j = 0; j < n; j++) {
            double dx = f->pts[j].x - f->pts[i].x, dy = f->pts[j].y - f->pts[i].y;
            if (j != i && dx * dx + dy * dy <= radius * radius) count++, hash += tess_mix64(j);
        }
        assert_int_equal(f->nbr_count[i], count);
        assert_int_equal(f->nbr_hash[i], hash);
    }
    assert_true(f->nbr_count[9] >= 1 && f->nbr_count[3] >= 1);
    free(buf);
    fixture_free(f, st);
}

/* Spread out with one far away: all in a few cells, hundreds of
 * candidates a cell (the radix sort). */
static void test_neighbours_match_brute_force(void **state)
{
    (void)state;
    neighbours_match_brute_force(40.0, 1);
}

/* Spread out: cells as wide as the radius, a few particles each, tens of
 * candidates a cell (the shell sort). */
static void test_neighbours_small_cells(void **state)
{
    (void)state;
    neighbours_match_brute_force(40.0, 0);
}

/* Crowded (a gathered school): every particle a candidate of every cell. */
static void test_neighbours_crowded(void **state)
{
    (void)state;
    neighbours_match_brute_force(6.0, 0);
}

/* ------------------------------------------------------------------ unpack */

static void test_unpack(void **state)
{
    (void)state;
    tess_particle p[3] = {{2, 1, 2, 3, 4}, {0, 5, 6, 7, 8}, {1, 9, 10, 11, 12}}, out[3];
    unsigned char b[3 * TESS_PARTICLE_BYTES];
    for (int i = 0; i < 3; i++) tess_particle_encode(&p[i], b + i * TESS_PARTICLE_BYTES);
    assert_int_equal(tess_particles_unpack(b, sizeof b, 3, out), 0);
    assert_memory_equal(&out[0], &p[1], sizeof out[0]);
    assert_memory_equal(&out[2], &p[0], sizeof out[0]);
    assert_int_equal(tess_particles_unpack(b, sizeof b - 1, 3, out), TESS_ERR_FORMAT);
    assert_int_equal(tess_particles_unpack(b, sizeof b, 4, out), TESS_ERR_FORMAT); /* missing */
    assert_int_equal(tess_particles_unpack(b, sizeof b, 2, out), TESS_ERR_FORMAT); /* extra */
    p[2].id = 2; /* id 2 twice, 1 missing */
    tess_particle_encode(&p[2], b + 2 * TESS_PARTICLE_BYTES);
    assert_int_equal(tess_particles_unpack(b, sizeof b, 3, out), TESS_ERR_FORMAT);
}

TEST_MAIN(cmocka_unit_test(test_encode_little_endian), cmocka_unit_test(test_pack_merge_round_trip),
          cmocka_unit_test(test_pack_skips_blocks_in_order),
          cmocka_unit_test(test_pack_after_merge_appends),
          cmocka_unit_test(test_merge_rejects_malformed), cmocka_unit_test(test_create_rejects),
          cmocka_unit_test(test_region_filtering), cmocka_unit_test(test_step_region),
          cmocka_unit_test(test_step_prunes_by_negs),
          cmocka_unit_test(test_check_reads_across_held_regions),
          cmocka_unit_test(test_neighbours_match_brute_force),
          cmocka_unit_test(test_neighbours_small_cells), cmocka_unit_test(test_neighbours_crowded),
          cmocka_unit_test(test_unpack))
