/*
 * migrate.c — partitions move between ranks while kernels write to them
 * (work stealing, docs/stealing.md), and no operation is lost, duplicated
 * or reordered.  Run embedded (`migrate --workers 4`) or under
 * `mpirun -np 3 migrate`, with TESS_STEAL_FORCE=SEED:MS to move tasks at
 * random moments or TESS_SLOW_WORKER=RANK:FACTOR to make stealing pay.
 *
 * Every kernel instance i, in each of R rounds r:
 *   - appends sequence number r to each of its own keys of `order`, whose
 *     accumulator records any gap, repeat or step back;
 *   - puts r into its own key of `last` (replace: must end at the last r);
 *   - adds 1 to 16 keys of `sums` (an int64 sum, every instance writes
 *     every partition), a deterministic pattern the checker replays;
 *   - every 2 rounds flushes and reads its own `order` key back.
 * All three tables are grouped with the locality table `work`, so a stolen
 * instance's partitions of all of them move while the others write to them.
 * Prints "ok"/"FAIL" lines, "steals: N" and "migrations: N" (rank 0's
 * counts), and exits non-zero on any failure.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tessera/tessera.h"

#include "checks.h"

#define OWN_KEYS 4
#define SUM_PER_ROUND 16
#define EPOCHS 3

typedef struct seqval {
    int64_t first, last, count, bad;
} seqval;

typedef struct app {
    tess_table *work, *sums, *order, *last, *fail;
    int parts, rounds;
    uint64_t sum_keys;
} app;

typedef struct mix_args {
    int32_t epoch, rounds;
} mix_args;

/* ---- the order-checking accumulator: a value is a run of sequence numbers ---- */
static void sv_init(void *v, size_t n)
{
    (void)n;
    memset(v, 0, sizeof(seqval));
}

static void sv_acc(void *v, const void *u, size_t n)
{
    (void)n;
    seqval *a = v;
    const seqval *b = u;
    if (b->first != a->last + 1) a->bad++;
    if (a->count == 0) a->first = b->first;
    a->last = b->last;
    a->count += b->count;
    a->bad += b->bad;
}

static void sv_view(void *out, const void *v, size_t n) { memcpy(out, v, n); }

