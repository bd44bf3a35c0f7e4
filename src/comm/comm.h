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
#include <string.h>
#include "core/internal.h"

/*
 * Message types.  The message layer knows only its own two; every layer above
 * it owns a block of numbers, names them in its private header and registers
 * a handler for each with tess__comm_handle() while the runtime is set up
 * (src/runtime.c).  Registering a number twice is an error, so two blocks
 * cannot silently overlap.  The numbers of table writes (7-9, 12) are also
 * stored in checkpoint replay logs (docs/checkpoint-format.md): never renumber.
 *
 *   1-3,5,6,17 sched: runs, barriers, shutdown    (sched/sched.h)
 *   4         comm: a signal interrupts every rank (here)
 *   7-13, 16  table: updates, requests            (table/table_internal.h)
 *   14-15     comm: replies, worker mailboxes     (here)
 *   18-22     ckpt: snapshot protocol, restore    (ckpt/ckpt.h)
 *   64-66, 72 sched: work stealing                (sched/sched.h)
 *   67-71     table: partition migration          (table/table_internal.h)
 *   73-76     table: replicas of dense tables     (table/table_internal.h)
 *   77-78     table: tables created, dropped at run time (table/table_internal.h)
 *   80-95     free (the tick and tiles faces talk through worker mailboxes, 15)
 */
enum tess__comm_msg_type {
    TESS_MSG_ABORT = 4,  /* any -> all: a signal arrived, interrupt the job */
    TESS_MSG_REPLY = 14, /* reply to a request: slot, req id, status, payload */
    TESS_MSG_WORKER = 15 /* payload for a worker's inbox */
};

/* Register fn as the handler of message type `type`, on this rank.  Before
 * the runtime starts only (handlers run on other threads afterwards).
 * TESS_ERR_INVAL for a type out of range, TESS_ERR_MISUSE when taken. */
int tess__comm_handle(tess_ctx *ctx, uint32_t type, tess__msg_handler *fn);
/* A handler's fixed-size message head: the first `size` bytes of the payload
 * p (len bytes) copied into out: 0, or -1 with out untouched when the
 * payload is shorter (a malformed message, which the handler drops). */
static inline int tess__msg_head(void *out, size_t size, const uint8_t *p, size_t len)
{
    if (len < size) return -1;
    memcpy(out, p, size);
    return 0;
}
/* The message layer's own handlers (replies, worker mailboxes). */
int tess__comm_handlers_init(tess_ctx *ctx);

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

/* One piece of a message; a message is sent as its parts end to end, so a
 * sender need not join a header and a large payload into one buffer first. */
typedef struct tess__part {
    const void *data;
    size_t len;
} tess__part;

/* The parts' total length, and their bytes end to end into dst. */
size_t tess__parts_len(const tess__part *parts, int nparts);
void tess__parts_gather(void *dst, const tess__part *parts, int nparts);

/* Where a reply's payload may land at once instead of in a malloc'd copy:
 * its first head_len bytes in head and the rest in body, when the rest
 * fits in body_cap (a get of a large value copies it once, not twice). */
typedef struct tess__reply_sink {
    void *head;
    size_t head_len;
    void *body;
    size_t body_cap;
} tess__reply_sink;

/* Start the MPI progress engine: initialise MPI on its own thread, learn
 * rank and size.  TESS_ERR_UNSUPPORTED in builds without MPI. */
int tess__comm_start(tess_ctx *ctx);
/* Every rank's worker count: counts[rank] is set on entry, all filled on return. */
int tess__comm_allgather_workers(tess_ctx *ctx, int *counts);
/* Queue a message for another rank (progress engine); its parts are copied. */
int tess__comm_post(tess_ctx *ctx, int dst, uint32_t type, const tess__part *parts, int nparts);

/* Yield until the progress engine has taken every queued message, or for
 * at most `seconds`: lets it send them before this rank starts computing. */
void tess__comm_wait_sent(tess_ctx *ctx, double seconds);

/*
 * Memory shared by the ranks of one node (MPI-3 shared windows), for data a
 * rank would otherwise send whole to each rank beside it.  A layer asks for
 * it before tess_main(), on every rank and in the same order (as tables and
 * jobs are made), each rank for the bytes it will write (0 too).  At
 * tess_main() every rank serves all requests in one collective; then each
 * request's attach(ctx, ptrs, arg) runs on the main thread with ptrs[r]
 * rank r's part for it when r is on this node and asked for bytes, else
 * NULL — all NULL when nothing is shared (embedded mode, a rank alone,
 * TESS_NODE_SHARE=0 on any rank, or MPI unable to share memory here).
 * The memory lives until tess__comm_stop(); loads and stores to another
 * rank's part need the caller's own fences and messages to say when.
 */
typedef void tess__share_attach_fn(tess_ctx *ctx, uint8_t *const *ptrs, void *arg);

/* n bytes rounded up to whole cache lines: each request's part starts on
 * one, and what a layer puts after another in its part should too. */
static inline size_t tess__cache_lines(size_t n) { return (n + 63) & ~(size_t)63; }

/* The fence between writing node-shared memory and sending the message
 * that announces it, and between receiving that message and reading.
 * ThreadSanitizer builds have no MPI, hence no memory shared between
 * processes (and TSan does not model fences). */
static inline void tess__shared_fence(void)
{
#if !defined(__SANITIZE_THREAD__)
    atomic_thread_fence(memory_order_seq_cst);
#endif
}
int tess__comm_share_request(tess_ctx *ctx, size_t bytes, tess__share_attach_fn *attach, void *arg);
/* tess_main, every rank, before the workers start (collective under MPI). */
int tess__comm_share_serve(tess_ctx *ctx);
/* tess_finalize: the requests' own memory. */
void tess__comm_share_requests_free(tess_ctx *ctx);
/* The engine's part of tess__comm_share_serve (mpi_share.c; engine_none.c
 * has none): n requests of sizes[i] bytes here; ptrs[i * nranks + r] set
 * as attach receives them.  TESS_ERR_UNSUPPORTED when nothing is shared. */
