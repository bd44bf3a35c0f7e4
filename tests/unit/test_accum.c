/*
 * test_accum.c — accumulators: every built-in kind over every element type
 * (vector values of three elements), identities, integer wrap-around, the
 * checks of tess__accum_check, a user accumulator through its four
 * functions, and the dense fast path against a loop of single applies.
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
#include "table/accum.h"

enum { ELEMS = 3 };

static const tess_accum builtin_kinds[] = {TESS_ACC_SUM, TESS_ACC_MIN, TESS_ACC_MAX,
                                           TESS_ACC_PRODUCT};
static const tess_elem elem_types[] = {TESS_I32, TESS_I64, TESS_F32, TESS_F64};

static size_t elem_bytes(tess_elem e) { return e == TESS_I32 || e == TESS_F32 ? 4 : 8; }

static tess__accum make_accum(tess_accum kind, tess_elem elem, size_t value_size)
{
    tess__accum a;
    tess__accum_setup(&a, kind, elem, value_size, NULL);
    return a;
}

/* Element i of a value of type e, widened to double (exact for the small
 * integers these tests use). */
static double elem_at(tess_elem e, const void *v, size_t i)
{
    switch (e) {
    case TESS_I32: return ((const int32_t *)v)[i];
    case TESS_I64: return (double)((const int64_t *)v)[i];
    case TESS_F32: return ((const float *)v)[i];
    default: return ((const double *)v)[i];
    }
}

static void elem_set(tess_elem e, void *v, size_t i, double x)
{
    switch (e) {
    case TESS_I32: ((int32_t *)v)[i] = (int32_t)x; break;
    case TESS_I64: ((int64_t *)v)[i] = (int64_t)x; break;
    case TESS_F32: ((float *)v)[i] = (float)x; break;
    default: ((double *)v)[i] = x; break;
    }
}

static void fill(tess_elem e, void *v, const double *x)
{
    for (size_t i = 0; i < ELEMS; i++) elem_set(e, v, i, x[i]);
}

static void assert_elems(tess_elem e, const void *v, const double *want)
{
    for (size_t i = 0; i < ELEMS; i++) assert_true(elem_at(e, v, i) == want[i]);
}

/* identity, then two updates; merge of the two updates then one apply must
 * agree (built-ins are associative on these exact values). */
static void check_kind(tess_accum kind, tess_elem e, const double *want)
{
    tess__accum a = make_accum(kind, e, ELEMS * elem_bytes(e));
    const double u1[ELEMS] = {2, -3, 5}, u2[ELEMS] = {4, 7, -1};
    uint8_t v[ELEMS * 8], w[ELEMS * 8], p[ELEMS * 8], q[ELEMS * 8], out[ELEMS * 8];
    fill(e, p, u1);
    fill(e, q, u2);
    tess__accum_identity(&a, v);
    tess__accum_identity(&a, w);
    tess__accum_apply(&a, v, p);
    tess__accum_apply(&a, v, q);
    assert_elems(e, v, want);
    tess__accum_merge(&a, p, q);
    tess__accum_apply(&a, w, p);
    assert_elems(e, w, want);
    tess__accum_view(&a, out, v);
    assert_memory_equal(out, v, ELEMS * elem_bytes(e));
}

static void test_every_kind_and_type(void **state)
{
    (void)state;
    const double sum[ELEMS] = {6, 4, 4}, mn[ELEMS] = {2, -3, -1}, mx[ELEMS] = {4, 7, 5},
                 prod[ELEMS] = {8, -21, -5};
    for (size_t t = 0; t < 4; t++) {
        check_kind(TESS_ACC_SUM, elem_types[t], sum);
        check_kind(TESS_ACC_MIN, elem_types[t], mn);
        check_kind(TESS_ACC_MAX, elem_types[t], mx);
        check_kind(TESS_ACC_PRODUCT, elem_types[t], prod);
    }
}