static uint64_t sum_key(const app *a, int instance, int64_t r, int j)
{
    return ((uint64_t)instance * 7919u + (uint64_t)r * 104729u + (uint64_t)j * 31u) % a->sum_keys;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

static int mix_round(app *a, int i, int64_t r)
{
    int rc = TESS_OK;
    for (int k = 0; k < OWN_KEYS && rc == TESS_OK; k++) {
        uint64_t key = (uint64_t)i * OWN_KEYS + (uint64_t)k;
        seqval u = {r, r, 1, 0};
        rc = tess_table_update(a->order, &key, &u, sizeof u);
    }
    uint64_t mine = (uint64_t)i;
    if (rc == TESS_OK) rc = tess_table_put(a->last, &mine, &r, sizeof r);
    int64_t one = 1;
    for (int j = 0; j < SUM_PER_ROUND && rc == TESS_OK; j++) {
        uint64_t key = sum_key(a, i, r, j);
        rc = tess_table_update(a->sums, &key, &one, sizeof one);
    }
    return rc;
}

/* Read-your-writes through a move: after a flush the own key shows round r. */
static int read_back(app *a, int i, int64_t r)
{
    uint64_t key = (uint64_t)i * OWN_KEYS;
    seqval got;
    if (tess_table_flush(a->order) != TESS_OK) return 0;
    if (tess_table_get(a->order, &key, &got, sizeof got, NULL) != TESS_OK) return 0;
    return got.last == r && got.bad == 0;
}

static int k_mix(tess_task *t, const void *args, size_t len)
{
    app *a = tess_task_app(t);
    mix_args m;
    if (len != sizeof m) return TESS_ERR_INVAL;
    memcpy(&m, args, sizeof m);
    int i = tess_task_instance(t);
    int64_t failures = !tess_table_is_local(a->work, i); /* ran where its partition is */
    int64_t base = (int64_t)m.epoch * m.rounds;
    for (int64_t r = base + 1; r <= base + m.rounds; r++) {
        if (mix_round(a, i, r) != TESS_OK) return -1;
        if (r % 2 == 0) failures += !read_back(a, i, r);
        pause_us(150);
    }
    uint64_t zero = 0;
    return tess_table_update(a->fail, &zero, &failures, sizeof failures);
}

/* ---- checks on rank 0 after the epochs ---- */

static void check_order(app *a)
{
    int64_t want = (int64_t)EPOCHS * a->rounds, bad = 0;
    for (uint64_t key = 0; key < (uint64_t)a->parts * OWN_KEYS; key++) {
        seqval v = {0, 0, 0, 0};
        int rc = tess_table_get(a->order, &key, &v, sizeof v, NULL);
        if (rc != TESS_OK || v.first != 1 || v.last != want || v.count != want || v.bad != 0) {
            if (bad++ < 3)
                fprintf(stderr, "order key %llu: first %lld last %lld count %lld bad %lld\n",
                        (unsigned long long)key, (long long)v.first, (long long)v.last,
                        (long long)v.count, (long long)v.bad);
        }
        int64_t last = -1;
        uint64_t owner = key / OWN_KEYS;
        if (key % OWN_KEYS == 0 &&
            (tess_table_get(a->last, &owner, &last, sizeof last, NULL) != TESS_OK || last != want))
            bad++;
    }
    check(bad == 0, "per-key order: every sequence complete, in order, once; last put wins");
}

static void check_sums(app *a)
{
    int64_t *want = calloc(a->sum_keys, sizeof *want), total = 0, bad = 0;
    if (want == NULL) return check(0, "memory for the expected sums");
    for (int i = 0; i < a->parts; i++)
        for (int64_t r = 1; r <= (int64_t)EPOCHS * a->rounds; r++)
            for (int j = 0; j < SUM_PER_ROUND; j++) want[sum_key(a, i, r, j)]++;
    for (uint64_t k = 0; k < a->sum_keys; k++) {
        int64_t v = 0;
        int rc = tess_table_get(a->sums, &k, &v, sizeof v, NULL);
        if (rc == TESS_ERR_NOTFOUND) v = 0;
        else if (rc != TESS_OK) v = -1;
        total += v;
        bad += v != want[k];
    }
    free(want);
    printf("sum of all updates: %lld (expected %lld)\n", (long long)total,
           (long long)a->parts * EPOCHS * a->rounds * SUM_PER_ROUND);
    check(bad == 0 && total == (int64_t)a->parts * EPOCHS * a->rounds * SUM_PER_ROUND,
          "sums conserved exactly, key by key");
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = TESS_OK;
    for (int e = 0; e < EPOCHS && rc == TESS_OK; e++) {
        mix_args m = {e, a->rounds};
        rc = tess_run(ctx, "k_mix", a->parts, a->work, &m, sizeof m);
        if (rc == TESS_OK) rc = tess_barrier(ctx);
    }
    check(rc == TESS_OK, "epochs ran and their barriers completed");
    if (rc != TESS_OK) fprintf(stderr, "%s\n", tess_last_error(ctx));
    int64_t failures = -1;
    uint64_t zero = 0;
    tess_table_get(a->fail, &zero, &failures, sizeof failures, NULL);
    check(failures == 0, "instances ran where their partition lives; read-your-writes held");
    check_order(a);
    check_sums(a);
    int moved = 0;
    for (int p = 0; p < a->parts; p++)
        moved += tess_table_owner(a->work, p) != p % tess_nranks(ctx);
    for (int p = 0; p < a->parts; p++)
        if (tess_table_owner(a->sums, p) != tess_table_owner(a->work, p) ||
            tess_table_owner(a->order, p) != tess_table_owner(a->work, p))
            moved = -1000;
    check(moved >= 0, "grouped tables moved together");
    tess_stats st;
    tess_get_stats(ctx, &st);
    printf("steals: %llu\npartitions away from their first rank: %d\n",
           (unsigned long long)st.steals, moved);
    return checks_report() ? TESS_ERR_KERNEL : TESS_OK;
}

static int make_tables(tess_ctx *ctx, app *a)
{
    tess_table_spec s = checks_sum_spec("work", a->parts, (uint64_t)a->parts);
    int rc = tess_table_create(ctx, &s, &a->work);
    s.name = "sums";
    s.key_count = a->sum_keys;
    s.group_with = a->work;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->sums);
    s.name = "order";
    s.dense = 0;
    s.key_count = 0;
    s.value_size = sizeof(seqval);
    s.accum = TESS_ACC_USER;
    s.accumulator = "seqcheck";
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->order);
    s.name = "last";
    s.value_size = 8;
    s.accum = TESS_ACC_REPLACE;
    s.accumulator = NULL;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->last);
    s = checks_sum_spec("fail", 1, 0);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->fail);
    return rc;
}

static int setup(tess_ctx *ctx, app *a)
{
    tess_accum_ops ops = {sv_init, sv_acc, sv_acc, sv_view};
    int rc = tess_register_accumulator(ctx, "seqcheck", &ops);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "k_mix", k_mix);
    if (rc == TESS_OK) rc = make_tables(ctx, a);
    return rc;
}

int main(int argc, char **argv)
{
    tess_config cfg;
    tess_config_init(&cfg);
    app a = {.parts = 24, .rounds = 120, .sum_keys = 4096};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--workers") == 0) cfg.workers = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--partitions") == 0) a.parts = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0) a.rounds = atoi(argv[i + 1]);
    }
    tess_ctx *ctx = NULL;
    if (tess_init(&cfg, &ctx) != TESS_OK) return 2;
    int rc = setup(ctx, &a);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &a);
    else fprintf(stderr, "setup: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    return rc == TESS_OK ? 0 : 1;
}
