/*
 * ckpt_core.c — checkpoints on the public API, for ckpt_core.sh.
 *
 *   ckpt_core sync  DIR [--restore] [--die-at K] [--workers W] [--parts P] [--work-ms MS]
 *   ckpt_core async DIR [--restore] [--die-at N] [--workers W] [--parts P] [--items N]
 *                       [--period S] [--kill-after-steal]
 *
 * sync: ITER iterations; in iteration k kernel instance i (of P, default 6)
 * adds integer updates to keys of every partition of a dense SUM table (so
 * most writes cross ranks), puts into a hash table, and CpBarrier
 * checkpoints every 2 iterations with k in the user data; --work-ms makes
 * each instance take that long first (so that a slowed rank is worth
 * stealing from).  A static table is checked after a restore.  async: each
 * instance works through N items (default 6000), one update per item to a
 * SUM table, calling tess_task_checkpoint_point after each, under
 * CpPeriodic every S seconds (default 0.02; the number started is reported
 * on stderr); at the end every key must hold exactly what one pass over all
 * items gives.  --die-at kills rank (nranks-1) with SIGKILL after iteration
 * K (sync) or once its first instance processed N items (async), when a
 * checkpoint has been committed; with --kill-after-steal (async), only once
 * a task has been stolen and a checkpoint started after that steal has been
 * committed.  Rank 0 reports the steals so far on stderr ("ckpt_core: N
 * steal(s)") when it lets the rank die and at the end.  Prints one result
 * line; exit 0 only if the async result is exact.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tessera/tessera.h"

#include "checks.h"

#define KEYS 4096
#define ITER 8

typedef struct app {
    tess_table *acc, *kv, *fixed;
    const char *mode;
    int die_at, restore;
    int parts, items, work_ms, kill_after_steal;
    double period; /* CpPeriodic, seconds */
    tess_ctx *ctx; /* for the watcher thread */
    pthread_t watcher;
    _Atomic int watcher_stop;
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
    if (a->work_ms > 0) usleep((useconds_t)a->work_ms * 1000);
    for (uint64_t key = (uint64_t)i; key < KEYS; key += (uint64_t)a->parts) {
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
    for (int64_t item = next; item < a->items; item++) {
        uint64_t key = (uint64_t)((item * 13 + i * 7) % KEYS);
        int64_t v = item_value(item);
        int rc = tess_table_update(a->acc, &key, &v, sizeof v);
        if (rc != TESS_OK) return rc;
        int64_t after = item + 1;
        rc = tess_task_checkpoint_point(task, &after, sizeof after);
        if (rc != TESS_OK) return rc;
        if (dying && item + 1 == a->die_at) {
            /* at a point while waiting, so that this rank's cuts can go on */
            while (access(getenv("CKPT_COMMITTED_FLAG"), F_OK) != 0 && rc == TESS_OK) {
                usleep(1000);
                rc = tess_task_checkpoint_point(task, &after, sizeof after);
            }
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
                           (unsigned long long)k),
                   -1;
    }
    return 0;
}

static int64_t checksum(tess_table *t, uint64_t keys)
{
    int64_t sum = 0;
    for (uint64_t k = 0; k < keys; k++) {
        int64_t v = 0;
        if (tess_table_get(t, &k, &v, sizeof v, NULL) == TESS_OK) sum += v * (int64_t)(k % 97 + 1);
    }
    return sum;
}

static void report_steals(tess_ctx *ctx, const char *when)
{
    tess_stats st;
    tess_get_stats(ctx, &st);
    fprintf(stderr, "ckpt_core: %llu steal(s) %s\n", (unsigned long long)st.steals, when);
}

static void raise_flag(void)
{
    FILE *f = fopen(getenv("CKPT_COMMITTED_FLAG"), "w");
    if (f) fclose(f);
}

/* Raise the flag the dying rank waits for: a checkpoint is committed. */
static void flag_committed(tess_ctx *ctx)
{
    uint64_t e = 0;
    if (tess_checkpoint_wait(ctx, &e) == TESS_OK && e > 0 && getenv("CKPT_COMMITTED_FLAG")) {
        report_steals(ctx, "before the kill");
        raise_flag();
    }
}

/*
 * Rank 0 of an async run meant to die, on its own thread (the control
 * thread is in the barrier, where steals are decided): raise the flag once a
 * checkpoint is committed — with --kill-after-steal, once a steal has
 * happened and a checkpoint started after it is committed (it then has the
 * moved partitions where they went).  Gives up waiting for a steal after 60 s.
 */
