/*
 * test_ctx.h — the runtime the unit tests run on: embedded, a given number
 * of worker threads, and no signal handlers of its own (the test runner
 * reports crashes).  Header-only: each test is one source file.
 */
#ifndef TESS_TESTS_TEST_CTX_H
#define TESS_TESTS_TEST_CTX_H

#include "tessera/tessera.h"

static inline void test_config(tess_config *cfg, int workers)
{
    tess_config_init(cfg);
    cfg->workers = workers;
    cfg->mode = TESS_MODE_EMBEDDED;
    cfg->handle_signals = 0;
}

/* A started context (asserted); tess_finalize is the caller's. */
static inline tess_ctx *test_ctx(int workers)
{
    tess_config cfg;
    test_config(&cfg, workers);
    tess_ctx *ctx = NULL;
    assert_int_equal(tess_init(&cfg, &ctx), TESS_OK);
    return ctx;
}

#endif
