/*
 * partition_dense.c — the dense layout: keys first..first+count-1 map to
 * array slots directly; a bitmap says which keys are present.  Fixed-size
 * values start as the accumulator's identity, so an update never has to
 * test for presence before combining.
 */
#include <stdlib.h>
#include <string.h>
#include "partition_impl.h"

int tess__dense_init(tess__partition *p)
{
    size_t n = p->count ? p->count : 1;
    size_t per = p->value_size ? p->value_size : sizeof *p->var;
    if (p->count > SIZE_MAX / per) return TESS_ERR_NOMEM;
    p->present = calloc((n + 7) / 8, 1);
    if (p->value_size) {
        p->vals = malloc(n * p->value_size);
        if (p->vals != NULL)
            for (uint64_t i = 0; i < p->count; i++)
                tess__accum_identity(&p->acc, p->vals + i * p->value_size);
    } else {
        p->var = calloc(n, sizeof *p->var);
    }
    return p->present && (p->vals || p->var) ? TESS_OK : TESS_ERR_NOMEM;
}

long tess__dense_index(const tess__partition *p, const void *key)
{
    uint64_t k;
    memcpy(&k, key, sizeof k);
    if (k < p->first || k - p->first >= p->count) return -1;
    return (long)(k - p->first);
}

void *tess__partition_dense_data(tess__partition *p, uint64_t *count_out)
{
    if (!p->dense || p->value_size == 0) return NULL;
    *count_out = p->count;
    return p->vals;
}

/* Mark the batch's keys present, counting the ones that were absent. */
static void mark_present(tess__partition *p, const uint64_t *keys, size_t n)
{
    uint64_t added = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i] - p->first;
        uint8_t bit = (uint8_t)(1u << (k & 7));
        added += !(p->present[k >> 3] & bit);
        p->present[k >> 3] |= bit;
    }
    p->size += added;
}

int tess__dense_update_batch(tess__partition *p, const uint64_t *keys, const void *updates,
                             size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] < p->first || keys[i] - p->first >= p->count) return TESS_ERR_INVAL;
    tess__accum_apply_dense(&p->acc, p->vals, p->first, keys, updates, n, NULL);
    mark_present(p, keys, n);
    return TESS_OK;
}