static void test_identities(void **state)
{
    (void)state;
    int32_t i32[ELEMS];
    int64_t i64[ELEMS];
    float f32[ELEMS];
    double f64[ELEMS];
    tess__accum a = make_accum(TESS_ACC_MIN, TESS_I32, sizeof i32);
    tess__accum_identity(&a, i32);
    for (int i = 0; i < ELEMS; i++) assert_int_equal(i32[i], INT32_MAX);
    a = make_accum(TESS_ACC_MAX, TESS_I32, sizeof i32);
    tess__accum_identity(&a, i32);
    for (int i = 0; i < ELEMS; i++) assert_int_equal(i32[i], INT32_MIN);
    a = make_accum(TESS_ACC_MIN, TESS_I64, sizeof i64);
    tess__accum_identity(&a, i64);
    for (int i = 0; i < ELEMS; i++) assert_true(i64[i] == INT64_MAX);
    a = make_accum(TESS_ACC_MAX, TESS_I64, sizeof i64);
    tess__accum_identity(&a, i64);
    for (int i = 0; i < ELEMS; i++) assert_true(i64[i] == INT64_MIN);
    a = make_accum(TESS_ACC_MIN, TESS_F32, sizeof f32);
    tess__accum_identity(&a, f32);
    for (int i = 0; i < ELEMS; i++) assert_true(isinf(f32[i]) && f32[i] > 0);
    a = make_accum(TESS_ACC_MAX, TESS_F64, sizeof f64);
    tess__accum_identity(&a, f64);
    for (int i = 0; i < ELEMS; i++) assert_true(isinf(f64[i]) && f64[i] < 0);
    a = make_accum(TESS_ACC_PRODUCT, TESS_F32, sizeof f32);
    tess__accum_identity(&a, f32);
    for (int i = 0; i < ELEMS; i++) assert_true(f32[i] == 1.0f);
    a = make_accum(TESS_ACC_SUM, TESS_I64, sizeof i64);
    memset(i64, 0xff, sizeof i64);
    tess__accum_identity(&a, i64);
    for (int i = 0; i < ELEMS; i++) assert_true(i64[i] == 0);
}

/* min/max identities must lose against the extreme values themselves. */
static void test_extremes_beat_identity(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_MIN, TESS_I64, sizeof(int64_t));
    int64_t v, big = INT64_MAX - 1;
    tess__accum_identity(&a, &v);
    tess__accum_apply(&a, &v, &big);
    assert_true(v == INT64_MAX - 1);
    a = make_accum(TESS_ACC_MAX, TESS_I32, sizeof(int32_t));
    int32_t w, low = INT32_MIN;
    tess__accum_identity(&a, &w);
    tess__accum_apply(&a, &w, &low);
    assert_int_equal(w, INT32_MIN);
    a = make_accum(TESS_ACC_MAX, TESS_F64, sizeof(double));
    double d, huge_neg = -1e308;
    tess__accum_identity(&a, &d);
    tess__accum_apply(&a, &d, &huge_neg);
    assert_true(d == -1e308);
}

static void test_integer_wraparound(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_SUM, TESS_I32, sizeof(int32_t));
    int32_t i = INT32_MAX, one = 1, minus_one = -1;
    tess__accum_apply(&a, &i, &one);
    assert_int_equal(i, INT32_MIN);
    tess__accum_apply(&a, &i, &minus_one);
    assert_int_equal(i, INT32_MAX);
    a = make_accum(TESS_ACC_SUM, TESS_I64, sizeof(int64_t));
    int64_t l = INT64_MIN, m1 = -1;
    tess__accum_apply(&a, &l, &m1);
    assert_true(l == INT64_MAX);
    a = make_accum(TESS_ACC_PRODUCT, TESS_I64, sizeof(int64_t));
    int64_t p = INT64_MAX, two = 2;
    tess__accum_apply(&a, &p, &two);
    assert_true(p == -2);
    a = make_accum(TESS_ACC_PRODUCT, TESS_I32, sizeof(int32_t));
    int32_t q = 65536, r = 65536;
    tess__accum_apply(&a, &q, &r);
    assert_int_equal(q, 0);
    q = INT32_MIN;
    tess__accum_apply(&a, &q, &minus_one);
    assert_int_equal(q, INT32_MIN);
}

static void test_replace(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 5);
    char v[5] = "abcd", u[5] = "wxyz", later[5] = "LAST", z[5];
    memset(z, 0x55, sizeof z);
    tess__accum_identity(&a, z);
    assert_memory_equal(z, "\0\0\0\0\0", 5);
    tess__accum_apply(&a, v, u);
    assert_memory_equal(v, "wxyz", 5);
    tess__accum_merge(&a, u, later); /* the later update wins */
    assert_memory_equal(u, "LAST", 5);
    a = make_accum(TESS_ACC_REPLACE, TESS_F64, 2 * sizeof(double));
    double d[2] = {1, 2}, e[2] = {-0.0, NAN};
    tess__accum_apply(&a, d, e);
    assert_true(signbit(d[0]) && isnan(d[1]));
    assert_int_equal(tess__accum_check(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0, &(const char *){0}),
                     TESS_OK);
}

