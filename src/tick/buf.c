/*
 * buf.c — tess_buf, the growable byte buffer state classes pack tuples into.
 */
#include <stdlib.h>
#include <string.h>
#include "tessera/tick.h"

void *tess_buf_reserve(tess_buf *b, size_t n)
{
    if (n > SIZE_MAX - b->len) return NULL;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) {
            if (cap > SIZE_MAX / 2) return NULL;
            cap *= 2;
        }
        unsigned char *p = realloc(b->data, cap);
        if (p == NULL) return NULL;
        b->data = p;
        b->cap = cap;
    }
    return b->data + b->len;
}

int tess_buf_append(tess_buf *b, const void *p, size_t n)
{
    if (n == 0) return TESS_OK;
    void *dst = tess_buf_reserve(b, n);
    if (dst == NULL) return TESS_ERR_NOMEM;
    memcpy(dst, p, n);
    b->len += n;
    return TESS_OK;
}

void tess_buf_free(tess_buf *b)
{
    if (b == NULL) return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
