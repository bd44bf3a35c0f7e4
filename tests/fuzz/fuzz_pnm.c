/*
 * fuzz_pnm.c — libFuzzer target for the PGM/PPM reader of `tessera run
 * texture` (apps/texture/texture_io.c): any bytes give an image or a
 * one-line error, never a crash; a header-only parse of the first bytes
 * agrees with the full parse about the size.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include "texture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tex_image full, head;
    char err[256];
    int ok = tex_parse_pnm(data, size, size, 0, "fuzz", &full, err, sizeof err) == 0;
    size_t part = size < 40 ? size : 40;
    int head_ok = tex_parse_pnm(data, part, size, 1, "fuzz", &head, err, sizeof err) == 0;
    if (ok && (full.width == 0 || full.height == 0 || full.pixels == NULL)) __builtin_trap();
    if (ok && head_ok && (head.width != full.width || head.height != full.height)) __builtin_trap();
    if (head_ok && head.pixels != NULL) __builtin_trap();
    free(full.pixels);
    return 0;
}
