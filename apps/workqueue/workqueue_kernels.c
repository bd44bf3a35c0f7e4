/*
 * workqueue_kernels.c — the two kernels.  wq_load fills partition i of the
 * items table; wq_process works through partition i in index order, one
 * checkpoint point after every --point-every items, so that a restore
 * resumes each instance exactly after the last item its checkpoint holds.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "workqueue.h"

/* Instance i puts {payload, bucket} of every item of its partition. */
static int wq_load(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    wq_app *app = tess_task_app(task);
    uint64_t first, count;
    int rc = tess_table_dense_range(app->items, tess_task_instance(task), &first, &count);
    for (uint64_t i = first; rc == TESS_OK && i < first + count; i++) {
        int64_t item[2] = {wq_item_payload((uint64_t)app->opt.seed, i),
                           wq_item_bucket((uint64_t)app->opt.seed, i, (uint64_t)app->opt.buckets)};
        rc = tess_table_put(app->items, &i, item, sizeof item);
    }
    return rc;
}

/* Where this instance starts: its first item, or the position its last
 * checkpoint point saved (which must lie within the partition). */
static int start_position(tess_task *task, uint64_t first, uint64_t count, uint64_t *next_out)
{
    size_t len = 0;
    const void *pos = tess_task_restored_position(task, &len);
    *next_out = first;
    if (pos == NULL) return TESS_OK;
    uint64_t next;
    if (len != sizeof next) goto bad;
    memcpy(&next, pos, sizeof next);
    if (next < first || next > first + count) goto bad;
    *next_out = next;
    return TESS_OK;
bad:
    fprintf(stderr,
            "tessera %s: partition %d: restored position of %zu bytes does not "
            "fit items [%llu, %llu)\n",
            WQ_APP, tess_task_instance(task), len, (unsigned long long)first,
            (unsigned long long)(first + count));
    return TESS_ERR_FORMAT;
}

static void sleep_us(int64_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* processed[i] += 1 and sums[bucket] += {1, result}: both accumulators, so
 * the totals show an item counted twice as clearly as one never counted. */
static int record_item(wq_app *app, uint64_t i, uint64_t bucket, int64_t result)
{
    int64_t one = 1;
    int64_t add[2] = {1, result};
    int rc = tess_table_update(app->processed, &i, &one, sizeof one);
    if (rc == TESS_OK) rc = tess_table_update(app->sums, &bucket, add, sizeof add);
    return rc;
}

static int process_item(wq_app *app, const wq_process_args *a, uint64_t i, const int64_t *item)
{
    int64_t result = wq_item_result(i, item[0], a->work);
    int times = a->fault_item != i           ? 1
                : a->fault == WQ_FAULT_SKIP  ? 0
                : a->fault == WQ_FAULT_TWICE ? 2
                                             : 1;
    int rc = TESS_OK;
    for (int k = 0; k < times && rc == TESS_OK; k++)
        rc = record_item(app, i, (uint64_t)item[1], result);
    if (rc == TESS_OK && a->item_us > 0) sleep_us(a->item_us);
    return rc;
}

/* A checkpoint point after every point_every items and after the last one. */
static int after_item(tess_task *task, const wq_process_args *a, uint64_t done, uint64_t next,
                      uint64_t end)
{
    if (tess_interrupted(tess_task_ctx(task))) return TESS_ERR_INTERRUPTED;
    if (!a->checkpointing || (done % (uint64_t)a->point_every != 0 && next != end)) return TESS_OK;
    return tess_task_checkpoint_point(task, &next, sizeof next);
}

static int wq_process(tess_task *task, const void *args, size_t len)
{
    wq_process_args a;
    if (len != sizeof a) return TESS_ERR_INVAL;
    memcpy(&a, args, sizeof a);
    wq_app *app = tess_task_app(task);
    int p = tess_task_instance(task);
    uint64_t first, count, next;
    int rc = tess_table_dense_range(app->items, p, &first, &count);
    const int64_t *items = tess_table_dense_data(app->items, p, &count);
    if (rc == TESS_OK && items == NULL && count > 0) rc = TESS_ERR_INVAL;
    if (rc == TESS_OK) rc = start_position(task, first, count, &next);
    uint64_t start = rc == TESS_OK ? next : first;
    while (rc == TESS_OK && next < first + count) {
        rc = process_item(app, &a, next, items + 2 * (next - first));
        next++;
        if (rc == TESS_OK) rc = after_item(task, &a, next - start, next, first + count);
    }
    if (rc == TESS_OK && a.progress)
        fprintf(stderr, "%s: partition %d done: items %llu..%llu (%llu from a checkpoint)\n",
                WQ_APP, p, (unsigned long long)first, (unsigned long long)(first + count),
                (unsigned long long)(start - first));
    return rc;
}

int wq_register_kernels(tess_ctx *ctx)
{
    int rc = tess_register_kernel(ctx, "wq_load", wq_load);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "wq_process", wq_process);
    return rc;
}
