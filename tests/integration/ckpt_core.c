/*
 * ckpt_core.c — checkpoints on the public API, for ckpt_core.sh.
 *
 *   ckpt_core sync  DIR [--restore] [--die-at K] [--workers W]
 *   ckpt_core async DIR [--restore] [--die-at N] [--workers W]
 *
 * sync: ITER iterations; in iteration k kernel instance i adds integer
 * updates to keys of every partition of a dense SUM table (so most writes
 * cross ranks), puts into a hash table, and CpBarrier checkpoints every 2
 * iterations with k in the user data.  A static table is checked after a
 * restore.  async: each instance works through ITEMS items, one update per
 * item to a SUM table, calling tess_task_checkpoint_point after each, under
 * CpPeriodic; at the end every key must hold exactly what one pass over all
 * items gives.  --die-at kills rank (nranks-1) with SIGKILL after iteration K
 * (sync) or after its first instance processed N items (async), once a
 * checkpoint has been committed.  Prints one result line; exit 0 only if the
 * async result is exact.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tessera/tessera.h"

#define KEYS 4096
#define ITER 8
#define ITEMS 6000
#define PARTS 6

typedef struct app {
    tess_table *acc, *kv, *fixed;
    const char *mode;
    int die_at, restore;
} app;

static int64_t item_value(int64_t item) { return (item * 7919) % 1000 + 1; }

static int k_iter(tess_task *task, const void *args, size_t len)
{
    app *a = tess_task_app(task);
    int32_t k;
    memcpy(&k, args, sizeof k);
    (void)len;
    int i = tess_task_instance(task);
    tess_ctx *ctx = tess_task_ctx(task);
    if (a->die_at > 0 && a->die_at == k && !a->restore && tess_rank(ctx) == tess_nranks(ctx) - 1) {
        while (access(getenv("CKPT_COMMITTED_FLAG"), F_OK) != 0) usleep(1000);
        raise(SIGKILL);
    }
    for (uint64_t key = (uint64_t)i; key < KEYS; key += PARTS) {
        int64_t v = (int64_t)(key * 31 + (uint64_t)k * 17 + (uint64_t)i) % 1009;
        int rc = tess_table_update(a->acc, &key, &v, sizeof v);
        if (rc != TESS_OK) return rc;
    }
    uint64_t hk = (uint64_t)(k * 100 + i);
    int64_t hv = k * 1000 + i;
    return tess_table_put(a->kv, &hk, &hv, sizeof hv);
}

static int k_items(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    int i = tess_task_instance(task);
    int64_t next = 0;
    size_t plen = 0;
    const void *pos = tess_task_restored_position(task, &plen);
    if (pos != NULL && plen == sizeof next) memcpy(&next, pos, sizeof next);
    tess_ctx *ctx = tess_task_ctx(task);
    int dying = a->die_at > 0 && tess_rank(ctx) == tess_nranks(ctx) - 1 && !a->restore;
    for (int64_t item = next; item < ITEMS; item++) {
        uint64_t key = (uint64_t)((item * 13 + i * 7) % KEYS);
        int64_t v = item_value(item);
        int rc = tess_table_update(a->acc, &key, &v, sizeof v);
        if (rc != TESS_OK) return rc;
        int64_t after = item + 1;
        rc = tess_task_checkpoint_point(task, &after, sizeof after);
        if (rc != TESS_OK) return rc;
        if (dying && item + 1 == a->die_at) {
            while (access(getenv("CKPT_COMMITTED_FLAG"), F_OK) != 0) usleep(1000);
            raise(SIGKILL);
        }
        usleep(20);
    }
    return 0;
}

static int put_static(tess_ctx *ctx, app *a)
{
    for (uint64_t k = 0; k < 64; k++) {
        int64_t v = (int64_t)(k * k);
        int rc = tess_table_put(a->fixed, &k, &v, sizeof v);
        if (rc != TESS_OK) return rc;
    }
    return tess_barrier(ctx);
}

static int check_static(app *a)
{
    for (uint64_t k = 0; k < 64; k++) {
        int64_t v = -1;
        if (tess_table_get(a->fixed, &k, &v, sizeof v, NULL) != TESS_OK || v != (int64_t)(k * k))
            return fprintf(stderr, "ckpt_core: static table wrong at %llu\n",
                           (unsigned long long)k), -1;
    }
    return 0;
}

static int64_t checksum(tess_table *t, uint64_t keys)
{
    int64_t sum = 0;
    for (uint64_t k = 0; k < keys; k++) {
        int64_t v = 0;
        if (tess_table_get(t, &k, &v, sizeof v, NULL) == TESS_OK)
            sum += v * (int64_t)(k % 97 + 1);
    }
    return sum;
}

/* Raise the flag the dying rank waits for: a checkpoint is committed. */
static void flag_committed(tess_ctx *ctx)
{
    uint64_t e = 0;
    if (tess_checkpoint_wait(ctx, &e) == TESS_OK && e > 0 && getenv("CKPT_COMMITTED_FLAG")) {
        FILE *f = fopen(getenv("CKPT_COMMITTED_FLAG"), "w");
        if (f) fclose(f);
    }
}

