/*
 * partition_arena.c — storage of variable-length values of a partition.
 */
#include <stdlib.h>
#include <string.h>
#include "core/internal.h"
#include "partition_impl.h"

void tess__arena_free(tess__arena *a)
{
    free(a->buf);
    memset(a, 0, sizeof *a);
}

/* Copy the live values into a fresh buffer, in slot order. */
static int arena_compact(tess__partition *p, size_t extra)
{
    tess__arena *a = &p->arena;
    size_t live = a->len - a->garbage, cap = 4096;
    while (cap < live + extra) cap *= 2;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) return TESS_ERR_NOMEM;
    size_t off = 0;
    for (uint64_t s = 0; s < tess__slot_count(p); s++) {
        if (!tess__slot_present(p, s)) continue;
        tess__varslot *v = &p->var[s];
        memcpy(buf + off, a->buf + v->off, v->len);
        v->off = off;
        off += v->len;
    }
    free(a->buf);
    a->buf = buf;
    a->len = off;
    a->cap = cap;
    a->garbage = 0;
    return TESS_OK;
}

static int arena_reserve(tess__partition *p, size_t len)
{
    tess__arena *a = &p->arena;
    if (a->len + len <= a->cap) return TESS_OK;
    if (a->garbage > a->len / 2) return arena_compact(p, len);
    return tess__grow_bytes(&a->buf, &a->cap, a->len + len, 4096);
}

/* The slot must not count as present while compacting: its old value is
 * released first, so compaction never copies it. */
int tess__arena_store(tess__partition *p, tess__varslot *slot, const void *val, size_t len)
{
    int rc = arena_reserve(p, len);
    if (rc != TESS_OK) return rc;
    tess__arena *a = &p->arena;
    if (len) memcpy(a->buf + a->len, val, len);
    slot->off = a->len;
    slot->len = len;
    a->len += len;
    return TESS_OK;
}

void tess__arena_release(tess__partition *p, tess__varslot *slot)
{
    p->arena.garbage += slot->len;
    slot->len = 0;
}
