/*
 * test_ckpt_forge.c — checkpoints forged with valid checksums but wrong
 * content (issue 15, item 2): a job writes epoch 1; the test then writes
 * epoch 2 with the store's own writer — so every checksum verifies — from
 * epoch 1's data with one thing wrong, and restores.  Each forgery must be
 * passed over for epoch 1, whose content must come back exactly:
 *   - the manifest lacks a table of the job, or names one it does not have;
 *   - a dense partition's range is shifted by one key;
 *   - a hash partition's file holds another partition's keys;
 *   - a value is NaN (the application's validate refuses it);
 * and an unforged copy of epoch 1 as epoch 2 is taken (the checks refuse
 * nothing sound).  Embedded runtime, temporary directory per test.
 */
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_main.h"

#include "test_ctx.h"

#include "ckpt/ckpt.h"
#include "core/bytes.h"
#include "tessera/tessera.h"

#define KEYS 100 /* dense table d: KEYS doubles, d[k] = k */
#define HKEYS 40 /* hash table h: key k -> 2k */
#define DPARTS 4
#define HPARTS 3

typedef enum forgery {
    FORGE_NONE,
    FORGE_DROP_TABLE,
    FORGE_EXTRA_TABLE,
    FORGE_SHIFT_DENSE,
    FORGE_SWAP_HASH,
    FORGE_NAN,
    FORGE_HUGE_OWNER
} forgery;

typedef struct job {
    char dir[64];
    tess_table *d, *h;
    int restore;        /* 0: write epoch 1; 1: restore */
    uint64_t epoch;     /* restored */
    int content_ok;     /* restored tables hold epoch 1's values */
    int validate_calls; /* how often validate ran */
} job;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* ---------------------------------------------------------------- the job */

static int fill(tess_ctx *ctx, job *j)
{
    for (uint64_t k = 0; k < KEYS; k++) {
        double v = (double)k;
        if (tess_table_put(j->d, &k, &v, sizeof v) != TESS_OK) return -1;
    }
    for (uint64_t k = 0; k < HKEYS; k++) {
        uint64_t v = 2 * k;
        if (tess_table_put(j->h, &k, &v, sizeof v) != TESS_OK) return -1;
    }
    int32_t user = 42;
    if (tess_checkpoint_barrier(ctx, &user, sizeof user) != TESS_OK) return -1;
    return tess_checkpoint_wait(ctx, NULL);
}

static int content_ok(job *j)
{
    if (tess_table_size(j->d) != KEYS || tess_table_size(j->h) != HKEYS) return 0;
    for (uint64_t k = 0; k < KEYS; k++) {
        double v = -1;
        if (tess_table_get(j->d, &k, &v, sizeof v, NULL) != TESS_OK || v != (double)k) return 0;
    }
    for (uint64_t k = 0; k < HKEYS; k++) {
        uint64_t v = 0;
        if (tess_table_get(j->h, &k, &v, sizeof v, NULL) != TESS_OK || v != 2 * k) return 0;
    }
    return 1;
}

/* The application's check of a loaded epoch: no NaN in d. */
static int validate(tess_ctx *ctx, void *arg, const void *user, size_t len, uint64_t epoch,
                    char *why, size_t whylen)
{
    job *j = arg;
    (void)ctx, (void)user, (void)len, (void)epoch;
    j->validate_calls++;
    for (uint64_t k = 0; k < KEYS; k++) {
        double v = 0;
        if (tess_table_get(j->d, &k, &v, sizeof v, NULL) == TESS_OK && isnan(v))
            return snprintf(why, whylen, "d[%llu] is NaN", (unsigned long long)k), 1;
    }
    return 0;
}

static int control(tess_ctx *ctx, void *arg)
{
    job *j = arg;
    if (!j->restore) return fill(ctx, j);
    void *user = NULL;
    size_t len = 0;
    int rc = tess_checkpoint_restore_checked(ctx, NULL, NULL, validate, j, &user, &len, &j->epoch);
    if (rc == TESS_OK) j->content_ok = len == sizeof(int32_t) && content_ok(j);
    free(user);
    return rc;
}

