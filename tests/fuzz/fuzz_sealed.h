/*
 * fuzz_sealed.h — the entry point of the fuzz targets whose format ends with
 * an XXH64 of everything before it (graph caches, checkpoint manifests).
 * The checksum would stop nearly every mutation at the door, so an input of
 * 16 bytes or more is parsed as it is and then re-sealed with a valid
 * trailer: the structural checks behind the checksum get fuzzed too.  The
 * target defines parse() before including this header.
 */
#ifndef TESS_FUZZ_SEALED_H
#define TESS_FUZZ_SEALED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

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

#endif
