/*
 * partition_codec.c — a partition as checkpoint bytes, and back.
 *
 * Two layouts, both self-describing so that a checkpoint can be restored
 * into any number of partitions:
 *   dense fixed-size ("D"): u64 first, u64 count, u64 value_size, the
 *     presence bitmap, then the raw value array — two memcpys, because the
 *     copy is taken while the rank's workers wait (the cut);
 *   entries ("E"): u64 value_size (0 = variable), u64 n, then n records of
 *     key, u64 length, stored value.
 * Values are the stored ones, not the accumulator's view, so that a restored
 * (or migrated) partition accumulates on exactly as before.  Work stealing
 * moves partitions between ranks in the same bytes (migrate.c).
 */
#include <stdlib.h>
#include <string.h>
#include "partition_impl.h"
#include "tessera/tessera.h"

enum { CODEC_DENSE = 'D', CODEC_ENTRIES = 'E' };

static int encode_dense(const tess__partition *p, uint8_t **buf_out, size_t *len_out)
{
    size_t bits = (p->count + 7) / 8, vals = p->count * p->value_size;
    size_t len = 1 + 24 + bits + vals;
    uint8_t *buf = malloc(len), *at = buf;
    if (buf == NULL) return TESS_ERR_NOMEM;
    uint64_t head[3] = {p->first, p->count, p->value_size};
    *at++ = CODEC_DENSE;
    memcpy(at, head, sizeof head);
    at += sizeof head;
    if (bits) memcpy(at, p->present, bits);
    if (vals) memcpy(at + bits, p->vals, vals);
    *buf_out = buf;
    *len_out = len;
    return TESS_OK;
}

static size_t entries_bytes(const tess__partition *p)
{
    tess__cursor c = {0, 0};
    const void *k, *v;
    size_t len, total = 1 + 16;
    while (tess__partition_next(p, &c, &k, &v, &len)) total += p->key_size + 8 + len;
    return total;
}

static int encode_entries(const tess__partition *p, uint8_t **buf_out, size_t *len_out)
{
    size_t total = entries_bytes(p);
    uint8_t *buf = malloc(total), *at = buf + 1 + 16;
    if (buf == NULL) return TESS_ERR_NOMEM;
    buf[0] = CODEC_ENTRIES;
    uint64_t head[2] = {p->value_size, p->size};
    memcpy(buf + 1, head, sizeof head);
    tess__cursor c = {0, 0};
    const void *k, *v;
    size_t len;
    while (tess__partition_next(p, &c, &k, &v, &len)) {
        uint64_t l64 = len;
        memcpy(at, k, p->key_size);
        memcpy(at + p->key_size, &l64, 8);
        if (len) memcpy(at + p->key_size + 8, v, len);
        at += p->key_size + 8 + len;
    }
    *buf_out = buf;
    *len_out = total;
    return TESS_OK;
}

int tess__partition_encode(const tess__partition *p, uint8_t **buf_out, size_t *len_out)
{
    if (p->dense && p->value_size) return encode_dense(p, buf_out, len_out);
    return encode_entries(p, buf_out, len_out);
}

static int decode_dense(const uint8_t *buf, size_t len, size_t key_size, tess__entry_fn fn,
                        void *arg)
{
    uint64_t head[3];
    if (len < 24 || key_size != 8) return TESS_ERR_FORMAT;
    memcpy(head, buf, sizeof head);
    uint64_t first = head[0], count = head[1], vs = head[2], bytes;
    if (vs == 0 || vs > len || count > len || __builtin_mul_overflow(count, vs, &bytes) ||
        (count + 7) / 8 + bytes != len - 24)
        return TESS_ERR_FORMAT;
    const uint8_t *bits = buf + 24, *vals = bits + (count + 7) / 8;
    for (uint64_t i = 0; i < count; i++) {
        if (!(bits[i >> 3] & (1u << (i & 7)))) continue;
        uint64_t key = first + i;
        int rc = fn(arg, &key, vals + i * vs, vs);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static int decode_entries(const uint8_t *buf, size_t len, size_t key_size, tess__entry_fn fn,
                          void *arg)
{
    uint64_t head[2];
    if (len < 16) return TESS_ERR_FORMAT;
    memcpy(head, buf, sizeof head);
    size_t off = 16;
    for (uint64_t i = 0; i < head[1]; i++) {
        uint64_t vlen;
        if (len - off < key_size + 8) return TESS_ERR_FORMAT;
        memcpy(&vlen, buf + off + key_size, 8);
        if (vlen > len - off - key_size - 8 || (head[0] && vlen != head[0])) return TESS_ERR_FORMAT;
        int rc = fn(arg, buf + off, buf + off + key_size + 8, (size_t)vlen);
        if (rc != TESS_OK) return rc;
        off += key_size + 8 + (size_t)vlen;
    }
    return off == len ? TESS_OK : TESS_ERR_FORMAT;
}

int tess__partition_decode(const uint8_t *buf, size_t len, size_t key_size, tess__entry_fn fn,
                           void *arg)
{
    if (len < 1) return TESS_ERR_FORMAT;
    if (buf[0] == CODEC_DENSE) return decode_dense(buf + 1, len - 1, key_size, fn, arg);
    if (buf[0] == CODEC_ENTRIES) return decode_entries(buf + 1, len - 1, key_size, fn, arg);
    return TESS_ERR_FORMAT;
}

static int put_entry(void *arg, const void *key, const void *value, size_t len)
{
    return tess__partition_put(arg, key, value, len);
}

int tess__partition_decode_into(tess__partition *p, const uint8_t *buf, size_t len)
{
    int rc = tess__partition_decode(buf, len, p->key_size, put_entry, p);
    return rc == TESS_ERR_INVAL ? TESS_ERR_FORMAT : rc;
}