static void expect_invalid(tess_accum kind, tess_elem elem, size_t vs)
{
    const char *why = NULL;
    assert_int_equal(tess__accum_check(kind, elem, vs, &why), TESS_ERR_INVAL);
    assert_non_null(why);
    assert_true(strlen(why) > 0);
}

static void test_check(void **state)
{
    (void)state;
    const char *why = NULL;
    for (size_t k = 0; k < 4; k++) {
        expect_invalid(builtin_kinds[k], TESS_ELEM_NONE, 8);
        expect_invalid(builtin_kinds[k], TESS_F64, 0);
        expect_invalid(builtin_kinds[k], TESS_F64, 12);
        expect_invalid(builtin_kinds[k], TESS_I32, 6);
        for (size_t t = 0; t < 4; t++) {
            size_t es = elem_bytes(elem_types[t]);
            assert_int_equal(tess__accum_check(builtin_kinds[k], elem_types[t], es, &why), 0);
            assert_int_equal(tess__accum_check(builtin_kinds[k], elem_types[t], 5 * es, &why), 0);
        }
    }
    expect_invalid(TESS_ACC_USER, TESS_ELEM_NONE, 0);
    assert_int_equal(tess__accum_check(TESS_ACC_USER, TESS_ELEM_NONE, 24, &why), TESS_OK);
    assert_int_equal(tess__accum_check(TESS_ACC_REPLACE, TESS_I32, 0, &why), TESS_OK);
    assert_int_equal(tess__accum_check(TESS_ACC_REPLACE, TESS_ELEM_NONE, 7, &why), TESS_OK);
}

/* A user accumulator: the largest update seen and how many updates there were. */
typedef struct max_count {
    double max;
    int64_t count;
} max_count;

static void mc_init(void *v, size_t n)
{
    assert_int_equal(n, sizeof(max_count));
    *(max_count *)v = (max_count){-INFINITY, 0};
}

/* An update is a max_count too: a single update is {x, 1}. */
static void mc_accumulate(void *v, const void *u, size_t n)
{
    (void)n;
    max_count *a = v;
    const max_count *b = u;
    if (b->max > a->max) a->max = b->max;
    a->count += b->count;
}

/* Distinguishable from accumulate so the test sees which one ran. */
static void mc_merge(void *v, const void *u, size_t n)
{
    mc_accumulate(v, u, n);
    ((max_count *)v)->count += 1000;
}

static void mc_view(void *out, const void *v, size_t n)
{
    (void)n;
    const max_count *m = v;
    *(max_count *)out = (max_count){m->max * 10, m->count};
}

static void test_user(void **state)
{
    (void)state;
    tess_accum_ops ops = {mc_init, mc_accumulate, mc_merge, mc_view};
    tess__accum a;
    tess__accum_setup(&a, TESS_ACC_USER, TESS_ELEM_NONE, sizeof(max_count), &ops);
    max_count v, u1 = {3, 1}, u2 = {-1, 1}, out;
    tess__accum_identity(&a, &v);
    assert_true(isinf(v.max) && v.max < 0 && v.count == 0);
    tess__accum_apply(&a, &v, &u1);
    tess__accum_apply(&a, &v, &u2);
    assert_true(v.max == 3 && v.count == 2);
    tess__accum_merge(&a, &u1, &u2);
    assert_true(u1.max == 3 && u1.count == 1002);
    tess__accum_view(&a, &out, &v);
    assert_true(out.max == 30 && out.count == 2);
}

/* Without initialize/merge/view: zeros, accumulate, copy. */
static void test_user_defaults(void **state)
{
    (void)state;
    tess_accum_ops ops = {NULL, mc_accumulate, NULL, NULL};
    tess__accum a;
    tess__accum_setup(&a, TESS_ACC_USER, TESS_ELEM_NONE, sizeof(max_count), &ops);
    max_count v, p = {5, 1}, q = {2, 1}, out;
    memset(&v, 0x7f, sizeof v);
    tess__accum_identity(&a, &v);
    assert_true(v.max == 0 && v.count == 0);
    tess__accum_merge(&a, &p, &q);
    assert_true(p.max == 5 && p.count == 2);
    tess__accum_view(&a, &out, &p);
    assert_memory_equal(&out, &p, sizeof p);
}

