/*
 * table_route.c — sending writes to the rank that owns a partition now.
 *
 * With work stealing a partition can change owner while kernels write to it
 * (migrate.c).  Every "which rank gets this write" decision that ends in a
 * message is taken and acted on under the placement read lock: a rank sends
 * its marker to a partition's old owner under the write lock, so the marker
 * follows every write this rank sent there, and every later write goes to
 * the new owner.  A write whose owner is this rank but whose partition has
 * not arrived yet is sent to this rank's own message handler, which holds it
 * until the partition is installed (it must not overtake this rank's older
 * writes, which are still on their way through the old owner).
 */
#include <stdlib.h>
#include <string.h>
#include "table_internal.h"

/* Entries of partitions stored here go straight in; the others (owner is
 * this rank, partition still on its way) to the own handler, which holds
 * them.  Placement read lock held, so "owner is this rank" cannot change
 * and an installed partition cannot leave. */
static int deliver_here(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n)
{
    size_t ks = t->key_size, vs = t->value_size, i = 0;
    int rc = TESS_OK;
    while (i < n && rc == TESS_OK) {
        int p = tess_table_partition_of(t, keys + i * ks);
        int here = p >= 0 && tess__part_here(t, p) != NULL;
        size_t j = i + 1;
        while (j < n) {
            int q = tess_table_partition_of(t, keys + j * ks);
            if ((q >= 0 && tess__part_here(t, q) != NULL) != here) break;
            j++;
        }
        rc = here ? tess__table_apply_local(t, keys + i * ks, vals + i * vs, j - i)
                  : tess__remote_send_updates(t, t->ctx->rank, keys + i * ks, vals + i * vs, j - i);
        i = j;
    }
    return rc;
}

static int send_group(tess_table *t, int dst, const uint8_t *keys, const uint8_t *vals, size_t n)
{
    if (n == 0) return TESS_OK;
    if (dst == t->ctx->rank) return deliver_here(t, keys, vals, n);
    return tess__remote_send_updates(t, dst, keys, vals, n);
}

/* Entries grouped by owner (stable, so one key's updates keep their order). */
static int route_mixed(tess_table *t, const int *owner, const uint8_t *keys, const uint8_t *vals,
                       size_t n)
{
    int R = t->ctx->nranks;
    size_t ks = t->key_size, vs = t->value_size;
    size_t *start = calloc((size_t)R + 1, sizeof *start);
    uint8_t *sk = malloc(n * ks), *sv = malloc(n * vs);
    int rc = start && sk && sv ? TESS_OK : TESS_ERR_NOMEM;
    for (size_t i = 0; rc == TESS_OK && i < n; i++) start[owner[i] + 1]++;
    for (int r = 0; rc == TESS_OK && r < R; r++) start[r + 1] += start[r];
    for (size_t i = 0; rc == TESS_OK && i < n; i++) {
        size_t at = start[owner[i]]++;
        memcpy(sk + at * ks, keys + i * ks, ks);
        memcpy(sv + at * vs, vals + i * vs, vs);
    }
    for (int r = 0; rc == TESS_OK && r < R; r++) {
        size_t first = r ? start[r - 1] : 0;
        rc = send_group(t, r, sk + first * ks, sv + first * vs, start[r] - first);
    }
    free(start);
    free(sk);
    free(sv);
    return rc;
}

static int route_locked(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n)
{
    int *owner = malloc(n * sizeof *owner);
    if (owner == NULL) return TESS_ERR_NOMEM;
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        int p = tess_table_partition_of(t, keys + i * t->key_size);
        if (p < 0) {
            free(owner);
            return TESS_ERR_INVAL;
        }
        owner[i] = tess__owner(t, p);
        same &= owner[i] == owner[0];
    }
    int rc = same ? send_group(t, owner[0], keys, vals, n) : route_mixed(t, owner, keys, vals, n);
    free(owner);
    return rc;
}

int tess__route_updates(tess_table *t, const uint8_t *keys, const uint8_t *vals, size_t n)
{
    if (n == 0) return TESS_OK;
    tess__place_rdlock(t->ctx);
    int rc = route_locked(t, keys, vals, n);
    tess__place_unlock(t->ctx);
    return rc;
}

int tess__route_put(tess_table *t, int p, const void *key, const void *val, size_t len)
{
    tess__place_rdlock(t->ctx);
    int dst = tess__owner(t, p), rc = TESS__MOVED;
    if (dst == t->ctx->rank) rc = tess__table_put_local(t, p, key, val, len);
    if (rc == TESS__MOVED && (rc = tess__remote_put(t, dst, key, val, len)) == TESS_OK)
        rc = tess__buffer_note_sent(t, dst);
    tess__place_unlock(t->ctx);
    return rc;
}

int tess__route_remove(tess_table *t, int p, const void *key)
{
    tess__place_rdlock(t->ctx);
    int dst = tess__owner(t, p), rc = TESS__MOVED;
    if (dst == t->ctx->rank) rc = tess__table_remove_local(t, p, key);
    if (rc == TESS__MOVED && (rc = tess__remote_remove(t, dst, key)) == TESS_OK)
        rc = tess__buffer_note_sent(t, dst);
    tess__place_unlock(t->ctx);
    return rc;
}