/* Run the job once (write or restore); the runtime's status. */
static int run_job(job *j, tess_ctx **keep)
{
    tess_config cfg;
    test_config(&cfg, 2);
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != TESS_OK) return -1;
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = "d";
    s.key_size = 8;
    s.value_size = 8;
    s.partitions = DPARTS;
    s.dense = 1;
    s.key_count = KEYS;
    s.elem = TESS_F64;
    int rc = tess_table_create(ctx, &s, &j->d);
    tess_table_spec_init(&s);
    s.name = "h";
    s.key_size = 8;
    s.value_size = 8;
    s.partitions = HPARTS;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &j->h);
    if (rc == TESS_OK) rc = tess_checkpoint_enable(ctx, j->dir, "forge-test", 0);
    if (rc == TESS_OK) rc = tess_main(ctx, control, j);
    if (keep) *keep = ctx;
    else tess_finalize(ctx);
    return rc;
}

/* ---------------------------------------------------------------- forging */

/* Epoch 1's partition p of table t, decompressed (caller frees). */
static uint8_t *read_part(const tess__ckpt_epoch *e, uint32_t t, uint32_t p, size_t *len)
{
    void *data = NULL;
    char err[256];
    assert_int_equal(tess__ckpt_read_partition(e, t, p, &data, len, err, sizeof err), TESS_OK);
    return data;
}

/* A dense partition's bytes with its range moved up one key ('D', first,
 * count, ...: docs/checkpoint-format.md). */
static void shift_dense(uint8_t *data, size_t len)
{
    assert_true(len > 9 && data[0] == 'D');
    uint64_t first;
    memcpy(&first, data + 1, 8);
    first++;
    memcpy(data + 1, &first, 8);
}

/* NaN into the first value of a dense partition (after the header and the
 * presence bitmap). */
static void poison_dense(uint8_t *data, size_t len)
{
    uint64_t count;
    memcpy(&count, data + 9, 8);
    size_t at = 1 + 24 + (size_t)(count + 7) / 8;
    assert_true(at + 8 <= len);
    double nan = NAN;
    memcpy(data + at, &nan, 8);
}

static void add_table(tess__ckpt_writer *w, const tess__ckpt_epoch *e, uint32_t t, forgery how)
{
    uint32_t nparts;
    const int32_t *owners;
    int st;
    char err[256];
    assert_int_equal(tess__ckpt_epoch_table(e, t, &nparts, &owners, &st), TESS_OK);
    int32_t forged[16];
    assert_true(nparts <= 16);
    memcpy(forged, owners, nparts * sizeof *forged);
    if (how == FORGE_HUGE_OWNER) forged[nparts - 1] = INT32_MAX - 1;
    assert_int_equal(tess__ckpt_set_table(w, t, nparts, forged, st, err, sizeof err), TESS_OK);
    for (uint32_t p = 0; p < nparts; p++) {
        uint32_t from = how == FORGE_SWAP_HASH && t == 1 ? (p + 1) % nparts : p;
        size_t len = 0;
        uint8_t *data = read_part(e, t, from, &len);
        if (how == FORGE_SHIFT_DENSE && t == 0 && p == 1) shift_dense(data, len);
        if (how == FORGE_NAN && t == 0 && p == 0) poison_dense(data, len);
        assert_int_equal(tess__ckpt_add_partition(w, t, p, data, len, err, sizeof err), TESS_OK);
        free(data);
    }
}

