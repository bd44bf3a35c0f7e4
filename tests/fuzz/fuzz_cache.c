/*
 * fuzz_cache.c — libFuzzer target for the binary graph cache reader.  The
 * checksum would stop nearly every mutation at the door, so when the input
 * is long enough the target also re-seals it with a valid XXH64 trailer and
 * parses that copy: the structural checks behind the checksum get fuzzed too.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "graph.h"

static void parse(const uint8_t *data, size_t size)
{
    tg_graph g;
    char err[256];
    if (tg_parse_cache("fuzz.bin", data, size, &g, err, sizeof err) == 0) {
        for (uint64_t e = 0; e < g.ne; e++)
            if (g.src[e] >= g.nv || g.dst[e] >= g.nv) __builtin_trap();
    }
    tg_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse(data, size);
    if (size < 16) return 0;
    uint8_t *copy = malloc(size);
    if (copy == NULL) return 0;
    memcpy(copy, data, size);
    uint64_t sum = XXH64(copy, size - 8, 0);
    for (int i = 0; i < 8; i++) copy[size - 8 + i] = (uint8_t)(sum >> (8 * i));
    parse(copy, size);
    free(copy);
    return 0;
}
