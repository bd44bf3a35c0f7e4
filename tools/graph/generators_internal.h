/*
 * generators_internal.h — the interface between the spec parser
 * (generators.c) and the individual generators.  A generator fills raw
 * edges with original ids; generators.c renumbers them.  Each returns 0 or
 * TESS_ERR_NOMEM.
 */
#ifndef TESS_TOOLS_GENERATORS_INTERNAL_H
#define TESS_TOOLS_GENERATORS_INTERNAL_H

#include "graph_internal.h"

/* Stream numbers reserved for generator-wide draws (never an edge/page index). */
#define TG__STREAM_SCRAMBLE UINT64_MAX
#define TG__STREAM_SITES (UINT64_MAX - 1)

int tg__gen_rmat(unsigned scale, uint64_t edgefactor, uint64_t seed, tg__edges *out);
int tg__gen_uniform(uint64_t n, uint64_t m, uint64_t seed, tg__edges *out);
/* Also returns the site bounds in page ids: (*nsites_out)+1 ascending values
 * from 0 to pages, malloc'd, owned by the caller. */
int tg__gen_web(uint64_t pages, uint64_t seed, tg__edges *out, uint64_t **site_first_out,
                uint64_t *nsites_out);

#endif
