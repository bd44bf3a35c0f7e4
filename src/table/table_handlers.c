/*
 * table_handlers.c — where table messages enter the table layer.  The
 * runtime registers the handlers here once (tess__table_handlers_init): the
 * table messages (updates, puts, requests) go to tess__table_deliver, which
 * lets a partition on the move (migrate.c) hold or pass on a message before
 * table_remote.c applies it; the migration protocol's own messages go to
 * migrate.c, the replicas' to table_replica.c, the creation and dropping of
 * tables at run time to table_runtime.c.
 */
#include "table_internal.h"

void tess__table_deliver(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len)
{
    if (!tess__migrate_intercept(ctx, src, type, p, len))
        tess__table_on_message(ctx, src, type, p, len);
}

/* Table messages enter the table layer here, where a moving partition may
 * hold them or pass them on (tess__table_deliver). */
int tess__table_handlers_init(tess_ctx *ctx)
{
    static const uint32_t table_types[] = {
        TESS_MSG_UPDATES,      TESS_MSG_PUT,       TESS_MSG_REMOVE,   TESS_MSG_GET_REQ,
        TESS_MSG_SNAPSHOT_REQ, TESS_MSG_CLEAR_REQ, TESS_MSG_SIZE_REQ, TESS_MSG_SYNC_REQ};
    static const uint32_t migrate_types[] = {TESS_MSG_MIG_BEGIN, TESS_MSG_MIG_ANNOUNCE,
                                             TESS_MSG_MIG_MARKER, TESS_MSG_MIG_DATA,
                                             TESS_MSG_MIG_FWD};
    int rc = TESS_OK;
    for (size_t i = 0; rc == TESS_OK && i < sizeof table_types / sizeof *table_types; i++)
        rc = tess__comm_handle(ctx, table_types[i], tess__table_deliver);
    for (size_t i = 0; rc == TESS_OK && i < sizeof migrate_types / sizeof *migrate_types; i++)
        rc = tess__comm_handle(ctx, migrate_types[i], tess__migrate_on_message);
    if (rc == TESS_OK) rc = tess__table_runtime_handlers_init(ctx);
    return rc == TESS_OK ? tess__replica_handlers_init(ctx) : rc;
}
