/*
 * test_partition_codec.c — a partition as bytes and back (the form in which
 * work stealing moves it): dense and hash, fixed-size and variable-length
 * values, absent keys stay absent, and damaged encodings are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "table/partition.h"

static tess__partition *roundtrip(tess__partition *src, tess__partition *dst)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(tess__partition_encode(src, &buf, &len), TESS_OK);
    assert_int_equal(tess__partition_decode_into(dst, buf, len), TESS_OK);
    free(buf);
    return dst;
}

static void test_dense_fixed(void **state)
{
    (void)state;
    tess__accum a;
    tess__accum_setup(&a, TESS_ACC_SUM, TESS_I64, 8, NULL);
    tess__partition *src = tess__partition_new_dense(100, 50, 8, &a);
    tess__partition *dst = tess__partition_new_dense(100, 50, 8, &a);
    for (uint64_t k = 100; k < 150; k += 3) {
        int64_t v = (int64_t)k * 7 - 1000;
        assert_int_equal(tess__partition_update(src, &k, &v, 8), TESS_OK);
    }
    roundtrip(src, dst);
    assert_int_equal(tess__partition_size(dst), tess__partition_size(src));
    for (uint64_t k = 100; k < 150; k++) {
        const void *v = NULL;
        size_t len = 0;
        int present = tess__partition_get(dst, &k, &v, &len);
        assert_int_equal(present, (k - 100) % 3 == 0);
        if (present) assert_int_equal(*(const int64_t *)v, (int64_t)k * 7 - 1000);
    }
    tess__partition_free(src);
    tess__partition_free(dst);
}

static void test_hash_variable(void **state)
{
    (void)state;
    tess__accum a;
    tess__accum_setup(&a, TESS_ACC_REPLACE, TESS_ELEM_NONE, 0, NULL);
    tess__partition *src = tess__partition_new_hash(12, 0, &a);
    tess__partition *dst = tess__partition_new_hash(12, 0, &a);
    char key[12], val[64];
    for (int i = 0; i < 500; i++) {
        memset(key, 0, sizeof key);
        snprintf(key, sizeof key, "k%d", i);
        int n = snprintf(val, sizeof val, "value %d", i * i);
        assert_int_equal(tess__partition_put(src, key, val, (size_t)(i % 7 ? n : 0)), TESS_OK);
    }
    roundtrip(src, dst);
    assert_int_equal(tess__partition_size(dst), 500);
    for (int i = 0; i < 500; i++) {
        memset(key, 0, sizeof key);
        snprintf(key, sizeof key, "k%d", i);
        const void *v = NULL, *w = NULL;
        size_t lv = 0, lw = 0;
        assert_int_equal(tess__partition_get(src, key, &v, &lv), 1);
        assert_int_equal(tess__partition_get(dst, key, &w, &lw), 1);
        assert_int_equal(lv, lw);
        assert_memory_equal(v, w, lv);
    }
    tess__partition_free(src);
    tess__partition_free(dst);
}

static void test_damaged(void **state)
{
    (void)state;
    tess__accum a;
    tess__accum_setup(&a, TESS_ACC_SUM, TESS_I64, 8, NULL);
    tess__partition *src = tess__partition_new_hash(8, 8, &a);
    for (uint64_t k = 0; k < 20; k++) tess__partition_put(src, &k, &k, 8);
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(tess__partition_encode(src, &buf, &len), TESS_OK);
    for (size_t cut = 0; cut < len; cut += 5) {
        tess__partition *dst = tess__partition_new_hash(8, 8, &a);
        assert_int_equal(tess__partition_decode_into(dst, buf, cut), TESS_ERR_FORMAT);
        tess__partition_free(dst);
    }
    free(buf);
    tess__partition_free(src);
}

TEST_MAIN(cmocka_unit_test(test_dense_fixed), cmocka_unit_test(test_hash_variable),
          cmocka_unit_test(test_damaged))
