/*
 * fuzz_ckpt_manifest.c — libFuzzer target for the checkpoint MANIFEST
 * decoder: any bytes must give a manifest or a one-line error, never a crash
 * or a leak.  The trailing XXH64 would stop nearly every mutation at the
 * door, so the input is also parsed re-sealed with a valid checksum.  An
 * accepted manifest must re-encode to exactly the input (the format is
 * canonical) and its lookups must find every entry it lists.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ckpt/manifest.h"

static void check_lookups(const tess__ckpt_manifest *m)
{
    for (uint32_t i = 0; i < m->ntables; i++)
        if (tess__ckpt_manifest_table(m, m->tables[i].table) != &m->tables[i]) __builtin_trap();
    for (uint32_t i = 0; i < m->nfiles; i++) {
        const tess__ckpt_file *f = &m->files[i];
        if (tess__ckpt_manifest_file(m, f->kind, f->a, f->b) != f) __builtin_trap();
    }
}

static void parse(const uint8_t *data, size_t size)
{
    tess__ckpt_manifest m;
    char err[256];
    if (tess__ckpt_manifest_decode("MANIFEST", data, size, &m, err, sizeof err) != 0) {
        if (memchr(err, '\n', strlen(err)) != NULL) __builtin_trap();
        return;
    }
    check_lookups(&m);
    uint8_t *again = NULL;
    size_t len = 0;
    if (tess__ckpt_manifest_encode(&m, &again, &len) == 0 &&
        (len != size || memcmp(again, data, size) != 0))
        __builtin_trap();
    free(again);
    tess__ckpt_manifest_free(&m);
}

#include "fuzz_sealed.h"
