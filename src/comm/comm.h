/*
 * comm.h — the message layer between ranks, and worker mailboxes.
 *
 * A message is (type, payload) sent from this rank to rank `dst`.  A message
 * to the own rank is dispatched at once in the calling thread; to another
 * rank it is queued for the progress engine (mpi_engine.c), which batches
 * the messages of each destination into one MPI send.  Messages of one link
 * (this rank -> dst) are delivered in the order they were sent: MPI's
 * non-overtaking rule keeps the order of the batches, and each batch keeps
 * the order of its messages.  Private.
 */
#ifndef TESS_SRC_COMM_COMM_H
#define TESS_SRC_COMM_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "core/internal.h"

enum tess__msg_type {
    TESS_MSG_RUN = 1,        /* rank 0 -> all: launch a kernel */
    TESS_MSG_DONE,           /* rank -> 0: all tasks of a run finished */
    TESS_MSG_SHUTDOWN,       /* rank 0 -> all: control returned */
    TESS_MSG_ABORT,          /* any -> all: interrupted */
    TESS_MSG_COUNT_REQ,      /* rank 0 -> all: report write counters */
    TESS_MSG_COUNT_REP,
    TESS_MSG_UPDATES,        /* a batch of combined table updates */
    TESS_MSG_PUT,
    TESS_MSG_REMOVE,
    TESS_MSG_GET_REQ,        /* get or contains */
    TESS_MSG_SNAPSHOT_REQ,   /* copy of a partition (iterators) */
    TESS_MSG_CLEAR_REQ,
    TESS_MSG_SIZE_REQ,
    TESS_MSG_REPLY,          /* reply to a request: slot, req id, status, payload */
    TESS_MSG_WORKER,         /* payload for a worker's inbox */
    TESS_MSG_SYNC_REQ,       /* answered once everything sent before it is applied */
    TESS_MSG_READY,          /* rank -> 0: tables created, registry fingerprint */
    TESS_MSG_CKPT_MARK,      /* checkpoint: rank 0 starts an epoch, or a rank's marker */
    TESS_MSG_CKPT_FILES,     /* rank -> 0: its files of an epoch are written (or failed) */
    TESS_MSG_CKPT_RESTORE,   /* rank 0 -> all: load an epoch */
    TESS_MSG_CKPT_RESTORED,  /* rank -> 0: loaded (status) */
    TESS_MSG_CKPT_HURRY,     /* rank 0 -> all: stop pacing the writers of an epoch */
    /* work stealing (sched/steal.c) and partition migration (table/migrate.c);
     * numbered from 64 to leave room for other kinds above */
    TESS_MSG_STEAL_QUERY = 64, /* rank 0 -> busy rank: its queued work (request) */
    TESS_MSG_STEAL_TAKE,     /* rank 0 -> victim: give a queued task to a thief (request) */
    TESS_MSG_MIG_DONE,       /* thief -> rank 0: stolen task is in the thief's queue */
    TESS_MSG_MIG_BEGIN,      /* old owner -> new owner: a partition group will move */
    TESS_MSG_MIG_ANNOUNCE,   /* new owner -> other ranks: route writes to me from now */
    TESS_MSG_MIG_MARKER,     /* any rank -> old owner: my last write for it was sent */
    TESS_MSG_MIG_DATA,       /* old owner -> new owner: the partitions and the task */
    TESS_MSG_MIG_FWD,        /* a table message passed on to the partition's owner */
    TESS_MSG_STEAL_COVERED,  /* thief -> rank 0: stolen tasks finished, DONE follows */
    TESS_MSG_TYPES
};

/* Header of a request that expects a TESS_MSG_REPLY. */
typedef struct tess__req_hdr {
    uint32_t slot;
    uint32_t pad;
    uint64_t req_id;
} tess__req_hdr;

/* Header of TESS_MSG_REPLY; the reply payload follows. */
typedef struct tess__reply_hdr {
    uint32_t slot;
    int32_t status;
    uint64_t req_id;
} tess__reply_hdr;

/* Start the MPI progress engine: initialise MPI on its own thread, learn
 * rank and size.  TESS_ERR_UNSUPPORTED in builds without MPI. */
int tess__comm_start(tess_ctx *ctx);
/* Every rank's worker count: counts[rank] is set on entry, all filled on return. */
int tess__comm_allgather_workers(tess_ctx *ctx, int *counts);
/* Queue a message for another rank (progress engine). */
int tess__comm_post(tess_ctx *ctx, int dst, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen);

/* Drain, synchronise with the other ranks, finalise MPI, join.  Accepts NULL comm. */
void tess__comm_stop(tess_ctx *ctx);

/* Send a message made of two parts (either may be empty).  Thread-safe. */
int tess__send(tess_ctx *ctx, int dst, uint32_t type, const void *a, size_t alen,
               const void *b, size_t blen);
/* Send to every rank including this one (rank order). */
int tess__send_all(tess_ctx *ctx, uint32_t type, const void *a, size_t alen);

/* Called for every message received (or sent to self): routes by type. */
void tess__dispatch(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

/* Request/reply: send a request (payload follows a tess__req_hdr) to dst and
 * wait for the reply.  On success *reply_out is malloc'd (caller frees). */
int tess__request(tess_ctx *ctx, int dst, uint32_t type, const void *body, size_t blen,
                  void **reply_out, size_t *reply_len_out);
/* Answer a request received from rank src. */
int tess__reply(tess_ctx *ctx, int src, const tess__req_hdr *req, int status,
                const void *payload, size_t len);

/* ---- worker mailboxes (inbox.c): per-link FIFO between workers ---- */
typedef struct tess__inbox tess__inbox;
int tess__inboxes_create(tess_ctx *ctx);
void tess__inboxes_destroy(tess_ctx *ctx);
/* Hand `len` bytes to global worker dst (copied).  Thread-safe. */
int tess__worker_send(tess_ctx *ctx, int src_worker, int dst_worker, const void *data,
                      size_t len);
/* The same for a message in two parts (head then data), copied once. */
int tess__worker_send2(tess_ctx *ctx, int src_worker, int dst_worker, const void *head,
                       size_t hlen, const void *data, size_t len);
/* Next message for local worker w, waiting up to timeout seconds (<0: forever).
 * 1 with *data_out malloc'd (caller frees), 0 on timeout. */
int tess__worker_recv(tess_ctx *ctx, int w, double timeout, int *src_out, void **data_out,
                      size_t *len_out);
/* Deliver a TESS_MSG_WORKER payload that arrived from another rank. */
void tess__inbox_on_message(tess_ctx *ctx, const uint8_t *p, size_t len);

#endif
