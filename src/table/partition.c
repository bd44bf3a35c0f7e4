/*
 * partition.c — the operations of partition.h, shared by both layouts:
 * find the key's slot (partition_dense.c or partition_hash.c), then read or
 * combine its value (inline, or in the arena for variable-length values).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "partition_impl.h"

int tess__dense_update_batch(tess__partition *p, const uint64_t *keys, const void *updates,
                             size_t n);

static tess__partition *partition_new(int dense, size_t ks, size_t vs, const tess__accum *acc)
{
    tess__partition *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->dense = dense;
    p->key_size = ks;
    p->value_size = vs;
    p->acc = *acc;
    return p;
}

tess__partition *tess__partition_new_dense(uint64_t first, uint64_t count, size_t value_size,
                                           const tess__accum *acc)
{
    tess__partition *p = partition_new(1, sizeof(uint64_t), value_size, acc);
    if (p == NULL) return NULL;
    p->first = first;
    p->count = count;
    if (tess__dense_init(p) == TESS_OK) return p;
    tess__partition_free(p);
    return NULL;
}

tess__partition *tess__partition_new_hash(size_t key_size, size_t value_size,
                                          const tess__accum *acc)
{
    tess__partition *p = partition_new(0, key_size, value_size, acc);
    if (p == NULL) return NULL;
    if (tess__hash_init(p) == TESS_OK) return p;
    tess__partition_free(p);
    return NULL;
}

static void free_storage(tess__partition *p)
{
    free(p->present), free(p->state), free(p->keys), free(p->vals), free(p->var);
    p->present = p->state = p->keys = p->vals = NULL;
    p->var = NULL;
    tess__arena_free(&p->arena);
}

void tess__partition_free(tess__partition *p)
{
    if (p == NULL) return;
    free_storage(p);
    free(p);
}

uint64_t tess__slot_count(const tess__partition *p) { return p->dense ? p->count : p->cap; }

int tess__slot_present(const tess__partition *p, uint64_t s)
{
    if (p->dense) return (p->present[s >> 3] >> (s & 7)) & 1;
    return p->state[s] == 1;
}

static void tess__slot_set_present(tess__partition *p, uint64_t s, int present)
{
    if (tess__slot_present(p, s) == present) return;
    p->size += present ? 1 : (uint64_t)-1;
    if (!p->dense) p->state[s] = present ? 1 : 2;
    else if (present) p->present[s >> 3] |= (uint8_t)(1u << (s & 7));
    else p->present[s >> 3] &= (uint8_t) ~(1u << (s & 7));
}

static long find_slot(const tess__partition *p, const void *key)
{
    long s = p->dense ? tess__dense_index(p, key) : tess__hash_find(p, key);
    return s >= 0 && tess__slot_present(p, (uint64_t)s) ? s : -1;
}

int tess__partition_get(const tess__partition *p, const void *key, const void **value_out,
                        size_t *len_out)
{
    long s = find_slot(p, key);
    if (s < 0) return 0;
    if (p->value_size) {
        *value_out = p->vals + (size_t)s * p->value_size;
        *len_out = p->value_size;
    } else {
        *value_out = p->arena.buf ? p->arena.buf + p->var[s].off : (const void *)"";
        *len_out = p->var[s].len;
    }
    return 1;
}

int tess__partition_contains(const tess__partition *p, const void *key)
{
    return find_slot(p, key) >= 0;
}

/* Slot for writing key: TESS_ERR_INVAL outside a dense range, NOMEM on growth failure. */
static long write_slot(tess__partition *p, const void *key)
{
    if (p->dense) {
        long s = tess__dense_index(p, key);
        return s >= 0 ? s : TESS_ERR_INVAL;
    }
    long s = tess__hash_insert(p, key);
    return s >= 0 ? s : TESS_ERR_NOMEM;
}

int tess__partition_put(tess__partition *p, const void *key, const void *value, size_t len)
{
    if (p->value_size && len != p->value_size) return TESS_ERR_INVAL;
    long s = write_slot(p, key);
    if (s < 0) return (int)s;
    if (p->value_size) {
        memcpy(p->vals + (size_t)s * p->value_size, value, len);
    } else {
        if (tess__slot_present(p, (uint64_t)s)) tess__arena_release(p, &p->var[s]);
        int rc = tess__arena_store(p, &p->var[s], value, len);
        if (rc != TESS_OK) return rc;
    }
    tess__slot_set_present(p, (uint64_t)s, 1);
    return TESS_OK;
}

int tess__partition_update(tess__partition *p, const void *key, const void *update, size_t len)
{
    if (p->value_size == 0) return tess__partition_put(p, key, update, len);
    if (len != p->value_size) return TESS_ERR_INVAL;
    long s = write_slot(p, key);
    if (s < 0) return (int)s;
    uint8_t *v = p->vals + (size_t)s * p->value_size;
    /* Absent values normally hold the identity already, but a dense array is
     * writable through tess_table_dense_data: reset so an absent key always
     * starts from the identity, as the contract says. */
    if (!tess__slot_present(p, (uint64_t)s)) tess__accum_identity(&p->acc, v);
    if (tess__accum_apply(&p->acc, v, update) && p->acc.changes != NULL)
        atomic_fetch_add_explicit(p->acc.changes, 1, memory_order_relaxed);
    tess__slot_set_present(p, (uint64_t)s, 1);
    return TESS_OK;
}

