/*
 * fuzz_opencl_cache.c — libFuzzer target for the reading part of the
 * OpenCL program-binary cache (src/tile/opencl_cache.c
 * tess__cl_cache_entry_parse, which reads every entry file before the
 * driver sees its binary): "TESSCLB1", u64 key length, the key, u64 binary
 * length, u64 FNV-1a checksum (low bit set) of the binary, the binary.  The
 * first byte gives the key's length and the key follows; the second byte
 * asks for repairs of the entry that follows (magic 1, key 2, binary length
 * 4, checksum 8), else nearly every mutation would stop at the first
 * field.  Any bytes are accepted or refused, never a crash or a read out of
 * bounds, with the verdict of the format's own rules; an accepted entry's
 * binary is the rest of the file, non-empty, and matches its checksum; and
 * an entry written in the format from the key and any binary is accepted
 * with that binary.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tile/opencl_cache.h"

#define MAGIC "TESSCLB1"

static uint64_t fnv1a(const uint8_t *b, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h | 1;
}

/* The format's verdict on an entry for key. */
static int model(const uint8_t *all, size_t n, const char *key)
{
    size_t klen = strlen(key), head = 32 + klen;
    uint64_t kl, bl, h;
    if (n < head || memcmp(all, MAGIC, 8) != 0) return -1;
    memcpy(&kl, all + 8, 8);
    memcpy(&bl, all + 16 + klen, 8);
    memcpy(&h, all + 24 + klen, 8);
    if (kl != klen || memcmp(all + 16, key, klen) != 0 || bl != n - head || bl == 0) return -1;
    return fnv1a(all + head, bl) == h ? 0 : -1;
}

static void check(const uint8_t *all, size_t n, const char *key)
{
    size_t off = 0, len = 0;
    uint64_t sum = 0;
    int rc = tess__cl_cache_entry_parse(all, n, key, &off, &len, &sum);
    if (rc != model(all, n, key)) __builtin_trap();
    if (rc == 0 &&
        (off != 32 + strlen(key) || len == 0 || off + len != n || sum != fnv1a(all + off, len)))
        __builtin_trap();
}

static void repair(uint8_t flags, uint8_t *e, size_t n, const char *key)
{
    uint64_t klen = strlen(key), head = 32 + klen, bl = n - head;
    if (n < head) return;
    if (flags & 1) memcpy(e, MAGIC, 8);
    if (flags & 2) memcpy(e + 8, &klen, 8), memcpy(e + 16, key, klen);
    if (flags & 4) memcpy(e + 16 + klen, &bl, 8);
    uint64_t h = fnv1a(e + head, bl);
    if (flags & 8) memcpy(e + 24 + klen, &h, 8);
}

/* The key and the binary written as an entry: always accepted. */
static void round_trip(const char *key, const uint8_t *bin, size_t bl)
{
    uint64_t klen = strlen(key), len = bl, h = fnv1a(bin, bl);
    size_t n = 32 + klen + bl, off, got;
    uint8_t *e = malloc(n);
    if (e == NULL) return;
    memcpy(e, MAGIC, 8);
    memcpy(e + 8, &klen, 8);
    memcpy(e + 16, key, klen);
    memcpy(e + 16 + klen, &len, 8);
    memcpy(e + 24 + klen, &h, 8);
    memcpy(e + 32 + klen, bin, bl);
    uint64_t sum;
    if (tess__cl_cache_entry_parse(e, n, key, &off, &got, &sum) != 0 || got != bl ||
        memcmp(e + off, bin, bl) != 0 || sum != h)
        __builtin_trap();
    free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    size_t klen = data[0] < size - 2 ? data[0] : size - 2;
    uint8_t flags = data[1];
    char key[256];
    memcpy(key, data + 2, klen);
    key[klen] = '\0';
    data += 2 + klen, size -= 2 + klen;
    uint8_t *e = malloc(size ? size : 1); /* exactly the file's bytes, for ASan */
    if (e == NULL) return 0;
    memcpy(e, data, size);
    check(e, size, key);
    repair(flags, e, size, key);
    check(e, size, key);
    free(e);
    if (size > 0) round_trip(key, data, size);
    return 0;
}