static uint64_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

enum { DENSE_KEYS = 37, DENSE_UPDATES = 500, FIRST = 1000 };

/* Small integers keep products and sums exact in every type. */
static void random_updates(tess_elem e, size_t m, uint8_t *upd, uint64_t *keys, uint64_t *rng)
{
    for (size_t i = 0; i < DENSE_UPDATES; i++) {
        keys[i] = FIRST + next_random(rng) % (DENSE_KEYS - 5); /* last keys untouched */
        for (size_t j = 0; j < m; j++)
            elem_set(e, upd + i * m * elem_bytes(e), j, (double)(next_random(rng) % 3) - 1);
    }
}

/* apply_dense must equal a loop of apply, and set exactly the touched bits. */
static void check_dense(const tess__accum *a, tess_elem e, size_t m)
{
    size_t vs = a->value_size;
    uint8_t *fast = malloc(DENSE_KEYS * vs), *slow = malloc(DENSE_KEYS * vs);
    uint8_t *upd = malloc(DENSE_UPDATES * vs);
    uint64_t keys[DENSE_UPDATES], rng = 42 + m + (uint64_t)a->kind * 7 + (uint64_t)e;
    uint8_t bits[(DENSE_KEYS + 7) / 8] = {0}, want_bits[(DENSE_KEYS + 7) / 8] = {0};
    random_updates(e == TESS_ELEM_NONE ? TESS_I64 : e, m, upd, keys, &rng);
    for (size_t k = 0; k < DENSE_KEYS; k++) {
        tess__accum_identity(a, fast + k * vs);
        tess__accum_identity(a, slow + k * vs);
    }
    tess__accum_apply_dense(a, fast, FIRST, keys, upd, DENSE_UPDATES, bits);
    for (size_t i = 0; i < DENSE_UPDATES; i++) {
        uint64_t k = keys[i] - FIRST;
        tess__accum_apply(a, slow + k * vs, upd + i * vs);
        want_bits[k / 8] |= (uint8_t)(1u << (k % 8));
    }
    assert_memory_equal(fast, slow, DENSE_KEYS * vs);
    assert_memory_equal(bits, want_bits, sizeof bits);
    free(fast), free(slow), free(upd);
}

static void test_apply_dense_matches_apply(void **state)
{
    (void)state;
    for (size_t k = 0; k < 4; k++)
        for (size_t t = 0; t < 4; t++)
            for (size_t m = 1; m <= 3; m += 2) {
                tess__accum a =
                    make_accum(builtin_kinds[k], elem_types[t], m * elem_bytes(elem_types[t]));
                check_dense(&a, elem_types[t], m);
            }
    tess__accum r = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 3 * 8);
    check_dense(&r, TESS_ELEM_NONE, 3);
    r = make_accum(TESS_ACC_REPLACE, TESS_F32, 4);
    check_dense(&r, TESS_F32, 1);
    tess_accum_ops ops = {mc_init, mc_accumulate, mc_merge, mc_view};
    tess__accum u;
    tess__accum_setup(&u, TESS_ACC_USER, TESS_ELEM_NONE, sizeof(max_count), &ops);
    check_dense(&u, TESS_I64, 2); /* small counts, tiny maxima */
}

/* The PageRank case by hand: duplicate keys add up, the offset `first` holds. */
static void test_apply_dense_f64_sum(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_SUM, TESS_F64, sizeof(double));
    double base[4] = {0, 0, 0, 0}, upd[5] = {0.5, 0.25, 1, 2, 4};
    uint64_t keys[5] = {10, 12, 10, 13, 12};
    tess__accum_apply_dense(&a, base, 10, keys, upd, 5, NULL);
    assert_true(base[0] == 1.5 && base[1] == 0 && base[2] == 4.25 && base[3] == 2);
}

TEST_MAIN(cmocka_unit_test(test_every_kind_and_type), cmocka_unit_test(test_identities),
          cmocka_unit_test(test_extremes_beat_identity), cmocka_unit_test(test_integer_wraparound),
          cmocka_unit_test(test_replace), cmocka_unit_test(test_check), cmocka_unit_test(test_user),
          cmocka_unit_test(test_user_defaults), cmocka_unit_test(test_apply_dense_matches_apply),
          cmocka_unit_test(test_apply_dense_f64_sum))
