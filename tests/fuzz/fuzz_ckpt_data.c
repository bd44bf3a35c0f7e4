/*
 * fuzz_ckpt_data.c — libFuzzer target for the checkpoint data readers: the
 * encoded partition bytes (restored into a dense and a hash table) and the
 * replay log.  The first input byte picks the reader.  Any bytes must be
 * applied or refused with TESS_ERR_FORMAT, never crash, hang or leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "table/table_internal.h" /* the checkpoint readers under test */

static tess_ctx *ctx;
static tess_table *tables[3];

static void setup(void)
{
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 1;
    cfg.mode = TESS_MODE_EMBEDDED;
    cfg.handle_signals = 0;
    if (tess_init(&cfg, &ctx) != TESS_OK) abort();
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = "dense";
    s.key_size = 8;
    s.value_size = 8;
    s.dense = 1;
    s.key_count = 4096;
    s.partitions = 3;
    s.accum = TESS_ACC_SUM;
    s.elem = TESS_I64;
    if (tess_table_create(ctx, &s, &tables[0]) != TESS_OK) abort();
    tess_table_spec_init(&s);
    s.name = "hash";
    s.key_size = 8;
    s.partitions = 2;
    if (tess_table_create(ctx, &s, &tables[1]) != TESS_OK) abort();
    s.name = "fixed";
    s.value_size = 4;
    if (tess_table_create(ctx, &s, &tables[2]) != TESS_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (ctx == NULL) setup();
    if (size < 1) return 0;
    tess__tables_clear_local(ctx);
    int rc;
    if (data[0] < 3) rc = tess__table_restore_encoded(tables[data[0]], data + 1, size - 1);
    else rc = tess__table_replay_log(ctx, data + 1, size - 1);
    if (rc != TESS_OK && rc != TESS_ERR_FORMAT && rc != TESS_ERR_INVAL && rc != TESS_ERR_NOMEM)
        __builtin_trap();
    return 0;
}
