/*
 * test_ckpt_store.c — the on-disk checkpoint store: round trip, choice of the
 * latest complete epoch, fallback past every kind of damage with a message
 * naming the file, fingerprints, static tables, failed writes at every step
 * leaving no partial epoch, and retention.  Each test works in its own
 * temporary directory.
 */
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_main.h"

#include "ckpt/store.h"
#include "tessera/tessera.h"

#define FP 0x1234abcd5678ef00ull

typedef struct fixture {
    char dir[64];
    char reports[4096]; /* report lines, each ending in '\n' */
    int nreports;
} fixture;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tess-ckpt-XXXXXX");
    if (mkdtemp(f->dir) == NULL) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void collect(void *arg, const char *line)
{
    fixture *f = arg;
    assert_null(strchr(line, '\n')); /* one line */
    size_t used = strlen(f->reports);
    snprintf(f->reports + used, sizeof f->reports - used, "%s\n", line);
    f->nreports++;
}

static tess__ckpt_store *open_store(fixture *f, uint64_t fp)
{
    tess__ckpt_store *s = NULL;
    char err[512];
    int rc = tess__ckpt_store_open(f->dir, fp, &s, err, sizeof err);
    if (rc != TESS_OK) fail_msg("%s", err);
    return s;
}

/* Deterministic partition bytes: compressible and distinct per epoch. */
static size_t part_bytes(uint64_t epoch, uint32_t table, uint32_t part, uint8_t *buf)
{
    size_t len = part == 1 ? 0 : 5000 + 1000 * part + 7 * table;
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)((i / 64) * 31 + epoch * 7 + table * 3 + part);
    return len;
}

static const int32_t owners0[3] = {0, 1, 0};
static const int32_t owners5[2] = {1, 1};

