/*
 * partition_codec.c — a partition as bytes and back, for moving it to
 * another rank (migrate.c).  Values are stored values, not viewed ones, so a
 * user accumulator's state survives the move unchanged.  The layout is for
 * one run of one job only (both ends run the same binary): native byte
 * order, no version.
 */
#include <stdlib.h>
#include <string.h>
#include "partition.h"

static size_t encoded_bytes(const tess__partition *p, uint64_t *count_out)
{
    tess__cursor c = {0, 0};
    const void *k, *v;
    size_t len, total = 8, ks = tess__partition_key_size(p);
    uint64_t count = 0;
    while (tess__partition_next(p, &c, &k, &v, &len)) {
        total += ks + 8 + len;
        count++;
    }
    *count_out = count;
    return total;
}

int tess__partition_encode(const tess__partition *p, uint8_t **buf_out, size_t *len_out)
{
    uint64_t count;
    size_t total = encoded_bytes(p, &count), ks = tess__partition_key_size(p), off = 8;
    uint8_t *buf = malloc(total);
    if (buf == NULL) return TESS_ERR_NOMEM;
    memcpy(buf, &count, 8);
    tess__cursor c = {0, 0};
    const void *k, *v;
    size_t len;
    while (tess__partition_next(p, &c, &k, &v, &len)) {
        uint64_t l64 = len;
        memcpy(buf + off, k, ks);
        memcpy(buf + off + ks, &l64, 8);
        if (len) memcpy(buf + off + ks + 8, v, len);
        off += ks + 8 + len;
    }
    *buf_out = buf;
    *len_out = total;
    return TESS_OK;
}

int tess__partition_decode(tess__partition *p, const uint8_t *buf, size_t len)
{
    size_t ks = tess__partition_key_size(p), off = 8;
    uint64_t count;
    if (len < 8) return TESS_ERR_FORMAT;
    memcpy(&count, buf, 8);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t vlen;
        if (len - off < ks + 8) return TESS_ERR_FORMAT;
        memcpy(&vlen, buf + off + ks, 8);
        if (vlen > len - off - ks - 8) return TESS_ERR_FORMAT;
        int rc = tess__partition_put(p, buf + off, buf + off + ks + 8, (size_t)vlen);
        if (rc != TESS_OK) return rc;
        off += ks + 8 + (size_t)vlen;
    }
    return off == len ? TESS_OK : TESS_ERR_FORMAT;
}
