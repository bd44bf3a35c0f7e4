/*
 * fuzz_tile_spec.c — libFuzzer target for the tiles face's --processors and
 * --policy parsers: any text must give a spec or an error, never a crash.
 * An accepted processor list has 1..64 processors with speed fractions in
 * (0, 1]; an accepted fixed-size policy a positive tile size (apc and capc
 * size their own), whose box (if any) has
 * one extent per dimension and multiplies to that size.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tile/tile_internal.h"

static void check_processors(const char *text)
{
    tess__tile_proc_spec specs[TILE_MAX_PROCS];
    int n = -1;
    if (tess__tile_parse_processors(NULL, text, specs, &n) != TESS_OK) return;
    if (n < 1 || n > TILE_MAX_PROCS) __builtin_trap();
    for (int i = 0; i < n; i++)
        if (!(specs[i].frac > 0 && specs[i].frac <= 1) || specs[i].kind >= TESS_TILE_KINDS)
            __builtin_trap();
}

static void check_policy(const char *text, int ndims)
{
    tess__tile_policy_spec p;
    if (tess__tile_parse_policy(NULL, text, ndims, &p) != TESS_OK) return;
    int adaptive = p.kind == TILE_APC || p.kind == TILE_CAPC; /* they size tiles themselves */
    if (!adaptive && p.cells == 0) __builtin_trap();
    if (p.nbox > 0) {
        uint64_t cells = 1;
        for (int d = 0; d < p.nbox; d++) cells *= (uint64_t)p.box[d];
        if (p.nbox != ndims || cells != p.cells) __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256) return 0;
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    check_processors(text);
    for (int nd = 1; nd <= 4; nd++) check_policy(text, nd);
    free(text);
    return 0;
}