int tess__comm_share_alloc(tess_ctx *ctx, int n, const size_t *sizes, uint8_t **ptrs);

/* Messages posted to rank dst so far, and dispatched from rank src (their
 * handlers returned), over the link; a report sent outside it (node-shared
 * memory) carries the first so the receiver can tell that everything sent
 * before it has been handled.  0 without MPI. */
/* The message layer's fields of st (messages, bytes, batches, progress
 * CPU); zero in embedded mode, where no message leaves the process. */
void tess__comm_stats(const tess_ctx *ctx, tess_stats *st);
uint64_t tess__comm_posted_to(tess_ctx *ctx, int dst);
uint64_t tess__comm_dispatched_from(tess_ctx *ctx, int src);

/* Drain, synchronise with the other ranks, finalise MPI, join.  Accepts NULL comm. */
void tess__comm_stop(tess_ctx *ctx);

/* A failure on this rank that the others cannot learn of by the job's own
 * messages (they would wait for this rank forever): under MPI with several
 * ranks, end the job on every rank now with exit status `code` (the caller
 * printed its one-line reason first); does not return then.  Embedded, or
 * alone, it returns at once and the caller fails the usual way.  Any
 * thread. */
void tess__comm_end_job(tess_ctx *ctx, int code);

/* A failure on this rank (a kernel's error) that the job normally reports
 * itself (the barrier collects it, rank 0 ends the job): if it has not
 * within `seconds` (another rank waits for this one's messages forever),
 * end the job on every rank with `why` (one line).  Cleared when the job
 * went on (a new run or the shutdown reached this rank).  No-op embedded.
 * Any thread. */
void tess__comm_fail_after(tess_ctx *ctx, double seconds, const char *why);
void tess__comm_fail_clear(tess_ctx *ctx);

/* Send a message made of two parts (either may be empty).  Thread-safe. */
int tess__send(tess_ctx *ctx, int dst, uint32_t type, const void *a, size_t alen, const void *b,
               size_t blen);
/* Send a message made of nparts parts.  Thread-safe. */
int tess__sendv(tess_ctx *ctx, int dst, uint32_t type, const tess__part *parts, int nparts);
/* Send to every rank including this one (rank order). */
int tess__send_all(tess_ctx *ctx, uint32_t type, const void *a, size_t alen);

/* Called for every message received (or sent to self): calls the handler
 * registered for its type; a type nobody registered is dropped with a warning. */
void tess__dispatch(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

/* Request/reply: send a request (payload follows a tess__req_hdr) to dst and
 * wait for the reply.  On success *reply_out is malloc'd (caller frees). */
int tess__request(tess_ctx *ctx, int dst, uint32_t type, const void *body, size_t blen,
                  void **reply_out, size_t *reply_len_out);
/* The same, with a payload that fits `sink` copied there: then *reply_out
 * is NULL and *reply_len_out the payload's length.  One that does not fit
 * comes back malloc'd, as from tess__request. */
int tess__request_into(tess_ctx *ctx, int dst, uint32_t type, const void *body, size_t blen,
                       const tess__reply_sink *sink, void **reply_out, size_t *reply_len_out);
/* Answer a request received from rank src. */
int tess__reply(tess_ctx *ctx, int src, const tess__req_hdr *req, int status, const void *payload,
                size_t len);
/* The same with the payload in parts (at most 7). */
int tess__replyv(tess_ctx *ctx, int src, const tess__req_hdr *req, int status,
                 const tess__part *parts, int nparts);

/* ---- worker mailboxes (inbox.c): per-link FIFO between workers ---- */
typedef struct tess__inbox tess__inbox;
int tess__inboxes_create(tess_ctx *ctx);
void tess__inboxes_destroy(tess_ctx *ctx);
/* Hand `len` bytes to global worker dst (copied).  Thread-safe. */
int tess__worker_send(tess_ctx *ctx, int src_worker, int dst_worker, const void *data, size_t len);
/* The same for a message in two parts (head then data), copied once. */
int tess__worker_send2(tess_ctx *ctx, int src_worker, int dst_worker, const void *head, size_t hlen,
                       const void *data, size_t len);
/*
 * Message blocks, for a sender that reuses memory (the tick links): a block
 * holds up to cap bytes of message at its data (8-byte aligned).  A block
 * handed to tess__worker_send_block goes, uncopied, to a worker of this
 * rank (*mem becomes NULL: the receiver owns it), or is copied to another
 * rank and stays the caller's.  A block from tess__worker_recv may be
 * reused so; free() releases one.
 */
void *tess__worker_block_new(size_t cap);
uint8_t *tess__worker_block_data(void *mem);
size_t tess__worker_block_cap(const void *mem);
int tess__worker_send_block(tess_ctx *ctx, int src_worker, int dst_worker, void **mem, size_t len);
/* Next message for local worker w, waiting up to timeout seconds (<0: forever).
 * 1 with its *len_out bytes at *data_out, inside the block *mem_out (the
 * caller frees it; the data are 8-byte aligned), 0 on timeout. */
int tess__worker_recv(tess_ctx *ctx, int w, double timeout, int *src_out, void **mem_out,
                      uint8_t **data_out, size_t *len_out);
/* Deliver a TESS_MSG_WORKER payload that arrived from another rank. */
void tess__inbox_on_message(tess_ctx *ctx, int src, uint32_t type, const uint8_t *p, size_t len);

#endif