static int restore(tess_ctx *ctx, int32_t *k_out)
{
    void *user = NULL;
    size_t len = 0;
    uint64_t epoch = 0;
    int rc = tess_checkpoint_restore(ctx, &user, &len, &epoch);
    if (rc == TESS_ERR_NOTFOUND) {
        fprintf(stderr, "ckpt_core: starting afresh: %s\n", tess_last_error(ctx));
        return 0;
    }
    if (rc != TESS_OK) return fprintf(stderr, "ckpt_core: %s\n", tess_last_error(ctx)), -1;
    if (len == sizeof *k_out) memcpy(k_out, user, len);
    fprintf(stderr, "ckpt_core: restored epoch %llu at %d\n", (unsigned long long)epoch,
            *k_out);
    free(user);
    return 1;
}

static int control_sync(tess_ctx *ctx, app *a)
{
    int32_t k = 0;
    int restored = a->restore ? restore(ctx, &k) : 0;
    if (restored < 0) return TESS_ERR_IO;
    int rc = restored ? TESS_OK : put_static(ctx, a);
    for (; rc == TESS_OK && k < ITER; k++) {
        rc = tess_run(ctx, "k_iter", PARTS, a->acc, &k, sizeof k);
        int32_t next = k + 1;
        if (rc == TESS_OK && next % 2 == 0 && next < ITER)
            rc = tess_checkpoint_barrier(ctx, &next, sizeof next);
        else if (rc == TESS_OK)
            rc = tess_barrier(ctx);
        if (rc == TESS_OK && a->die_at > 0 && a->die_at == next && !a->restore) flag_committed(ctx);
    }
    if (rc == TESS_OK && check_static(a) != 0) rc = TESS_ERR_KERNEL;
    if (rc == TESS_OK) rc = tess_checkpoint_wait(ctx, NULL);
    if (rc == TESS_OK)
        printf("sync acc=%lld kv=%lld\n", (long long)checksum(a->acc, KEYS),
               (long long)checksum(a->kv, ITER * 100));
    return rc;
}

static int64_t expected_async(void)
{
    static int64_t want[KEYS];
    memset(want, 0, sizeof want);
    for (int i = 0; i < PARTS; i++)
        for (int64_t item = 0; item < ITEMS; item++)
            want[(item * 13 + i * 7) % KEYS] += item_value(item);
    int64_t sum = 0;
    for (uint64_t k = 0; k < KEYS; k++) sum += want[k] * (int64_t)(k % 97 + 1);
    return sum;
}

static int control_async(tess_ctx *ctx, app *a)
{
    int32_t k = 0;
    int restored = a->restore ? restore(ctx, &k) : 0;
    if (restored < 0) return TESS_ERR_IO;
    int32_t phase = 1;
    int rc = tess_checkpoint_periodic(ctx, 0.02, &phase, sizeof phase);
    if (rc == TESS_OK) rc = tess_run(ctx, "k_items", PARTS, a->acc, NULL, 0);
    if (rc == TESS_OK && a->die_at && !a->restore) {
        /* the dying rank waits for this flag: some epoch with items is in */
        for (int tries = 0; tries < 5000; tries++) {
            uint64_t e = 0;
            tess_checkpoint_wait(ctx, &e);
            if (e > 0) {
                FILE *f = fopen(getenv("CKPT_COMMITTED_FLAG"), "w");
                if (f) fclose(f);
                break;
            }
            usleep(2000);
        }
    }
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    if (rc == TESS_OK) rc = tess_checkpoint_periodic(ctx, 0, NULL, 0);
    if (rc == TESS_OK) rc = tess_checkpoint_wait(ctx, NULL);
    if (rc != TESS_OK) return rc;
    int64_t got = checksum(a->acc, KEYS), want = expected_async();
    printf("async acc=%lld expected=%lld %s\n", (long long)got, (long long)want,
           got == want ? "exact" : "WRONG");
    return got == want ? TESS_OK : TESS_ERR_KERNEL;
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = strcmp(a->mode, "sync") == 0 ? control_sync(ctx, a) : control_async(ctx, a);
    if (rc != TESS_OK) fprintf(stderr, "ckpt_core: %s\n", tess_last_error(ctx));
    return rc;
}

static int create_tables(tess_ctx *ctx, app *a)
{
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = "acc";
    s.key_size = 8;
    s.value_size = 8;
    s.dense = 1;
    s.key_count = KEYS;
    s.partitions = PARTS;
    s.accum = TESS_ACC_SUM;
    s.elem = TESS_I64;
    int rc = tess_table_create(ctx, &s, &a->acc);
    tess_table_spec_init(&s);
    s.name = "kv";
    s.key_size = 8;
    s.value_size = 8;
    s.partitions = 4;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->kv);
    s.name = "fixed";
    s.partitions = 3;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->fixed);
    if (rc == TESS_OK) rc = tess_table_set_static(a->fixed);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ckpt_core sync|async DIR [--restore] [--die-at N] [--workers W]\n");
        return 2;
    }
    app a = {.mode = argv[1]};
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 2;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--restore") == 0) a.restore = 1;
        else if (strcmp(argv[i], "--die-at") == 0 && i + 1 < argc) a.die_at = atoi(argv[++i]);
        else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) cfg.workers = atoi(argv[++i]);
        else return fprintf(stderr, "ckpt_core: bad argument %s\n", argv[i]), 2;
    }
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != TESS_OK) return 1;
    int rc = create_tables(ctx, &a);
    if (rc == TESS_OK) rc = tess_checkpoint_enable(ctx, argv[2], argv[1], 2);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "k_iter", k_iter);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "k_items", k_items);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &a);
    else fprintf(stderr, "ckpt_core: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    return rc == TESS_OK ? 0 : 1;
}
