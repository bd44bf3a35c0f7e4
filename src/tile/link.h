/*
 * link.h — what every module of a rank's tiles run shares: the job and its
 * area, the run's clock and status, and the messages to the controllers of
 * the other ranks (and to this rank's own, from its processor threads).
 *
 * Messages are dispatched by registration: each module routes the types it
 * owns to its own handler and state (tess__tile_link_route), and the
 * controller's thread runs them one at a time as it receives them
 * (tess__tile_link_receive).  So a module's state is touched by the
 * controller's thread only, with no lock; a processor thread only sends.
 * Private to src/tile.
 */
#ifndef TESS_SRC_TILE_LINK_H
#define TESS_SRC_TILE_LINK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tile/tile_internal.h"

#define TESS__TILE_MSG_TYPES 16 /* above the last of enum tess__tile_msg_type */

/* A message of a routed type from rank src's controller (or a processor of
 * this rank): its payload after the header. */
typedef void tess__tile_handler(void *state, int src, const uint8_t *p, size_t len);

/* Copy a message's fixed part out of the payload (which is not aligned):
 * 1, or 0 when the message is shorter. */
static inline int tess__tile_unpack(const uint8_t *p, size_t len, void *out, size_t size)
{
    if (len < size) return 0;
    memcpy(out, p, size);
    return 1;
}

typedef struct tess__tile_route {
    tess__tile_handler *fn;
    void *state;
} tess__tile_route;

typedef struct tess__tile_link {
    tess_ctx *ctx;
    const tess_tile_job *job;
    tess__tile_args args;
    tess__tile_area area; /* set before any module starts, read by all */
    int me, nranks, my_worker;
    pthread_t thread; /* the controller's: the one that receives */
    double t0;        /* the run's clock starts here (tess_now) */
    int status;       /* TESS_OK until the run failed */
    tess__tile_route routes[TESS__TILE_MSG_TYPES];
} tess__tile_link;

/* The link of the calling thread, this rank's controller. */
void tess__tile_link_init(tess__tile_link *l, tess_ctx *ctx, const tess_tile_job *job,
                          const tess__tile_args *a);
/* Messages of `type` go to fn(state, ...) from now on (one handler a type). */
void tess__tile_link_route(tess__tile_link *l, uint32_t type, tess__tile_handler *fn, void *state);
/* Receive and dispatch one message of this run, waiting up to timeout
 * seconds; 0 when none came.  The controller's thread only. */
int tess__tile_link_receive(tess__tile_link *l, double timeout);
double tess__tile_now(const tess__tile_link *l); /* seconds since the run started */
/* Send a message (a then b, copied) to rank dst's controller.  From any
 * thread; a failure on the controller's thread ends the run. */
int tess__tile_send(tess__tile_link *l, int dst, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen);
/* End the run with `status` and tell every rank why (once): `msg`, or the
 * context's last error when msg is NULL. */
void tess__tile_abort_all(tess__tile_link *l, int status, const char *msg);

#endif