int tess__partition_update_batch(tess__partition *p, const void *keys, const void *updates,
                                 size_t n)
{
    if (p->value_size == 0) return TESS_ERR_INVAL;
    if (p->dense && p->acc.kind != TESS_ACC_USER)
        return tess__dense_update_batch(p, keys, updates, n);
    const uint8_t *k = keys, *u = updates;
    for (size_t i = 0; i < n; i++) {
        int rc =
            tess__partition_update(p, k + i * p->key_size, u + i * p->value_size, p->value_size);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

void tess__partition_remove(tess__partition *p, const void *key)
{
    long s = find_slot(p, key);
    if (s < 0) return;
    if (p->value_size) tess__accum_identity(&p->acc, p->vals + (size_t)s * p->value_size);
    else tess__arena_release(p, &p->var[s]);
    tess__slot_set_present(p, (uint64_t)s, 0);
}

void tess__partition_clear(tess__partition *p)
{
    if (!p->dense) {
        free_storage(p);
        p->size = 0;
        tess__hash_init(p); /* a failure leaves cap 0 and NULL arrays: caught on next insert */
        return;
    }
    for (uint64_t s = 0; s < p->count && p->size > 0; s++) {
        if (!tess__slot_present(p, s)) continue;
        if (p->value_size) tess__accum_identity(&p->acc, p->vals + s * p->value_size);
        else p->var[s] = (tess__varslot){0, 0};
    }
    memset(p->present, 0, (p->count + 7) / 8);
    tess__arena_free(&p->arena);
    p->size = 0;
}

uint64_t tess__partition_size(const tess__partition *p) { return p->size; }
size_t tess__partition_key_size(const tess__partition *p) { return p->key_size; }
size_t tess__partition_value_size(const tess__partition *p) { return p->value_size; }

int tess__partition_next(const tess__partition *p, tess__cursor *c, const void **key_out,
                         const void **value_out, size_t *len_out)
{
    uint64_t n = tess__slot_count(p);
    while (c->pos < n && !tess__slot_present(p, c->pos)) c->pos++;
    if (c->pos >= n) return 0;
    uint64_t s = c->pos++;
    if (p->dense) {
        c->key_buf = p->first + s;
        *key_out = &c->key_buf;
    } else {
        *key_out = p->keys + s * p->key_size;
    }
    if (p->value_size) {
        *value_out = p->vals + s * p->value_size;
        *len_out = p->value_size;
    } else {
        *value_out = p->arena.buf ? p->arena.buf + p->var[s].off : (const void *)"";
        *len_out = p->var[s].len;
    }
    return 1;
}

/* Slot s (present) to fn, its record's bytes (the iterator's layout: key
 * and value each padded to 8, and a length) added to *bytes. */
int tess__visit_slot(const tess__partition *p, uint64_t s, tess__scan_visit *fn, void *arg,
                     size_t *bytes)
{
    uint64_t dense_key = p->first + s;
    const void *key = p->dense ? (const void *)&dense_key : p->keys + s * p->key_size;
    const void *value;
    size_t len;
    if (p->value_size) {
        value = p->vals + s * p->value_size;
        len = p->value_size;
    } else {
        value = p->arena.buf ? p->arena.buf + p->var[s].off : (const void *)"";
        len = p->var[s].len;
    }
    *bytes += tess__record_bytes(p->key_size, len);
    return fn(key, value, len, arg);
}

int tess__partition_chunk(const tess__partition *p, uint64_t from, size_t budget,
                          tess__scan_visit *fn, void *arg, uint64_t *next_out, int *more_out)
{
    if (p->dense) return tess__dense_chunk(p, from, budget, fn, arg, next_out, more_out);
    return tess__hash_chunk(p, from, budget, fn, arg, next_out, more_out);
}

/* Dense partitions in one inlined loop: a pull kernel's graph scan calls
 * fn for every vertex, where the cursor's calls per key cost as much as a
 * short in-list. */
int tess__partition_scan(const tess__partition *p, tess__scan_visit *fn, void *arg)
{
    if (p->dense) return tess__dense_scan(p, fn, arg);
    tess__cursor c = {0, 0};
    const void *k, *v;
    size_t len;
    int rc = 0;
    while (rc == 0 && tess__partition_next(p, &c, &k, &v, &len)) rc = fn(k, v, len, arg);
    return rc;
}

size_t tess__partition_bytes(const tess__partition *p)
{
    uint64_t slots = tess__slot_count(p);
    size_t per = p->value_size ? p->value_size : sizeof(tess__varslot);
    if (!p->dense) per += p->key_size + 1;
    return sizeof *p + slots * per + (p->dense ? slots / 8 : 0) + p->arena.cap;
}
