/*
 * opencl_cache.h — OpenCL program binaries kept across runs, so that a
 * processor's start-up does not rebuild the same program every run (150 ms
 * with PoCL's own cache, 3 s without, against 10 ms from a binary).
 *
 * An entry is keyed by the platform, the device, its driver version, the
 * build options and the source; it lives in $TESS_CL_CACHE (a directory),
 * else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera; TESS_CL_CACHE=0
 * turns the cache off.  An entry is used only when its magic, its whole key
 * and the checksum of its binary match and the driver builds it; anything
 * else is rebuilt from source and written anew.  Entries are written when
 * the device closes (after the kernels ran, a driver such as PoCL then
 * includes the code it compiled for the work-group size), through a
 * temporary file renamed into place, so concurrent runs never see half an
 * entry.  Only with TESS_HAVE_OPENCL but for the entry parser.  Private to
 * src/tile.
 */
#ifndef TESS_SRC_TILE_OPENCL_CACHE_H
#define TESS_SRC_TILE_OPENCL_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* An entry file's bytes: 0 with the binary's offset in `all`, its length
 * (> 0) and its checksum when they are a whole entry for `key` (magic, key
 * length and key, binary length matching the file's, checksum), else -1.
 * The reading part of the cache, with or without OpenCL (fuzz_cl_cache). */
int tess__cl_cache_entry_parse(const unsigned char *all, size_t n, const char *key, size_t *off,
                               size_t *len, uint64_t *sum);

#if TESS_HAVE_OPENCL
#include "tessera/tile_opencl.h"

/* A program built through the cache, to be saved when its device closes. */
typedef struct tess__cl_cached {
    cl_program program; /* retained here */
    char *path;         /* its entry */
    char *key;          /* the entry's key text */
    uint64_t sum;       /* checksum of the binary loaded or last saved (0: none) */
} tess__cl_cached;

/* Build `source` for dev, from the cache when it holds a good entry.
 * *program gets the program (the caller's); *rec, when the cache is on,
 * what tess__cl_cache_save needs (rec->path NULL when it is off).  Returns
 * the OpenCL error of the build from source (CL_SUCCESS when it built). */
cl_int tess__cl_cache_build(tess_tile_opencl *dev, const char *source, const char *options,
                            cl_program *program, tess__cl_cached *rec);
/* Write rec's program binary to its entry if it changed; release rec. */
void tess__cl_cache_save(tess_tile_opencl *dev, tess__cl_cached *rec);
#endif

#endif