/* Epoch 2 from epoch 1, wrong in one way, written by the store's writer. */
static void forge(tess_ctx *ctx, const char *dir, forgery how)
{
    tess__ckpt_store *s = NULL;
    tess__ckpt_epoch *e = NULL;
    char err[256];
    assert_int_equal(tess__ckpt_store_open(dir, tess__ckpt_fingerprint(ctx), &s, err, sizeof err),
                     TESS_OK);
    assert_int_equal(tess__ckpt_open_epoch(s, 1, &e, err, sizeof err), TESS_OK);
    tess__ckpt_writer *w = NULL;
    assert_int_equal(tess__ckpt_begin(s, 2, &w, err, sizeof err), TESS_OK);
    add_table(w, e, 0, how);
    if (how != FORGE_DROP_TABLE) add_table(w, e, 1, how);
    if (how == FORGE_EXTRA_TABLE) {
        int32_t owner = 0;
        const char junk[] = "E";
        assert_int_equal(tess__ckpt_set_table(w, 7, 1, &owner, 0, err, sizeof err), TESS_OK);
        assert_int_equal(tess__ckpt_add_partition(w, 7, 0, junk, 1, err, sizeof err), TESS_OK);
    }
    size_t ulen = 0;
    const void *user = tess__ckpt_epoch_user_data(e, &ulen);
    assert_int_equal(tess__ckpt_set_user_data(w, user, ulen, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_commit(w, err, sizeof err), TESS_OK);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

/* Write epoch 1, forge epoch 2, restore: the epoch restored. */
static uint64_t forge_and_restore(forgery how, int *content, int *validated)
{
    job j;
    memset(&j, 0, sizeof j);
    snprintf(j.dir, sizeof j.dir, "/tmp/tess-forge-XXXXXX");
    assert_non_null(mkdtemp(j.dir));
    tess_ctx *ctx = NULL;
    assert_int_equal(run_job(&j, &ctx), TESS_OK);
    forge(ctx, j.dir, how);
    tess_finalize(ctx);
    job r;
    memset(&r, 0, sizeof r);
    memcpy(r.dir, j.dir, sizeof r.dir);
    r.restore = 1;
    assert_int_equal(run_job(&r, NULL), TESS_OK);
    nftw(j.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    *content = r.content_ok;
    *validated = r.validate_calls;
    return r.epoch;
}

static void expect(forgery how, uint64_t epoch, int validate_calls)
{
    int content = 0, validated = 0;
    assert_int_equal(forge_and_restore(how, &content, &validated), epoch);
    assert_true(content);
    assert_int_equal(validated, validate_calls);
}

/* ---------------------------------------------------------------- tests */

/* An owner rank near 2^31 (issue 44): restore walked every rank up to it
 * looking for replay logs, for minutes and deaf to SIGTERM.  Now it reads
 * only the logs the manifest lists: at once. */
static void test_huge_owner_rank_restores_at_once(void **state)
{
    (void)state;
    double t0 = tess_now();
    int content = 0, validated = 0;
    forge_and_restore(FORGE_HUGE_OWNER, &content, &validated);
    assert_true(content);
    assert_true(tess_now() - t0 < 10.0);
}

static void test_sound_copy_is_taken(void **state)
{
    (void)state;
    expect(FORGE_NONE, 2, 1);
}

static void test_missing_table(void **state)
{
    (void)state;
    expect(FORGE_DROP_TABLE, 1, 1); /* refused before loading: validate ran for epoch 1 only */
}

static void test_extra_table(void **state)
{
    (void)state;
    expect(FORGE_EXTRA_TABLE, 1, 1);
}

static void test_shifted_dense_range(void **state)
{
    (void)state;
    expect(FORGE_SHIFT_DENSE, 1, 1); /* the load fails: validate never saw epoch 2 */
}

static void test_hash_partition_of_another(void **state)
{
    (void)state;
    expect(FORGE_SWAP_HASH, 1, 1);
}

static void test_nan_refused_by_validate(void **state)
{
    (void)state;
    expect(FORGE_NAN, 1, 2); /* validate refused epoch 2, took epoch 1 */
}

TEST_MAIN(cmocka_unit_test(test_sound_copy_is_taken), cmocka_unit_test(test_missing_table),
          cmocka_unit_test(test_extra_table), cmocka_unit_test(test_shifted_dense_range),
          cmocka_unit_test(test_hash_partition_of_another),
          cmocka_unit_test(test_nan_refused_by_validate),
          cmocka_unit_test(test_huge_owner_rank_restores_at_once))
