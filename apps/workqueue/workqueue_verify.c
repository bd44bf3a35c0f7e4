/*
 * workqueue_verify.c — the check at the end of a run, its report and the
 * metrics.  The expected per-bucket counts and checksums are recomputed here
 * from the generator alone (never read from a table), so a restore that
 * loses or repeats an item, or damages the items table, shows up as a
 * mismatch.  The report holds only figures that do not depend on ranks,
 * workers, timing or checkpoints: runs with and without them compare equal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workqueue.h"

typedef struct bucket_totals {
    long n;
    uint64_t stray; /* keys outside [0, n): a table bug, counted as a mismatch */
    int64_t *count;
    int64_t *sum;
} bucket_totals;

static int totals_alloc(bucket_totals *t, long buckets)
{
    t->n = buckets;
    t->count = calloc((size_t)buckets, sizeof *t->count);
    t->sum = calloc((size_t)buckets, sizeof *t->sum);
    return t->count && t->sum ? TESS_OK : TESS_ERR_NOMEM;
}

static void totals_free(bucket_totals *t)
{
    free(t->count);
    free(t->sum);
}

/* What every item should have added, from the generator only. */
static void expected_totals(const wq_app *app, bucket_totals *exp)
{
    uint64_t seed = (uint64_t)app->opt.seed, buckets = (uint64_t)app->opt.buckets;
    for (uint64_t i = 0; i < (uint64_t)app->opt.items; i++) {
        int64_t payload = wq_item_payload(seed, i);
        int64_t b = wq_item_bucket(seed, i, buckets);
        exp->count[b] += 1;
        exp->sum[b] += wq_item_result(i, payload, app->opt.work);
    }
}

/* Every present key of every partition of t: fn(key, value, arg). */
static int scan_table(tess_table *t, void (*fn)(uint64_t, const int64_t *, void *), void *arg)
{
    int rc = TESS_OK;
    for (int p = 0; rc == TESS_OK && p < tess_table_partitions(t); p++) {
        tess_iter *it = NULL;
        rc = tess_table_iter(t, p, &it);
        const void *key, *value;
        size_t len;
        int more;
        while (rc == TESS_OK && (more = tess_iter_next(it, &key, &value, &len)) != 0) {
            if (more < 0) {
                rc = more;
                break;
            }
            uint64_t k;
            int64_t v[2];
            memcpy(&k, key, sizeof k);
            memcpy(v, value, len < sizeof v ? len : sizeof v);
            fn(k, v, arg);
        }
        tess_iter_free(it);
    }
    return rc;
}

static void count_processed(uint64_t key, const int64_t *v, void *arg)
{
    wq_verdict *d = arg;
    (void)key;
    if (v[0] == 1) d->once++;
    else if (v[0] > 1) d->repeated++;
}

static void add_bucket(uint64_t key, const int64_t *v, void *arg)
{
    bucket_totals *got = arg;
    if (key >= (uint64_t)got->n) {
        got->stray++;
        return;
    }
    got->count[key] += v[0];
    got->sum[key] += v[1];
}

/* A few mismatching buckets on stderr, to tell a lost or repeated update
 * (count off by one) from a damaged value. */
static void report_bucket(long b, const bucket_totals *got, const bucket_totals *exp, int shown)
{
    if (shown >= 4) return;
    fprintf(stderr,
            "%s: bucket %ld: count %" PRId64 " (expected %" PRId64 "), checksum %" PRId64
            " (expected %" PRId64 ", difference %" PRId64 ")\n",
            WQ_APP, b, got->count[b], exp->count[b], got->sum[b], exp->sum[b],
            got->sum[b] - exp->sum[b]);
}

static void compare_buckets(const wq_app *app, const bucket_totals *got, const bucket_totals *exp,
                            wq_verdict *d)
{
    for (long b = 0; b < app->opt.buckets; b++) {
        if (got->count[b] != exp->count[b] || got->sum[b] != exp->sum[b])
            report_bucket(b, got, exp, (int)(b - d->buckets_ok));
        d->count_total += got->count[b];
        d->count_expected += exp->count[b];
        d->checksum += (uint64_t)got->sum[b];
        d->checksum_expected += (uint64_t)exp->sum[b];
        d->buckets_ok += got->count[b] == exp->count[b] && got->sum[b] == exp->sum[b];
    }
}

