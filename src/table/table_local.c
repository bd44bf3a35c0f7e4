/*
 * table_local.c — operations on the partitions stored on this rank, each
 * under the partition's lock.  Batches are grouped by partition first so a
 * partition is locked once per batch instead of once per key.  A partition
 * may leave the rank (work stealing) between the caller's look and the lock:
 * each operation checks again under the lock, and updates that found their
 * partition gone are routed to its new owner (table_route.c).
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

static int apply_group(tess_table *t, int p, const uint8_t *keys, const uint8_t *vals, size_t n)
{
    pthread_mutex_lock(&t->locks[p]);
    tess__partition *part = t->parts[p];
    int rc = part ? tess__partition_update_batch(part, keys, vals, n) : TESS__MOVED;
    pthread_mutex_unlock(&t->locks[p]);
    return rc == TESS__MOVED ? tess__route_updates(t, keys, vals, n) : rc;
}

/* Stable counting sort of the entries by partition into one scratch buffer. */
static int apply_sorted(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n,
                        const int *part)
{
    size_t ks = t->key_size, vs = t->value_size;
    size_t *start = calloc((size_t)t->nparts + 1, sizeof *start);
    uint8_t *sk = malloc(n * ks), *sv = malloc(n * vs);
    int rc = start && sk && sv ? TESS_OK : TESS_ERR_NOMEM;
    for (size_t i = 0; rc == TESS_OK && i < n; i++) start[part[i] + 1]++;
    for (int p = 0; rc == TESS_OK && p < t->nparts; p++) start[p + 1] += start[p];
    for (size_t i = 0; rc == TESS_OK && i < n; i++) {
        size_t at = start[part[i]]++;
        memcpy(sk + at * ks, keys + i * ks, ks);
        memcpy(sv + at * vs, vals + i * vs, vs);
    }
    for (int p = t->nparts - 1; rc == TESS_OK && p >= 0; p--) {
        size_t first = p ? start[p - 1] : 0, count = start[p] - first;
        if (count) rc = apply_group(t, p, sk + first * ks, sv + first * vs, count);
    }
    free(start);
    free(sk);
    free(sv);
    return rc;
}

int tess__table_apply_local(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n)
{
    if (n == 0) return TESS_OK;
    int *part = malloc(n * sizeof *part);
    if (part == NULL) return TESS_ERR_NOMEM;
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        part[i] = tess_table_partition_of(t, keys + i * t->key_size);
        if (part[i] < 0) {
            free(part);
            return TESS_ERR_INVAL;
        }
        same &= part[i] == part[0];
    }
    int rc = same ? apply_group(t, part[0], keys, vals, n) : apply_sorted(t, keys, vals, n, part);
    free(part);
    atomic_fetch_add(&t->ctx->tabs->updates_local, n);
    return rc;
}

int tess__table_put_local(tess_table *t, int p, const void *key, const void *val, size_t len)
{
    pthread_mutex_lock(&t->locks[p]);
    int rc = t->parts[p] ? tess__partition_put(t->parts[p], key, val, len) : TESS__MOVED;
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}

int tess__table_remove_local(tess_table *t, int p, const void *key)
{
    pthread_mutex_lock(&t->locks[p]);
    int rc = t->parts[p] ? TESS_OK : TESS__MOVED;
    if (rc == TESS_OK) tess__partition_remove(t->parts[p], key);
    pthread_mutex_unlock(&t->locks[p]);
    return rc;
}

/* Fixed-size values are passed through the accumulator's view. */
static void copy_viewed(const tess_table *t, void *out, const void *stored, size_t len)
{
    if (t->value_size && t->acc.kind == TESS_ACC_USER) tess__accum_view(&t->acc, out, stored);
    else memcpy(out, stored, len);
}

int tess__table_get_local(tess_table *t, int p, const void *key, void *out, size_t cap,
                          size_t *len_out)
{
    const void *stored = NULL;
    size_t len = 0;
    pthread_mutex_lock(&t->locks[p]);
    int found = t->parts[p] ? tess__partition_get(t->parts[p], key, &stored, &len) : TESS__MOVED;
    if (found == 1 && out != NULL && len <= cap) copy_viewed(t, out, stored, len);
    pthread_mutex_unlock(&t->locks[p]);
    if (len_out) *len_out = len;
    return found;
}

/* A chunk being written: the 16-byte head (next position, more), then
 * records — key (padded to 8), u64 length, viewed value (padded to 8):
 * aligned for readers. */
typedef struct chunk_out {
    const tess_table *t;
    uint8_t *buf;
    size_t len, cap;
} chunk_out;

static int add_record(const void *key, const void *value, size_t len, void *arg)
{
    chunk_out *c = arg;
    size_t kpad = (c->t->key_size + 7) & ~(size_t)7, need = tess__record_bytes(c->t->key_size, len);
    if (c->len + need > c->cap) { /* past the budget by a probe run's keys */
        size_t cap = 2 * c->cap > c->len + need ? 2 * c->cap : c->len + need;
        uint8_t *grown = realloc(c->buf, cap);
        if (grown == NULL) return TESS_ERR_NOMEM;
        c->buf = grown;
        c->cap = cap;
    }
    uint8_t *at = c->buf + c->len;
    memset(at, 0, need);
    memcpy(at, key, c->t->key_size);
    uint64_t l64 = len;
    memcpy(at + kpad, &l64, 8);
    copy_viewed(c->t, at + kpad + 8, value, len);
    c->len += need;
    return 0;
}

int tess__table_chunk_local(tess_table *t, int p, uint64_t from, size_t budget, uint8_t **buf_out,
                            size_t *len_out)
{
    chunk_out c = {t, malloc(TESS__CHUNK_HEAD + budget), TESS__CHUNK_HEAD,
                   TESS__CHUNK_HEAD + budget};
    if (c.buf == NULL) return TESS_ERR_NOMEM;
    uint64_t head[2] = {0, 0};
    int more = 0;
    pthread_mutex_lock(&t->locks[p]);
    int rc = t->parts[p]
                 ? tess__partition_chunk(t->parts[p], from, budget, add_record, &c, &head[0], &more)
                 : TESS__MOVED;
    pthread_mutex_unlock(&t->locks[p]);
    if (rc != TESS_OK) {
        free(c.buf);
        return rc;
    }
    head[1] = (uint64_t)more;
    memcpy(c.buf, head, sizeof head);
    *buf_out = c.buf;
    *len_out = c.len;
    return TESS_OK;
}
