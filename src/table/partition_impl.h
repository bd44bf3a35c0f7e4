/*
 * partition_impl.h — the storage behind partition.h: a dense layout and a
 * hash layout sharing the variable-length value arena.  Private to
 * partition*.c.
 */
#ifndef TESS_SRC_TABLE_PARTITION_IMPL_H
#define TESS_SRC_TABLE_PARTITION_IMPL_H

#include "partition.h"

/* Variable-length values: bytes appended to one buffer; a slot records
 * (offset, length).  Overwritten bytes become garbage, reclaimed by
 * compaction once they exceed half the buffer. */
typedef struct tess__arena {
    uint8_t *buf;
    size_t len, cap, garbage;
} tess__arena;

typedef struct tess__varslot {
    uint64_t off;
    uint64_t len;
} tess__varslot;

struct tess__partition {
    int dense;
    size_t key_size, value_size;
    tess__accum acc;
    uint64_t size; /* keys present */
    /* dense */
    uint64_t first, count;
    uint8_t *present; /* bitmap, dense only */
    /* hash */
    uint64_t cap, used; /* slots, slots not empty (full or tombstone) */
    uint8_t *state;     /* 0 empty, 1 full, 2 tombstone */
    uint8_t *keys;
    /* values of both: fixed inline, or variable in the arena */
    uint8_t *vals;
    tess__varslot *var;
    tess__arena arena;
};

int tess__arena_store(tess__partition *p, tess__varslot *slot, const void *val, size_t len);
void tess__arena_release(tess__partition *p, tess__varslot *slot);
void tess__arena_free(tess__arena *a);

/* Per-layout implementations, dispatched by partition.c. */
long tess__dense_index(const tess__partition *p, const void *key);
long tess__hash_find(const tess__partition *p, const void *key);
long tess__hash_insert(tess__partition *p, const void *key); /* -1 on out of memory */
int tess__hash_init(tess__partition *p);
int tess__dense_init(tess__partition *p);
int tess__dense_scan(const tess__partition *p, tess__scan_visit *fn, void *arg);
int tess__slot_present(const tess__partition *p, uint64_t slot);
uint64_t tess__slot_count(const tess__partition *p);
int tess__visit_slot(const tess__partition *p, uint64_t s, tess__scan_visit *fn, void *arg,
                     size_t *bytes);
int tess__dense_chunk(const tess__partition *p, uint64_t from, size_t budget, tess__scan_visit *fn,
                      void *arg, uint64_t *next_out, int *more_out);
int tess__hash_chunk(const tess__partition *p, uint64_t from, size_t budget, tess__scan_visit *fn,
                     void *arg, uint64_t *next_out, int *more_out);

#endif
