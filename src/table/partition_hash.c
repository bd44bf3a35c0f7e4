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

/* A key's home slot is the top bits of its hash, so slot order follows hash
 * order and doubling the table splits each slot into two adjacent ones: what
 * lets tess__hash_chunk resume by hash value across a rehash. */
static unsigned home_shift(uint64_t cap) { return 64u - (unsigned)__builtin_ctzll(cap); }
static uint64_t home_slot(uint64_t h, uint64_t cap) { return h >> home_shift(cap); }

int tess__hash_init(tess__partition *p) { return alloc_slots(p, INITIAL_SLOTS); }

long tess__hash_find(const tess__partition *p, const void *key)
{
    if (p->cap == 0) return -1;
    uint64_t mask = p->cap - 1;
    for (uint64_t s = home_slot(hash_bytes(key, p->key_size), p->cap);; s = (s + 1) & mask) {
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
        uint64_t s = home_slot(hash_bytes(old.keys + o * p->key_size, p->key_size), cap);
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
    uint64_t mask = p->cap - 1, s = home_slot(hash_bytes(key, p->key_size), p->cap);
    while (p->state[s] == FULL) s = (s + 1) & mask;
    if (p->state[s] == EMPTY) p->used++;
    p->state[s] = TOMB; /* becomes FULL when its value is stored */
    memcpy(p->keys + s * p->key_size, key, p->key_size);
    if (p->value_size) tess__accum_identity(&p->acc, p->vals + s * p->value_size);
    else p->var[s] = (tess__varslot){0, 0};
    return (long)s;
}

/* Slot s in the chunk: the hash of its key when it is present, its hash is
 * at least `from` and its home is below `cut`, and it is wrapped (home past
 * the slot: a probe that ran off the end) exactly when `wrapped` asks. */
static int in_chunk(const tess__partition *p, uint64_t s, uint64_t from, uint64_t cut, int wrapped)
{
    if (p->state[s] != FULL) return 0;
    uint64_t h = hash_bytes(p->keys + s * p->key_size, p->key_size), home = home_slot(h, p->cap);
    return h >= from && home < cut && (home > s) == wrapped;
}

/*
 * The keys whose hash lies in [from, cut << shift): every key of a home slot
 * below `cut` lies between that slot and the next empty one (linear probing
 * never crosses an empty slot), so once the budget sets `cut` the scan ends
 * at the next empty slot.  Probes that ran off the end sit at the start of
 * the table with homes past every empty slot: visited last, whole.
 */
int tess__hash_chunk(const tess__partition *p, uint64_t from, size_t budget, tess__scan_visit *fn,
                     void *arg, uint64_t *next_out, int *more_out)
{
    *more_out = 0;
    if (p->cap == 0 || p->size == 0) return 0;
    uint64_t cut = p->cap, s = home_slot(from, p->cap);
    size_t bytes = 0;
    int rc = 0;
    for (; rc == 0 && s < p->cap; s++) {
        if (p->state[s] == EMPTY && cut < p->cap) break;
        if (!in_chunk(p, s, from, cut, 0)) continue;
        rc = tess__visit_slot(p, s, fn, arg, &bytes);
        if (bytes >= budget && cut == p->cap) cut = s + 1; /* past its home: it stays in */
    }
    for (uint64_t w = 0; rc == 0 && s == p->cap && w < p->cap && p->state[w] != EMPTY; w++)
        if (in_chunk(p, w, from, cut, 1)) rc = tess__visit_slot(p, w, fn, arg, &bytes);
    if (cut < p->cap) {
        *next_out = cut << home_shift(p->cap);
        *more_out = 1;
    }
    return rc;
}
