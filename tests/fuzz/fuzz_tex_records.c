/*
 * fuzz_tex_records.c — libFuzzer target for the header of texture's
 * records file (`tessera run texture --stage 2 --input FILE`,
 * apps/texture/texture_io.c tex_records_parse): the first 24 bytes are the
 * header and the input's length is the file's size.  Any bytes are accepted
 * or refused with a one-line error, never a crash; an accepted header
 * describes a block and image in range and a file of exactly its records,
 * and writing that header back gives the same bytes.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "texture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[TEX_REC_HEADER] = {0};
    memcpy(h, data, size < sizeof h ? size : sizeof h);
    tex_params p;
    memset(&p, 0, sizeof p);
    char err[256];
    if (tex_records_parse(h, (uint64_t)size, "fuzz", &p, err, sizeof err) != 0) {
        if (err[0] == '\0' || strchr(err, '\n') != NULL) __builtin_trap();
        return 0;
    }
    if (p.block < 2 || p.width < (uint32_t)p.block || p.height < (uint32_t)p.block)
        __builtin_trap();
    uint64_t want = TEX_REC_HEADER +
                    (uint64_t)p.grid_w * (uint64_t)p.grid_h * (uint64_t)tex_record_bytes(p.block);
    if (size < TEX_REC_HEADER || want != size) __builtin_trap();
    uint8_t again[TEX_REC_HEADER];
    tex_records_header(&p, again);
    if (memcmp(again, h, sizeof h) != 0) __builtin_trap();
    return 0;
}
