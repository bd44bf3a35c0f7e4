/*
 * partition_dense.c — the dense layout: keys first..first+count-1 map to
 * array slots directly; a bitmap says which keys are present.  Fixed-size
 * values start as the accumulator's identity, so an update never has to
 * test for presence before combining.
 */
#include <stdatomic.h>
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
    size_t changed = tess__accum_apply_dense(&p->acc, p->vals, p->first, keys, updates, n, NULL);
    if (changed && p->acc.changes != NULL)
        atomic_fetch_add_explicit(p->acc.changes, changed, memory_order_relaxed);
    mark_present(p, keys, n);
    return TESS_OK;
}

int tess__partition_put_range(tess__partition *p, uint64_t first, uint64_t n, const void *vals)
{
    if (!p->dense || p->value_size == 0) return TESS_ERR_INVAL;
    if (first < p->first || first - p->first > p->count || n > p->count - (first - p->first))
        return TESS_ERR_INVAL;
    uint64_t lo = first - p->first, hi = lo + n, added = 0;
    memcpy(p->vals + lo * p->value_size, vals, n * p->value_size);
    for (uint64_t k = lo; k < hi; k++) {
        if ((k & 7) == 0 && k + 8 <= hi) { /* a whole byte of the bitmap */
            added += 8 - (uint64_t)__builtin_popcount(p->present[k >> 3]);
            p->present[k >> 3] = 0xff;
            k += 7;
            continue;
        }
        uint8_t bit = (uint8_t)(1u << (k & 7));
        added += !(p->present[k >> 3] & bit);
        p->present[k >> 3] |= bit;
    }
    p->size += added;
    return TESS_OK;
}

void tess__partition_copy_dense(const tess__partition *p, void *out)
{
    tess__partition_read_dense(p, 0, p->count, out);
}

void tess__partition_read_dense(const tess__partition *p, uint64_t lo, uint64_t n, void *out)
{
    size_t vs = p->value_size;
    if (p->size == p->count) { /* every key present: one copy */
        memcpy(out, p->vals + lo * vs, n * vs);
        return;
    }
    uint8_t *o = out;
    for (uint64_t k = lo; k < lo + n; k++, o += vs) {
        if (p->present[k >> 3] & (1u << (k & 7))) memcpy(o, p->vals + k * vs, vs);
        else tess__accum_identity(&p->acc, o);
    }
}

int tess__dense_scan(const tess__partition *p, tess__scan_visit *fn, void *arg)
{
    uint64_t key;
    for (uint64_t s = 0; s < p->count; s++) {
        if (!(p->present[s >> 3] & (1u << (s & 7)))) continue;
        key = p->first + s;
        const void *v = p->value_size  ? (const void *)(p->vals + s * p->value_size)
                        : p->arena.buf ? (const void *)(p->arena.buf + p->var[s].off)
                                       : (const void *)"";
        size_t len = p->value_size ? p->value_size : p->var[s].len;
        int rc = fn(&key, v, len, arg);
        if (rc != 0) return rc;
    }
    return 0;
}

/* Slots from `from` on; the next chunk starts past the slot that filled it. */
int tess__dense_chunk(const tess__partition *p, uint64_t from, size_t budget, tess__scan_visit *fn,
                      void *arg, uint64_t *next_out, int *more_out)
{
    size_t bytes = 0;
    int rc = 0;
    *more_out = 0;
    for (uint64_t s = from; rc == 0 && s < p->count; s++) {
        if (!(p->present[s >> 3] & (1u << (s & 7)))) continue;
        rc = tess__visit_slot(p, s, fn, arg, &bytes);
        if (bytes >= budget && s + 1 < p->count) {
            *next_out = s + 1;
            *more_out = 1;
            break;
        }
    }
    return rc;
}

#define SCAN_CHUNK 256

int tess__dense_scan_chunks(const tess__partition *p, tess__scan_chunk *fn, void *arg)
{
    const void *values[SCAN_CHUNK];
    size_t lens[SCAN_CHUNK];
    size_t vs = p->value_size;
    for (uint64_t lo = 0; lo < p->count; lo += SCAN_CHUNK) {
        size_t n = p->count - lo < SCAN_CHUNK ? (size_t)(p->count - lo) : SCAN_CHUNK;
        for (size_t i = 0; i < n; i++) {
            uint64_t s = lo + i;
            int here = (p->present[s >> 3] >> (s & 7)) & 1;
            const uint8_t *v = vs             ? p->vals + s * vs
                               : p->arena.buf ? p->arena.buf + p->var[s].off
                                              : (const uint8_t *)"";
            values[i] = here ? v : NULL;
            lens[i] = here ? (vs ? vs : p->var[s].len) : 0;
        }
        int rc = fn(p->first + lo, n, values, lens, arg);
        if (rc != 0) return rc;
    }
    return 0;
}
