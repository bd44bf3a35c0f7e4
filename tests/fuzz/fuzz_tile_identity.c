/*
 * fuzz_tile_identity.c — libFuzzer target for the other file a tiles
 * checkpoint's `--restore` reads: DIR/tiles.identity, compared with the
 * run's own identity (apps/common/tile_journal.c app_tile_identity_compare,
 * as tile_ckpt.c reads it: at most 8191 bytes, up to the first NUL).  The
 * first byte picks this run's identity among a few; the rest is the file.
 * The file is accepted exactly when it is the same text, and compared with
 * itself always; otherwise the refusal is one non-empty line without
 * control characters, whichever order the texts are given in.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tile_journal.h"

static const char *const ours[] = {
    "tessera tiles checkpoint 1\napp texture\n--block 16\n--gen 512:512:5\narea 512x512 out 52\n",
    "tessera tiles checkpoint 1\napp sar\n--gen 64:400:96:64:3\narea 400x96 out 8\n",
    ("tessera tiles checkpoint 1\napp blackscholes\n--input size 2400 hash 00f1e2d3c4b5a697\n"
     "--seed 3\narea 200 out 4\n"),
    "",
};

static void refused_well(const char *why)
{
    if (why[0] == '\0') __builtin_trap();
    for (const char *s = why; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 8192) return 0;
    const char *own = ours[data[0] % (sizeof ours / sizeof *ours)];
    char *theirs = calloc(1, size); /* the file's text, as read: up to a NUL */
    if (theirs == NULL) return 0;
    memcpy(theirs, data + 1, size - 1);
    char why[512] = "", back[512] = "";
    int same = strcmp(theirs, own) == 0;
    int rc = app_tile_identity_compare(theirs, own, why, sizeof why);
    int rc_back = app_tile_identity_compare(own, theirs, back, sizeof back);
    if (rc != (same ? 0 : -1) || rc_back != rc) __builtin_trap();
    if (!same) refused_well(why), refused_well(back);
    if (app_tile_identity_compare(theirs, theirs, why, sizeof why) != 0) __builtin_trap();
    free(theirs);
    return 0;
}
