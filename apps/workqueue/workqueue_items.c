/*
 * workqueue_items.c — the items and their work, as pure functions of (seed,
 * index), so that the kernels (which read payload and bucket from the items
 * table) and the control function's independent check (which recomputes
 * them here) agree only if the table, and every restore of it, is right.
 */
#include "tessera/rng.h"
#include "workqueue.h"

enum { WQ_STREAM_PAYLOAD = 1, WQ_STREAM_BUCKET = 2 };

int64_t wq_item_payload(uint64_t seed, uint64_t item)
{
    return (int64_t)(tess_rng_u64(seed, WQ_STREAM_PAYLOAD, item) & 0xffff);
}

int64_t wq_item_bucket(uint64_t seed, uint64_t item, uint64_t buckets)
{
    return (int64_t)(tess_rng_u64(seed, WQ_STREAM_BUCKET, item) % buckets);
}

int64_t wq_item_result(uint64_t item, int64_t payload, int64_t work)
{
    /* Items differ in cost (work .. 2*work rounds) so partitions finish at
     * different times, as real queues do. */
    int64_t rounds = work + (work > 0 ? payload % (work + 1) : 0);
    uint64_t x = (uint64_t)payload ^ (item << 16);
    for (int64_t r = 0; r < rounds; r++) x = tess_mix64(x + (uint64_t)r);
    /* 32 bits, so that N sums of them stay far from int64 overflow. */
    return (int64_t)(x & 0xffffffffu);
}
