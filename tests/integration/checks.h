/*
 * checks.h — what the end-to-end test programs (guarantees.c, replica.c,
 * migrate.c) share: one line per check ("ok  : WHAT" or "FAIL: WHAT"), the
 * closing "N passed, N failed" line, and the life of the runtime around the
 * checks, their `NAME VALUE` arguments, and the specs of their tables.
 * Header-only: each program is one source file.
 */
#ifndef TESS_TESTS_CHECKS_H
#define TESS_TESTS_CHECKS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"

static int passed, failed;

static inline void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (ok) passed++;
    else failed++;
}

/* The closing line; 1 when a check failed, else 0. */
static inline int checks_report(void)
{
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout);
    return failed ? 1 : 0;
}

/* The value of `NAME VALUE` among the program's arguments (pairs from
 * argv[1]; the last one given wins), or NULL. */
static inline const char *checks_arg(int argc, char **argv, const char *name)
{
    const char *value = NULL;
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], name) == 0) value = argv[i + 1];
    return value;
}

/* A count argument: its value, or dflt when it is not given. */
static inline uint64_t checks_arg_count(int argc, char **argv, const char *name, uint64_t dflt)
{
    const char *value = checks_arg(argc, argv, name);
    return value != NULL ? strtoull(value, NULL, 10) : dflt;
}

/* The defaults (tess_config_init), and `--workers W` (the argument these
 * programs take alike). */
static inline void checks_config(int argc, char **argv, tess_config *cfg)
{
    tess_config_init(cfg);
    const char *workers = checks_arg(argc, argv, "--workers");
    if (workers != NULL) cfg->workers = atoi(workers);
}

/* The spec of a table under uint64_t keys with value_size-byte values (0:
 * variable length): dense over key_count keys, or a hash table when
 * key_count is 0; the default (replace) accumulator. */
static inline tess_table_spec checks_spec(const char *name, size_t value_size, int partitions,
                                          uint64_t key_count)
{
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = name;
    s.key_size = sizeof(uint64_t);
    s.value_size = value_size;
    s.partitions = partitions;
    s.dense = key_count > 0;
    s.key_count = key_count;
    return s;
}

/* The same with 8-byte values of type elem under a built-in accumulator. */
static inline tess_table_spec checks_acc_spec(const char *name, int partitions, uint64_t key_count,
                                              tess_accum accum, tess_elem elem)
{
    tess_table_spec s = checks_spec(name, 8, partitions, key_count);
    s.accum = accum;
    s.elem = elem;
    return s;
}

/* A table of int64 sums. */
static inline tess_table_spec checks_sum_spec(const char *name, int partitions, uint64_t key_count)
{
    return checks_acc_spec(name, partitions, key_count, TESS_ACC_SUM, TESS_I64);
}

/* The exit status after checks_run returned rc: 1 when a check or the run
 * failed (the run's status on stderr after "PROG: ", unless -1: the runtime
 * did not start, which it said), else 0. */
static inline int checks_exit(const char *prog, int rc)
{
    if (rc < 0 && rc != -1) fprintf(stderr, "%s: %s\n", prog, tess_strerror(rc));
    return checks_report() || rc != TESS_OK;
}

/* A kernel registered under its function's name: CHECKS_KERNEL(k_sum). */
typedef struct checks_kernel {
    const char *name;
    tess_kernel_fn fn;
} checks_kernel;
#define CHECKS_KERNEL(fn) \
    {                     \
#fn, fn           \
    }

/* Register kernels[0..n) in order while rc is TESS_OK; the status. */
static inline int checks_register(tess_ctx *ctx, int rc, const checks_kernel *kernels, int n)
{
    for (int i = 0; rc == TESS_OK && i < n; i++)
        rc = tess_register_kernel(ctx, kernels[i].name, kernels[i].fn);
    return rc;
}

/* tess_init, setup (a failure reported as "setup failed: ..."), the control
 * function, tess_finalize: TESS_OK, or the first failure's status; -1 when
 * the runtime did not start. */
static inline int checks_run(const tess_config *cfg, int (*setup)(tess_ctx *, void *),
                             tess_control_fn control, void *app)
{
    tess_ctx *ctx = NULL;
    if (tess_init(cfg, &ctx) != TESS_OK) return -1;
    int rc = setup(ctx, app);
    if (rc != TESS_OK) fprintf(stderr, "setup failed: %s\n", tess_last_error(ctx));
    if (rc == TESS_OK) rc = tess_main(ctx, control, app);
    tess_finalize(ctx);
    return rc;
}

#endif