int wq_verify(tess_ctx *ctx, wq_app *app)
{
    wq_verdict *d = &app->verdict;
    bucket_totals got = {0}, exp = {0};
    memset(d, 0, sizeof *d);
    int rc = totals_alloc(&got, app->opt.buckets);
    if (rc == TESS_OK) rc = totals_alloc(&exp, app->opt.buckets);
    if (rc == TESS_OK) rc = scan_table(app->processed, count_processed, d);
    if (rc == TESS_OK) rc = scan_table(app->sums, add_bucket, &got);
    if (rc == TESS_OK) {
        expected_totals(app, &exp);
        compare_buckets(app, &got, &exp, d);
        /* Keys never written are absent, and so were never processed. */
        d->missing = (uint64_t)app->opt.items - d->once - d->repeated;
        d->ok = d->once == (uint64_t)app->opt.items && d->buckets_ok == app->opt.buckets &&
                got.stray == 0;
    } else {
        app_error(WQ_APP, "cannot read the tables back: %s", tess_last_error(ctx));
    }
    totals_free(&got);
    totals_free(&exp);
    return rc;
}

static void print_report(const wq_app *app, FILE *fp)
{
    const wq_verdict *d = &app->verdict;
    fprintf(fp, "workqueue items %ld seed %ld work %ld buckets %ld\n", app->opt.items,
            app->opt.seed, app->opt.work, app->opt.buckets);
    fprintf(fp,
            "processed exactly once: %" PRIu64 "/%ld (never: %" PRIu64 ", more than once: %" PRIu64
            ")\n",
            d->once, app->opt.items, d->missing, d->repeated);
    fprintf(fp, "bucket counts: %" PRId64 " (expected %" PRId64 ")\n", d->count_total,
            d->count_expected);
    fprintf(fp, "checksum: %" PRIu64 " (expected %" PRIu64 ")\n", d->checksum,
            d->checksum_expected);
    fprintf(fp, "buckets matching: %ld/%ld\n", d->buckets_ok, app->opt.buckets);
    fprintf(fp, "verdict: %s\n", d->ok ? "OK" : "FAILED");
}

int wq_write_report(const wq_app *app)
{
    if (app->opt.output == NULL) {
        print_report(app, stdout);
        return fflush(stdout) == 0 ? 0 : -1;
    }
    app_outfile o;
    if (app_outfile_open(&o, app->opt.output) != 0) return -1;
    print_report(app, o.fp);
    return app_outfile_commit(&o);
}

static void checkpoint_metrics(app_metrics *m, tess_ctx *ctx, const wq_app *app)
{
    tess_checkpoint_stats st;
    tess_checkpoint_get_stats(ctx, &st);
    app_metrics_bool(m, "checkpointing", app->opt.checkpoint_dir != NULL);
    app_metrics_num(m, "checkpoint_seconds", app->opt.checkpoint_seconds);
    app_metrics_bool(m, "restored", app->restored);
    app_metrics_int(m, "restored_epoch", (int64_t)app->restored_epoch);
    /* committed, failed, cut and write figures: app_metrics_standard */
    app_metrics_int(m, "checkpoints_started", (int64_t)st.started);
}

int wq_write_metrics(wq_app *app, tess_ctx *ctx, double wall_seconds)
{
    app_metrics *m = app_metrics_new();
    if (m == NULL) {
        app_error(WQ_APP, "%s: out of memory", app->opt.metrics);
        return -1;
    }
    app_metrics_standard(m, ctx, WQ_APP, wall_seconds);
    app_metrics_int(m, "items", app->opt.items);
    app_metrics_int(m, "item_seed", app->opt.seed);
    app_metrics_int(m, "work", app->opt.work);
    app_metrics_int(m, "item_us", app->opt.item_us);
    app_metrics_int(m, "partitions", app->partitions);
    app_metrics_int(m, "buckets", app->opt.buckets);
    app_metrics_num(m, "load_seconds", app->load_seconds);
    app_metrics_num(m, "process_seconds", app->process_seconds);
    app_metrics_num(m, "items_per_second",
                    app->process_seconds > 0 ? (double)app->opt.items / app->process_seconds : 0);
    app_metrics_bool(m, "verified", app->verdict.ok);
    app_metrics_int(m, "processed_once", (int64_t)app->verdict.once);
    app_metrics_int(m, "processed_never", (int64_t)app->verdict.missing);
    app_metrics_int(m, "processed_repeatedly", (int64_t)app->verdict.repeated);
    checkpoint_metrics(m, ctx, app);
    int rc = app_metrics_write(m, app->opt.metrics);
    app_metrics_free(m);
    return rc;
}
