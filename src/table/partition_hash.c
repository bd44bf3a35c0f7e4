/*
 * partition_hash.c — the hash layout: open addressing with linear probing
 * over a power-of-two table, tombstones for removals, growth at 70% of slots
 * used (full or tombstone).  Keys are hashed 8 bytes at a time with a strong
 * 64-bit mixer.
 */
#include <stdlib.h>
#include <string.h>
#include "partition_impl.h"

enum { EMPTY = 0, FULL = 1, TOMB = 2 };

static uint64_t hash_bytes(const uint8_t *k, size_t n)
{
    uint64_t h = n;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, k + i, n - i < 8 ? n - i : 8);
        h = tess_mix64(h ^ w);
    }
    return h;
}

/* On failure the arrays are freed and cap is 0, so lookups find nothing and
 * the next insert retries the allocation. */
static int alloc_slots(tess__partition *p, uint64_t cap)
{
    p->cap = cap;
    p->used = 0;
    p->state = calloc(cap, 1);
    p->keys = malloc(cap * p->key_size);
    if (p->value_size) p->vals = malloc(cap * p->value_size);
    else p->var = calloc(cap, sizeof *p->var);
    if (p->state && p->keys && (p->vals || p->var)) return TESS_OK;
    free(p->state), free(p->keys), free(p->vals), free(p->var);
    p->state = p->keys = p->vals = NULL;
    p->var = NULL;
    p->cap = 0;
    return TESS_ERR_NOMEM;
}

enum { INITIAL_SLOTS = 16 };

int tess__hash_init(tess__partition *p) { return alloc_slots(p, INITIAL_SLOTS); }

long tess__hash_find(const tess__partition *p, const void *key)
{
    if (p->cap == 0) return -1;
    uint64_t mask = p->cap - 1;
    for (uint64_t s = hash_bytes(key, p->key_size) & mask;; s = (s + 1) & mask) {
        if (p->state[s] == EMPTY) return -1;
        if (p->state[s] == FULL && memcmp(p->keys + s * p->key_size, key, p->key_size) == 0)
            return (long)s;
    }
}

/* Rehash every full slot into a table of `cap` slots (drops tombstones). */
static int rehash(tess__partition *p, uint64_t cap)
{
    tess__partition old = *p;
    p->vals = NULL;
    p->var = NULL;
    if (alloc_slots(p, cap) != TESS_OK) {
        *p = old;
        return TESS_ERR_NOMEM;
    }
    uint64_t mask = cap - 1;
    for (uint64_t o = 0; o < old.cap; o++) {
        if (old.state[o] != FULL) continue;
        uint64_t s = hash_bytes(old.keys + o * p->key_size, p->key_size) & mask;
        while (p->state[s] != EMPTY) s = (s + 1) & mask;
        p->state[s] = FULL;
        memcpy(p->keys + s * p->key_size, old.keys + o * p->key_size, p->key_size);
        if (p->value_size)
            memcpy(p->vals + s * p->value_size, old.vals + o * p->value_size, p->value_size);
        else p->var[s] = old.var[o];
        p->used++;
    }
    free(old.state), free(old.keys), free(old.vals), free(old.var);
    return TESS_OK;
}

/* Slot of key, inserted (value = identity, not yet present) if absent. */
long tess__hash_insert(tess__partition *p, const void *key)
{
    long found = tess__hash_find(p, key);
    if (found >= 0) return found;
    if (p->cap == 0 && rehash(p, INITIAL_SLOTS) != TESS_OK) return -1;
    if ((p->used + 1) * 10 > p->cap * 7) {
        uint64_t cap =
            p->size * 10 > p->cap * 3 ? 2 * p->cap : p->cap; /* tombstones only: same size */
        if (rehash(p, cap) != TESS_OK) return -1;
    }
    uint64_t mask = p->cap - 1, s = hash_bytes(key, p->key_size) & mask;
    while (p->state[s] == FULL) s = (s + 1) & mask;
    if (p->state[s] == EMPTY) p->used++;
    p->state[s] = TOMB; /* becomes FULL when its value is stored */
    memcpy(p->keys + s * p->key_size, key, p->key_size);
    if (p->value_size) tess__accum_identity(&p->acc, p->vals + s * p->value_size);
    else p->var[s] = (tess__varslot){0, 0};
    return (long)s;
}
