/*
 * mpi_share.c — memory shared by the ranks of one node, from MPI-3 shared
 * windows (MPI_Win_allocate_shared on the communicator of the node's ranks).
 *
 * A rank writes into its own segment and the ranks beside it read it with
 * plain loads; what a segment holds, and when a reader may look, is for the
 * caller to say with messages (table_replica.c sends a small notice per
 * range instead of the range).  Each window is opened for passive access by
 * every rank (MPI_Win_lock_all) for its whole life, so the loads and stores
 * are inside an access epoch; with the unified memory model a fence on each
 * side then orders them, without an MPI call per access (and MPI calls are
 * the progress thread's only).
 */
#include <mpi.h>
#include <stdlib.h>
#include "mpi_engine.h"

#define MAX_WINDOWS 8

typedef struct share_state {
    MPI_Comm node; /* the ranks of this node */
    int node_size;
    int *world_of; /* world rank of each node rank */
    MPI_Win wins[MAX_WINDOWS];
    int nwins;
} share_state;

typedef struct share_call {
    size_t bytes;
    void **bases;
} share_call;

/* The node's communicator, made by every rank at its first share. */
static share_state *state_of(tess__comm *c)
{
    void **slot = tess__comm_share_state(c);
    if (*slot != NULL) return *slot;
    share_state *s = calloc(1, sizeof *s);
    if (s == NULL) abort(); /* a collective cannot be left half done */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &s->node);
    MPI_Comm_set_errhandler(s->node, MPI_ERRORS_RETURN);
    MPI_Comm_size(s->node, &s->node_size);
    s->world_of = malloc((size_t)s->node_size * sizeof *s->world_of);
    int *node_ranks = malloc((size_t)s->node_size * sizeof *node_ranks);
    if (s->world_of == NULL || node_ranks == NULL) abort();
    MPI_Group node_group, world_group;
    MPI_Comm_group(s->node, &node_group);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int i = 0; i < s->node_size; i++) node_ranks[i] = i;
    MPI_Group_translate_ranks(node_group, s->node_size, node_ranks, world_group, s->world_of);
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
    free(node_ranks);
    *slot = s;
    return s;
}

/* A window of `bytes` here; 1 when this rank has one that loads and stores
 * can use (unified memory model), else 0 and no window. */
static int open_window(share_state *s, size_t bytes, MPI_Win *win)
{
    if (s->nwins == MAX_WINDOWS) return 0;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each segment on its own pages */
    void *base = NULL;
    int err = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, s->node, &base, win);
    MPI_Info_free(&info);
    if (err != MPI_SUCCESS) return 0;
    int *model = NULL, flag = 0;
    MPI_Win_get_attr(*win, MPI_WIN_MODEL, &model, &flag);
    if (flag && *model == MPI_WIN_UNIFIED) return 1;
    MPI_Win_free(win);
    return 0;
}

/* Every rank's segment base; bases[] was cleared by the caller. */
static void find_bases(share_state *s, MPI_Win win, void **bases)
{
    for (int i = 0; i < s->node_size; i++) {
        MPI_Aint size = 0;
        int unit = 0;
        void *base = NULL;
        MPI_Win_shared_query(win, i, &size, &unit, &base);
        bases[s->world_of[i]] = size > 0 ? base : NULL;
    }
}

static int share_on_progress(tess__comm *c, void *arg)
{
    share_call *a = arg;
    tess__comm_meet(c);
    unsigned long long mine = a->bytes, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (most == 0) return TESS_ERR_UNSUPPORTED;
    share_state *s = state_of(c);
    MPI_Win win = MPI_WIN_NULL;
    int ok = open_window(s, a->bytes, &win), all_ok = 0;
    /* all ranks share or none: a rank must never send a notice that the
     * receiver cannot read */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (ok) MPI_Win_free(&win);
        return TESS_ERR_UNSUPPORTED;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    s->wins[s->nwins++] = win;
    find_bases(s, win, a->bases);
    return TESS_OK;
}

int tess__comm_node_share(tess_ctx *ctx, size_t bytes, void **bases)
{
    for (int r = 0; r < ctx->nranks; r++) bases[r] = NULL;
    share_call a = {bytes, bases};
    return tess__comm_call(ctx, share_on_progress, &a);
}

void tess__comm_share_release(tess__comm *c)
{
    share_state **slot = (share_state **)tess__comm_share_state(c);
    share_state *s = *slot;
    if (s == NULL) return;
    for (int i = 0; i < s->nwins; i++) {
        MPI_Win_unlock_all(s->wins[i]);
        MPI_Win_free(&s->wins[i]);
    }
    MPI_Comm_free(&s->node);
    free(s->world_of);
    free(s);
    *slot = NULL;
}
