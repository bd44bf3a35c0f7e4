/*
 * bytes.h — little-endian encoding of integers and doubles into byte
 * buffers, and a bounds-checked reader.  Every format tessera writes (the
 * checkpoint manifest and task records, tick state packs, the graph cache)
 * is little-endian whatever the host, and every reader of untrusted bytes
 * goes through a cursor that fails instead of reading past the end.
 *
 * Header-only and free of the rest of the library.  Private: tools/graph
 * keeps its own little-endian helpers (graph_internal.h).
 */
#ifndef TESS_SRC_CORE_BYTES_H
#define TESS_SRC_CORE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void tess__put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void tess__put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t tess__get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t tess__get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Doubles travel as the little-endian bytes of their IEEE 754 bits. */
static inline void tess__put_f64(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    tess__put_le64(p, v);
}

static inline double tess__get_f64(const uint8_t *p)
{
    uint64_t v = tess__get_le64(p);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* Writers that advance: each returns the position after what it wrote. */
static inline uint8_t *tess__emit_le32(uint8_t *p, uint32_t v)
{
    tess__put_le32(p, v);
    return p + 4;
}

static inline uint8_t *tess__emit_le64(uint8_t *p, uint64_t v)
{
    tess__put_le64(p, v);
    return p + 8;
}

/* A bounds-checked reader: a take fails (returns 0, consumes nothing) once
 * fewer bytes are left than it needs. */
typedef struct tess__reader {
    const uint8_t *p;
    size_t left;
} tess__reader;

static inline tess__reader tess__reader_of(const void *p, size_t len)
{
    tess__reader r = {(const uint8_t *)p, len};
    return r;
}

static inline int tess__take_le32(tess__reader *r, uint32_t *v)
{
    if (r->left < 4) return 0;
    *v = tess__get_le32(r->p);
    r->p += 4;
    r->left -= 4;
    return 1;
}

static inline int tess__take_le64(tess__reader *r, uint64_t *v)
{
    if (r->left < 8) return 0;
    *v = tess__get_le64(r->p);
    r->p += 8;
    r->left -= 8;
    return 1;
}

/* n bytes in place: *out points into the input. */
static inline int tess__take_bytes(tess__reader *r, size_t n, const uint8_t **out)
{
    if (r->left < n) return 0;
    *out = r->p;
    r->p += n;
    r->left -= n;
    return 1;
}

#endif