static void *watch_for_flag(void *arg)
{
    app *a = arg;
    tess_ctx *ctx = a->ctx;
    uint64_t need = 1; /* committed checkpoints */
    int stolen = !a->kill_after_steal;
    double give_up = tess_now() + 60;
    while (!atomic_load(&a->watcher_stop)) {
        tess_stats st;
        tess_checkpoint_stats cs;
        tess_get_stats(ctx, &st);
        tess_checkpoint_get_stats(ctx, &cs);
        if (!stolen && (st.steals > 0 || tess_now() > give_up)) {
            stolen = 1;
            need = cs.started + 1; /* the next one starts after the steal */
        }
        if (stolen && cs.committed >= need) {
            report_steals(ctx, "before the kill");
            raise_flag();
            break;
        }
        usleep(1000);
    }
    return NULL;
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
    fprintf(stderr, "ckpt_core: restored epoch %llu at %d\n", (unsigned long long)epoch, *k_out);
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
        rc = tess_run(ctx, "k_iter", a->parts, a->acc, &k, sizeof k);
        int32_t next = k + 1;
        if (rc == TESS_OK && next % 2 == 0 && next < ITER)
            rc = tess_checkpoint_barrier(ctx, &next, sizeof next);
        else if (rc == TESS_OK) rc = tess_barrier(ctx);
        if (rc == TESS_OK && a->die_at > 0 && a->die_at == next && !a->restore) flag_committed(ctx);
    }
    if (rc == TESS_OK && check_static(a) != 0) rc = TESS_ERR_KERNEL;
    if (rc == TESS_OK) rc = tess_checkpoint_wait(ctx, NULL);
    if (rc == TESS_OK)
        printf("sync acc=%lld kv=%lld\n", (long long)checksum(a->acc, KEYS),
               (long long)checksum(a->kv, ITER * 100));
    return rc;
}

static int64_t expected_async(const app *a)
{
    static int64_t want[KEYS];
    memset(want, 0, sizeof want);
    for (int i = 0; i < a->parts; i++)
        for (int64_t item = 0; item < a->items; item++)
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
    a->ctx = ctx;
    int watching =
        a->die_at && !a->restore && pthread_create(&a->watcher, NULL, watch_for_flag, a) == 0;
    double t0 = tess_now();
    int rc = tess_checkpoint_periodic(ctx, a->period, &phase, sizeof phase);
    if (rc == TESS_OK) rc = tess_run(ctx, "k_items", a->parts, a->acc, NULL, 0);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    atomic_store(&a->watcher_stop, 1);
    if (watching) pthread_join(a->watcher, NULL);
    if (rc == TESS_OK) rc = tess_checkpoint_periodic(ctx, 0, NULL, 0);
    double seconds = tess_now() - t0;
    if (rc == TESS_OK) rc = tess_checkpoint_wait(ctx, NULL);
    if (rc != TESS_OK) return rc;
    tess_checkpoint_stats cs;
    tess_checkpoint_get_stats(ctx, &cs);
    fprintf(stderr, "ckpt_core: %llu checkpoint(s) started in %.2f s, period %g s\n",
            (unsigned long long)cs.started, seconds, a->period);
    int64_t got = checksum(a->acc, KEYS), want = expected_async(a);
    printf("async acc=%lld expected=%lld %s\n", (long long)got, (long long)want,
           got == want ? "exact" : "WRONG");
    return got == want ? TESS_OK : TESS_ERR_KERNEL;
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = strcmp(a->mode, "sync") == 0 ? control_sync(ctx, a) : control_async(ctx, a);
    if (rc != TESS_OK) fprintf(stderr, "ckpt_core: %s\n", tess_last_error(ctx));
    else report_steals(ctx, "in this run");
    return rc;
}

static int create_tables(tess_ctx *ctx, app *a)
{
    tess_table_spec s = checks_sum_spec("acc", a->parts, KEYS);
    int rc = tess_table_create(ctx, &s, &a->acc);
    s = checks_spec("kv", 8, 4, 0);
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
        fprintf(stderr, "usage: ckpt_core sync|async DIR [--restore] [--die-at N] [--workers W] "
                        "[--parts P] [--items N] [--work-ms MS] [--kill-after-steal]\n");
        return 2;
    }
    app a = {.mode = argv[1], .parts = 6, .items = 6000, .period = 0.02};
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 2;
    for (int i = 3; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--restore") == 0) a.restore = 1;
        else if (strcmp(arg, "--kill-after-steal") == 0) a.kill_after_steal = 1;
        else if (val && strcmp(arg, "--die-at") == 0) a.die_at = atoi(val), i++;
        else if (val && strcmp(arg, "--workers") == 0) cfg.workers = atoi(val), i++;
        else if (val && strcmp(arg, "--parts") == 0) a.parts = atoi(val), i++;
        else if (val && strcmp(arg, "--items") == 0) a.items = atoi(val), i++;
        else if (val && strcmp(arg, "--work-ms") == 0) a.work_ms = atoi(val), i++;
        else if (val && strcmp(arg, "--period") == 0) a.period = atof(val), i++;
        else return fprintf(stderr, "ckpt_core: bad argument %s\n", arg), 2;
    }
    if (a.parts < 1 || a.parts > KEYS || a.items < 1 || !(a.period > 0))
        return fprintf(stderr, "ckpt_core: --parts in [1, %d], --items >= 1, --period > 0\n", KEYS),
               2;
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