/* Tables 0 (3 partitions) and 5 (2), two replay logs, user data "iter=E". */
static void write_epoch(tess__ckpt_store *s, uint64_t epoch)
{
    static uint8_t buf[16384];
    char err[512], user[32];
    tess__ckpt_writer *w = NULL;
    assert_int_equal(tess__ckpt_begin(s, epoch, &w, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_set_table(w, 5, 2, owners5, 0, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_set_table(w, 0, 3, owners0, 0, err, sizeof err), TESS_OK);
    for (uint32_t t = 0; t <= 5; t += 5)
        for (uint32_t p = 0; p < (t == 0 ? 3u : 2u); p++) {
            size_t len = part_bytes(epoch, t, p, buf);
            assert_int_equal(tess__ckpt_add_partition(w, t, p, buf, len, err, sizeof err), TESS_OK);
        }
    assert_int_equal(tess__ckpt_add_log(w, 1, "log of one", 10, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_add_log(w, 0, "zero", 4, err, sizeof err), TESS_OK);
    int n = snprintf(user, sizeof user, "iter=%" PRIu64, epoch);
    assert_int_equal(tess__ckpt_set_user_data(w, user, (size_t)n, err, sizeof err), TESS_OK);
    if (tess__ckpt_commit(w, err, sizeof err) != TESS_OK) fail_msg("%s", err);
}

static void assert_user(const tess__ckpt_epoch *e, uint64_t epoch)
{
    char want[32];
    size_t len;
    int n = snprintf(want, sizeof want, "iter=%" PRIu64, epoch);
    const void *u = tess__ckpt_epoch_user_data(e, &len);
    assert_int_equal(len, (size_t)n);
    assert_memory_equal(u, want, len);
}

/* tess__ckpt_open_latest of any epoch, damage reported into f: the status. */
static int try_latest(fixture *f, tess__ckpt_store *s, tess__ckpt_epoch **e, char *err,
                      size_t errlen)
{
    return tess__ckpt_open_latest(s, UINT64_MAX, collect, f, NULL, NULL, e, err, errlen);
}

static tess__ckpt_epoch *open_latest(fixture *f, tess__ckpt_store *s, uint64_t want)
{
    tess__ckpt_epoch *e = NULL;
    char err[512];
    int rc = try_latest(f, s, &e, err, sizeof err);
    if (rc != TESS_OK) fail_msg("%s", err);
    assert_int_equal(tess__ckpt_epoch_number(e), want);
    assert_user(e, want);
    return e;
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    write_epoch(s, 1);
    tess__ckpt_epoch *e = open_latest(f, s, 1);
    assert_int_equal(f->nreports, 0);
    assert_int_equal(tess__ckpt_epoch_table_count(e), 2);
    assert_int_equal(tess__ckpt_epoch_table_id(e, 0), 0);
    assert_int_equal(tess__ckpt_epoch_table_id(e, 1), 5);
    uint32_t nparts;
    const int32_t *owners;
    int is_static;
    assert_int_equal(tess__ckpt_epoch_table(e, 0, &nparts, &owners, &is_static), TESS_OK);
    assert_int_equal(nparts, 3);
    assert_memory_equal(owners, owners0, sizeof owners0);
    assert_int_equal(is_static, 0);
    assert_int_equal(tess__ckpt_epoch_table(e, 5, &nparts, &owners, &is_static), TESS_OK);
    assert_memory_equal(owners, owners5, sizeof owners5);
    assert_int_equal(tess__ckpt_epoch_table(e, 4, &nparts, &owners, &is_static), TESS_ERR_NOTFOUND);
    static uint8_t want[16384];
    char err[512];
    for (uint32_t t = 0; t <= 5; t += 5)
        for (uint32_t p = 0; p < (t == 0 ? 3u : 2u); p++) {
            void *data = NULL;
            size_t len = 99;
            size_t wlen = part_bytes(1, t, p, want);
            assert_int_equal(tess__ckpt_read_partition(e, t, p, &data, &len, err, sizeof err),
                             TESS_OK);
            assert_int_equal(len, wlen);
            if (wlen > 0) assert_memory_equal(data, want, wlen);
            free(data);
        }
    void *data = NULL;
    size_t len;
    assert_int_equal(tess__ckpt_read_log(e, 1, &data, &len, err, sizeof err), TESS_OK);
    assert_int_equal(len, 10);
    assert_memory_equal(data, "log of one", 10);
    free(data);
    assert_int_equal(tess__ckpt_read_log(e, 2, &data, &len, err, sizeof err), TESS_ERR_NOTFOUND);
    assert_int_equal(tess__ckpt_read_partition(e, 0, 3, &data, &len, err, sizeof err),
                     TESS_ERR_NOTFOUND);
    /* Compressed on disk: the 6000-byte repetitive partition is much smaller. */
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/epoch-00000001/t0-p0.zst", f->dir);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0 && st.st_size < 1000);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

static void test_latest_chosen(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    write_epoch(s, 2);
    write_epoch(s, 10);
    write_epoch(s, 7); /* numbering, not write order, decides */
    uint64_t *v;
    size_t n;
    char err[512];
    assert_int_equal(tess__ckpt_list(s, &v, &n, err, sizeof err), TESS_OK);
    assert_int_equal(n, 3);
    assert_int_equal(v[0], 2);
    assert_int_equal(v[1], 7);
    assert_int_equal(v[2], 10);
    free(v);
    tess__ckpt_epoch *e = open_latest(f, s, 10);
    tess__ckpt_epoch_close(e);
    assert_int_equal(tess__ckpt_open_epoch(s, 7, &e, err, sizeof err), TESS_OK);
    assert_user(e, 7);
    tess__ckpt_epoch_close(e);
    /* Rewriting an existing epoch number replaces it. */
    write_epoch(s, 10);
    e = open_latest(f, s, 10);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

/* ---------------------------------------------------------------- damage */

enum damage {
    TRUNCATE,
    FLIP,
    DELETE,
    MANIFEST_FLIP,
    MANIFEST_TRUNCATE,
    MANIFEST_DELETE,
    UNCOMMITTED
};

static void flip_byte(const char *path, off_t at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x40;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

/* Returns the file name the report must contain. */
static const char *apply_damage(fixture *f, enum damage d)
{
    char path[256];
    const char *name = d >= MANIFEST_FLIP ? "epoch-00000002/MANIFEST" : "epoch-00000002/t5-p0.zst";
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    switch (d) {
    case TRUNCATE:
    case MANIFEST_TRUNCATE: assert_int_equal(truncate(path, st.st_size - 3), 0); break;
    case FLIP: flip_byte(path, st.st_size / 2); break;
    case MANIFEST_FLIP: flip_byte(path, 20); break; /* inside the fingerprint */
    case DELETE:
    case MANIFEST_DELETE: assert_int_equal(unlink(path), 0); break;
    case UNCOMMITTED:
        /* What a crash during epoch 3 leaves: its directory, no manifest. */
        snprintf(path, sizeof path, "%s/epoch-00000003.tmp", f->dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/epoch-00000003.tmp/t0-p0.zst", f->dir);
        FILE *fp = fopen(path, "w");
        fputs("partial", fp);
        fclose(fp);
        return "epoch-00000003.tmp";
    }
    return name;
}

static void check_fallback(fixture *f, enum damage d)
{
    tess__ckpt_store *s = open_store(f, FP);
    write_epoch(s, 1);
    write_epoch(s, 2);
    const char *name = apply_damage(f, d);
    f->reports[0] = '\0';
    f->nreports = 0;
    uint64_t want = d == UNCOMMITTED ? 2 : 1;
    tess__ckpt_epoch *e = open_latest(f, s, want);
    assert_int_equal(f->nreports, 1);
    if (strstr(f->reports, name) == NULL)
        fail_msg("report '%s' does not name %s", f->reports, name);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

static void test_fallback_truncated(void **state) { check_fallback(*state, TRUNCATE); }
static void test_fallback_flipped(void **state) { check_fallback(*state, FLIP); }
static void test_fallback_deleted(void **state) { check_fallback(*state, DELETE); }
static void test_fallback_manifest_flip(void **state) { check_fallback(*state, MANIFEST_FLIP); }
static void test_fallback_manifest_truncated(void **state)
{
    check_fallback(*state, MANIFEST_TRUNCATE);
}
static void test_fallback_manifest_deleted(void **state)
{
    check_fallback(*state, MANIFEST_DELETE);
}
static void test_fallback_uncommitted(void **state) { check_fallback(*state, UNCOMMITTED); }

/* A partition read after open re-verifies: damage after the open is caught. */
static void test_read_detects_later_damage(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    write_epoch(s, 1);
    tess__ckpt_epoch *e = open_latest(f, s, 1);
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/epoch-00000001/t0-p2.zst", f->dir);
    flip_byte(path, 5);
    void *data = NULL;
    size_t len;
    assert_int_equal(tess__ckpt_read_partition(e, 0, 2, &data, &len, err, sizeof err),
                     TESS_ERR_FORMAT);
    assert_non_null(strstr(err, "t0-p2.zst"));
    assert_null(data);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

static void test_no_epoch(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    tess__ckpt_epoch *e = NULL;
    char err[512];
    assert_int_equal(try_latest(f, s, &e, err, sizeof err), TESS_ERR_NOTFOUND);
    assert_null(e);
    assert_int_equal(f->nreports, 0);
    /* Only a damaged epoch: still NOTFOUND, and the damage is reported. */
    write_epoch(s, 2);
    apply_damage(f, FLIP);
    assert_int_equal(try_latest(f, s, &e, err, sizeof err), TESS_ERR_NOTFOUND);
    assert_null(e);
    assert_int_equal(f->nreports, 1);
    assert_non_null(strstr(err, "1 epoch skipped"));
    tess__ckpt_store_close(s);
}

static void test_fingerprint_mismatch(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    write_epoch(s, 1);
    tess__ckpt_store_close(s);
    s = open_store(f, FP + 1);
    tess__ckpt_epoch *e = NULL;
    char err[512];
    assert_int_equal(try_latest(f, s, &e, err, sizeof err), TESS_ERR_INVAL);
    assert_null(e);
    assert_non_null(strstr(err, "checkpoint written by a different job"));
    assert_non_null(strstr(err, "epoch-00000001/MANIFEST"));
    tess__ckpt_store_close(s);
}

/* ---------------------------------------------------------------- static */

static void write_with_static(tess__ckpt_store *s, uint64_t epoch, int add_static)
{
    static const int32_t owners7[2] = {0, 1};
    char err[512];
    tess__ckpt_writer *w = NULL;
    assert_int_equal(tess__ckpt_begin(s, epoch, &w, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_set_table(w, 7, 2, owners7, 1, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_set_table(w, 0, 3, owners0, 0, err, sizeof err), TESS_OK);
    if (add_static) {
        assert_int_equal(tess__ckpt_add_partition(w, 7, 0, "graph-0", 7, err, sizeof err), TESS_OK);
        assert_int_equal(tess__ckpt_add_partition(w, 7, 1, "graph-1!", 8, err, sizeof err),
                         TESS_OK);
    }
    assert_int_equal(tess__ckpt_add_partition(w, 0, 0, &epoch, sizeof epoch, err, sizeof err),
                     TESS_OK);
    assert_int_equal(tess__ckpt_set_user_data(w, "iter=", 0, err, sizeof err), TESS_OK);
    if (tess__ckpt_commit(w, err, sizeof err) != TESS_OK) fail_msg("%s", err);
}

static void assert_static_readable(const tess__ckpt_epoch *e)
{
    char err[512];
    void *data;
    size_t len;
    assert_int_equal(tess__ckpt_read_partition(e, 7, 1, &data, &len, err, sizeof err), TESS_OK);
    assert_int_equal(len, 8);
    assert_memory_equal(data, "graph-1!", 8);
    free(data);
    uint32_t nparts;
    const int32_t *owners;
    int is_static = 0;
    assert_int_equal(tess__ckpt_epoch_table(e, 7, &nparts, &owners, &is_static), TESS_OK);
    assert_int_equal(is_static, 1);
}

static void test_static_saved_once(void **state)
{
    fixture *f = *state;
    char path[256], err[512];
    struct stat st;
    tess__ckpt_store *s = open_store(f, FP);
    assert_int_equal(tess__ckpt_static_saved(s, 7), 0);
    write_with_static(s, 1, 1);
    assert_int_equal(tess__ckpt_static_saved(s, 7), 1);
    write_with_static(s, 2, 0);
    snprintf(path, sizeof path, "%s/static/t7-p1.zst", f->dir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s/epoch-00000002/t7-p1.zst", f->dir);
    assert_int_not_equal(stat(path, &st), 0); /* not copied into the epoch */
    tess__ckpt_store_close(s);

    /* A restarted job learns of the static files from the epoch it restores. */
    s = open_store(f, FP);
    tess__ckpt_epoch *e = NULL;
    assert_int_equal(try_latest(f, s, &e, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_epoch_number(e), 2);
    assert_static_readable(e);
    tess__ckpt_epoch_close(e);
    assert_int_equal(tess__ckpt_static_saved(s, 7), 1);
    write_with_static(s, 3, 0);
    assert_int_equal(tess__ckpt_open_epoch(s, 3, &e, err, sizeof err), TESS_OK);
    assert_static_readable(e);
    tess__ckpt_epoch_close(e);

    /* Every epoch references the static file: damage there leaves none. */
    snprintf(path, sizeof path, "%s/static/t7-p0.zst", f->dir);
    flip_byte(path, 4);
    f->nreports = 0;
    f->reports[0] = '\0';
    assert_int_equal(try_latest(f, s, &e, err, sizeof err), TESS_ERR_NOTFOUND);
    assert_int_equal(f->nreports, 3);
    assert_non_null(strstr(f->reports, "static/t7-p0.zst"));
    tess__ckpt_store_close(s);
}

/* ---------------------------------------------------------------- failures */

typedef struct fail_at {
    int calls, fail_on;
    char path[512];
} fail_at;

static int fail_nth(void *arg, const char *path)
{
    fail_at *fa = arg;
    if (++fa->calls != fa->fail_on) return 0;
    snprintf(fa->path, sizeof fa->path, "%s", path);
    return 1;
}

static int exists(fixture *f, const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    return stat(path, &st) == 0;
}

/* Epoch 2 fails at its k-th write/fsync/rename for every k until it commits:
 * each failure leaves no trace of epoch 2 and epoch 1 restorable. */
static void test_failed_write_every_step(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    write_epoch(s, 1);
    int k, committed = 0;
    for (k = 1; k < 100 && !committed; k++) {
        fail_at fa = {0, k, ""};
        tess__ckpt_store_set_fail_hook(s, fail_nth, &fa);
        static uint8_t buf[16384];
        char err[512] = "";
        tess__ckpt_writer *w = NULL;
        int rc = tess__ckpt_begin(s, 2, &w, err, sizeof err);
        assert_int_equal(rc, TESS_OK);
        rc = tess__ckpt_set_table(w, 0, 3, owners0, 0, err, sizeof err);
        for (uint32_t p = 0; p < 3; p++) {
            size_t len = part_bytes(2, 0, p, buf);
            int r = tess__ckpt_add_partition(w, 0, p, buf, len, err, sizeof err);
            if (rc == TESS_OK) rc = r;
        }
        int crc = tess__ckpt_commit(w, err, sizeof err);
        tess__ckpt_store_set_fail_hook(s, NULL, NULL);
        if (fa.calls < k) { /* the hook was never reached: the epoch committed */
            assert_int_equal(rc, TESS_OK);
            assert_int_equal(crc, TESS_OK);
            committed = 1;
            break;
        }
        assert_int_equal(crc, TESS_ERR_IO);
        if (strstr(err, fa.path) == NULL && strstr(err, "epoch-00000002") == NULL)
            fail_msg("step %d: error '%s' does not name %s", k, err, fa.path);
        assert_false(exists(f, "epoch-00000002"));
        assert_false(exists(f, "epoch-00000002.tmp"));
        tess__ckpt_epoch *e = open_latest(f, s, 1);
        tess__ckpt_epoch_close(e);
    }
    assert_true(committed);
    assert_true(k > 8); /* 3 files x (write, fsync) + manifest + publish steps */
    tess__ckpt_epoch *e = NULL;
    char err[512];
    assert_int_equal(try_latest(f, s, &e, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_epoch_number(e), 2);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

static void test_unwritable_directory(void **state)
{
    fixture *f = *state;
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/plain-file", f->dir);
    FILE *fp = fopen(path, "w");
    fclose(fp);
    snprintf(path, sizeof path, "%s/plain-file/ckpt", f->dir);
    tess__ckpt_store *s = NULL;
    assert_int_equal(tess__ckpt_store_open(path, FP, &s, err, sizeof err), TESS_ERR_IO);
    assert_null(s);
    assert_non_null(strstr(err, "plain-file/ckpt"));
}

static void test_writer_misuse(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    char err[512];
    tess__ckpt_writer *w = NULL, *w2 = NULL;
    assert_int_equal(tess__ckpt_begin(s, 1, &w, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_begin(s, 2, &w2, err, sizeof err), TESS_ERR_MISUSE);
    assert_null(w2);
    assert_int_equal(tess__ckpt_add_partition(w, 3, 0, "x", 1, err, sizeof err), TESS_ERR_INVAL);
    assert_non_null(strstr(err, "t3-p0.zst"));
    assert_int_equal(tess__ckpt_commit(w, err, sizeof err), TESS_ERR_INVAL);
    assert_false(exists(f, "epoch-00000001"));
    assert_false(exists(f, "epoch-00000001.tmp"));
    /* Abort removes a partial epoch. */
    assert_int_equal(tess__ckpt_begin(s, 1, &w, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_set_table(w, 0, 3, owners0, 0, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_set_table(w, 0, 3, owners0, 0, err, sizeof err), TESS_ERR_INVAL);
    assert_true(exists(f, "epoch-00000001.tmp"));
    tess__ckpt_abort(w);
    tess__ckpt_abort(NULL);
    assert_false(exists(f, "epoch-00000001.tmp"));
    tess__ckpt_store_close(s);
    tess__ckpt_store_close(NULL);
}

/* ---------------------------------------------------------------- ownership */

static void claim(tess__ckpt_store *s, int overwrite, int want, char *err, size_t errlen)
{
    err[0] = '\0';
    int rc = tess__ckpt_claim(s, overwrite, err, errlen);
    if (rc != want) fail_msg("claim: %d, wanted %d: %s", rc, want, err);
}

static void read_text(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

/* A second job on the directory is refused and changes nothing; the first
 * claims it again; overwriting deletes the first job's epochs. */
static void test_claim_refuses_another_job(void **state)
{
    fixture *f = *state;
    char err[768], path[256], owner[128];
    tess__ckpt_store *a = open_store(f, FP);
    claim(a, 0, TESS_OK, err, sizeof err);
    write_with_static(a, 1, 1);
    write_with_static(a, 2, 0);
    snprintf(path, sizeof path, "%s/OWNER", f->dir);
    read_text(path, owner, sizeof owner);
    tess__ckpt_store *b = open_store(f, FP + 1);
    claim(b, 0, TESS_ERR_INVAL, err, sizeof err);
    assert_non_null(strstr(err, f->dir));
    assert_non_null(strstr(err, "another job"));
    assert_non_null(strstr(err, "--checkpoint-overwrite"));
    assert_null(strchr(err, '\n'));
    char again[128];
    read_text(path, again, sizeof again);
    assert_string_equal(owner, again);
    assert_true(exists(f, "epoch-00000001") && exists(f, "epoch-00000002"));
    claim(a, 0, TESS_OK, err, sizeof err); /* the same job again (a restart) */
    claim(b, 1, TESS_OK, err, sizeof err);
    assert_false(exists(f, "epoch-00000001") || exists(f, "epoch-00000002"));
    assert_false(exists(f, "static"));
    read_text(path, again, sizeof again);
    assert_string_not_equal(owner, again);
    claim(a, 0, TESS_ERR_INVAL, err, sizeof err);
    tess__ckpt_store_close(a);
    tess__ckpt_store_close(b);
}

/* A directory written before OWNER existed is judged by its manifests; a
 * damaged OWNER likewise. */
static void test_claim_without_owner_file(void **state)
{
    fixture *f = *state;
    char err[768], path[256];
    tess__ckpt_store *a = open_store(f, FP);
    write_epoch(a, 1);
    tess__ckpt_store *b = open_store(f, FP + 1);
    claim(b, 0, TESS_ERR_INVAL, err, sizeof err);
    assert_false(exists(f, "OWNER"));
    claim(a, 0, TESS_OK, err, sizeof err);
    assert_true(exists(f, "OWNER"));
    snprintf(path, sizeof path, "%s/OWNER", f->dir);
    FILE *fp = fopen(path, "w");
    fputs("garbage\n", fp);
    fclose(fp);
    claim(b, 0, TESS_ERR_INVAL, err, sizeof err);
    claim(a, 0, TESS_OK, err, sizeof err); /* rewritten */
    claim(b, 0, TESS_ERR_INVAL, err, sizeof err);
    tess__ckpt_store_close(a);
    tess__ckpt_store_close(b);
}

/* Retention never deletes another job's epochs, even older ones. */
static void test_retention_spares_another_job(void **state)
{
    fixture *f = *state;
    char err[512];
    tess__ckpt_store *a = open_store(f, FP);
    write_epoch(a, 1);
    write_epoch(a, 2);
    tess__ckpt_store *b = open_store(f, FP + 1);
    for (uint64_t e = 3; e <= 5; e++) write_epoch(b, e);
    assert_int_equal(tess__ckpt_retain(b, 1, err, sizeof err), TESS_OK);
    assert_true(exists(f, "epoch-00000001") && exists(f, "epoch-00000002"));
    assert_false(exists(f, "epoch-00000003") || exists(f, "epoch-00000004"));
    assert_true(exists(f, "epoch-00000005"));
    tess__ckpt_store_close(a);
    tess__ckpt_store_close(b);
}

/* Symbolic links planted at the names the store used to write through
 * (DIR/static/NAME.tmp, DIR/epoch-N.tmp) are never followed: their targets
 * keep their bytes and files. */
static void test_planted_links_not_followed(void **state)
{
    fixture *f = *state;
    char err[768], path[256], victim[256], vdir[256], vfile[300], text[64];
    snprintf(victim, sizeof victim, "%s/victim", f->dir);
    snprintf(vdir, sizeof vdir, "%s/victim-dir", f->dir);
    snprintf(vfile, sizeof vfile, "%s/keep", vdir);
    FILE *fp = fopen(victim, "w");
    fputs("precious\n", fp);
    fclose(fp);
    assert_int_equal(mkdir(vdir, 0755), 0);
    fclose(fopen(vfile, "w"));
    snprintf(path, sizeof path, "%s/static", f->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    for (int p = 0; p < 2; p++) {
        snprintf(path, sizeof path, "%s/static/t7-p%d.zst.tmp", f->dir, p);
        assert_int_equal(symlink(victim, path), 0);
    }
    snprintf(path, sizeof path, "%s/epoch-00000001.tmp", f->dir);
    assert_int_equal(symlink(vdir, path), 0);
    tess__ckpt_store *s = open_store(f, FP);
    claim(s, 0, TESS_OK, err, sizeof err);
    write_with_static(s, 1, 1);
    write_with_static(s, 2, 1);
    read_text(victim, text, sizeof text);
    assert_string_equal(text, "precious\n");
    assert_int_equal(access(vfile, F_OK), 0);
    struct stat st;
    snprintf(path, sizeof path, "%s/static/t7-p0.zst", f->dir);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    tess__ckpt_epoch *e = NULL;
    assert_int_equal(tess__ckpt_open_epoch(s, 2, &e, err, sizeof err), TESS_OK);
    assert_static_readable(e);
    tess__ckpt_epoch_close(e);
    tess__ckpt_store_close(s);
}

/* A killed writer's temporary in DIR/static is swept by the next claim;
 * anything else there (a link, another name) is not. */
static void test_claim_sweeps_static_temporaries(void **state)
{
    fixture *f = *state;
    char err[768], stale[256], link_name[256], other[256];
    tess__ckpt_store *s = open_store(f, FP);
    claim(s, 0, TESS_OK, err, sizeof err);
    write_with_static(s, 1, 1);
    snprintf(stale, sizeof stale, "%s/static/t7-p0.zst.tmp.ab12cd", f->dir);
    snprintf(link_name, sizeof link_name, "%s/static/t7-p1.zst.tmp.zz99zz", f->dir);
    snprintf(other, sizeof other, "%s/static/notes.txt", f->dir);
    fclose(fopen(stale, "w"));
    fclose(fopen(other, "w"));
    assert_int_equal(symlink(other, link_name), 0);
    claim(s, 0, TESS_OK, err, sizeof err);
    struct stat st;
    assert_int_equal(lstat(stale, &st), -1);
    assert_int_equal(lstat(link_name, &st), 0);
    assert_int_equal(lstat(other, &st), 0);
    tess__ckpt_store_close(s);
}

/* ---------------------------------------------------------------- retention */

static void test_retention(void **state)
{
    fixture *f = *state;
    tess__ckpt_store *s = open_store(f, FP);
    char err[512], path[256];
    for (uint64_t e = 1; e <= 5; e++) write_epoch(s, e);
    snprintf(path, sizeof path, "%s/epoch-00000001.tmp", f->dir);
    assert_int_equal(mkdir(path, 0755), 0); /* a leftover of a crash */
    assert_int_equal(tess__ckpt_retain(s, 0, err, sizeof err), TESS_ERR_INVAL);
    assert_int_equal(tess__ckpt_retain(s, 3, err, sizeof err), TESS_OK);
    uint64_t *v;
    size_t n;
    assert_int_equal(tess__ckpt_list(s, &v, &n, err, sizeof err), TESS_OK);
    assert_int_equal(n, 3);
    assert_int_equal(v[0], 3);
    free(v);
    assert_false(exists(f, "epoch-00000001.tmp"));
    /* A damaged newest manifest does not count towards the epochs kept. */
    snprintf(path, sizeof path, "%s/epoch-00000005/MANIFEST", f->dir);
    flip_byte(path, 9);
    assert_int_equal(tess__ckpt_retain(s, 2, err, sizeof err), TESS_OK);
    assert_int_equal(tess__ckpt_list(s, &v, &n, err, sizeof err), TESS_OK);
    assert_int_equal(n, 3); /* 3, 4 kept, 5 left for the reader to report */
    assert_int_equal(v[0], 3);
    free(v);
    assert_int_equal(tess__ckpt_retain(s, 1, err, sizeof err), TESS_OK);
    tess__ckpt_epoch *e = open_latest(f, s, 4);
    tess__ckpt_epoch_close(e);
    assert_false(exists(f, "epoch-00000003"));
    tess__ckpt_store_close(s);
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
          cmocka_unit_test_setup_teardown(test_latest_chosen, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_truncated, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_flipped, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_deleted, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_manifest_flip, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_manifest_truncated, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_manifest_deleted, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fallback_uncommitted, setup, teardown),
          cmocka_unit_test_setup_teardown(test_read_detects_later_damage, setup, teardown),
          cmocka_unit_test_setup_teardown(test_no_epoch, setup, teardown),
          cmocka_unit_test_setup_teardown(test_fingerprint_mismatch, setup, teardown),
          cmocka_unit_test_setup_teardown(test_static_saved_once, setup, teardown),
          cmocka_unit_test_setup_teardown(test_failed_write_every_step, setup, teardown),
          cmocka_unit_test_setup_teardown(test_unwritable_directory, setup, teardown),
          cmocka_unit_test_setup_teardown(test_writer_misuse, setup, teardown),
          cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
          cmocka_unit_test_setup_teardown(test_claim_refuses_another_job, setup, teardown),
          cmocka_unit_test_setup_teardown(test_claim_without_owner_file, setup, teardown),
          cmocka_unit_test_setup_teardown(test_retention_spares_another_job, setup, teardown),
          cmocka_unit_test_setup_teardown(test_planted_links_not_followed, setup, teardown),
          cmocka_unit_test_setup_teardown(test_claim_sweeps_static_temporaries, setup, teardown))
