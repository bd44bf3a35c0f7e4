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
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/statvfs.h>
#include "mpi_engine.h"

/* One window per context: tess_main serves every request at once. */
typedef struct share_state {
    MPI_Comm node; /* the ranks of this node */
    int node_size;
    int *world_of; /* world rank of each node rank */
    MPI_Win win;   /* MPI_WIN_NULL until opened */
} share_state;

typedef struct share_call {
    tess_ctx *ctx;
    int n;
    const size_t *sizes; /* this rank's, per request */
    uint8_t **ptrs;      /* [request * nranks + rank] */
} share_call;

/* The ranks of this node; TESS_NODE_RANKS=K makes each K consecutive ranks
 * a "node" instead, so that one machine tests the paths between nodes. */
static void split_nodes(MPI_Comm *node)
{
    const char *env = getenv("TESS_NODE_RANKS");
    int k = 0, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long n = 0;
    if (env != NULL && *env != '\0') { /* a count >= 1, or ignored and said so */
        if (tess__parse_count(env, 1, INT_MAX, &n)) k = (int)n;
        else if (rank == 0)
            fprintf(stderr,
                    "tessera: TESS_NODE_RANKS: expected a rank count >= 1, got '%s' (ignored: "
                    "the ranks of each machine share)\n",
                    env);
    }
    if (k > 0) MPI_Comm_split(MPI_COMM_WORLD, rank / k, rank, node);
    else MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node);
}

/* The node's communicator, made by every rank at its first share. */
static share_state *state_of(tess__comm *c)
{
    void **slot = tess__comm_share_state(c);
    if (*slot != NULL) return *slot;
    share_state *s = calloc(1, sizeof *s);
    if (s == NULL) abort(); /* a collective cannot be left half done */
    split_nodes(&s->node);
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
    s->win = MPI_WIN_NULL;
    *slot = s;
    return s;
}

/* A window of `bytes` here; 1 when this rank has one that loads and stores
 * can use (unified memory model), else 0 and no window. */
static int open_window(share_state *s, size_t bytes, MPI_Win *win)
{
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

/* Do the ranks agree to share: the same number of requests everywhere, and
 * nobody set TESS_NODE_SHARE=0? */
static int ranks_agree(int n)
{
    const char *env = getenv("TESS_NODE_SHARE");
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (env != NULL && strcmp(env, "0") != 0 && strcmp(env, "1") != 0 && rank == 0)
        fprintf(stderr, "tessera: TESS_NODE_SHARE: expected 0 or 1, got '%s' (ignored)\n", env);
    int mine[3] = {n, -n, !(env != NULL && strcmp(env, "0") == 0)}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all[0] == -all[1] && all[0] > 0 && all[2];
}

/* ptrs[i * nranks + r]: request i's part of rank r's segment, from every
 * rank's sizes (sizes_of[r * n + i]) laid end to end, each aligned. */
static void place_requests(const share_call *a, int nranks, void *const *bases,
                           const uint64_t *sizes_of)
{
    for (int r = 0; r < nranks; r++) {
        size_t off = 0;
        for (int i = 0; i < a->n; i++) {
            size_t bytes = (size_t)sizes_of[(size_t)r * (size_t)a->n + (size_t)i];
            uint8_t **p = &a->ptrs[(size_t)i * (size_t)nranks + (size_t)r];
            *p = bases[r] != NULL && bytes > 0 ? (uint8_t *)bases[r] + off : NULL;
            off += tess__cache_lines(bytes);
        }
    }
}

/* Bytes the ranks of this node ask for together. */
static size_t node_bytes(const share_state *s, const uint64_t *sizes_of, int n)
{
    size_t total = 0;
    for (int i = 0; i < s->node_size; i++)
        for (int k = 0; k < n; k++)
            total += tess__cache_lines(sizes_of[(size_t)s->world_of[i] * n + k]);
    return total;
}

/*
 * OpenMPI backs shared windows with a file in /dev/shm; a container's is
 * often 64 MB, and a store past its end is a SIGBUS, not an error.  So the
 * node's windows must fit in half of what is free there, else everyone keeps
 * to messages (said once per node).
 */
static int shm_has_room(tess_ctx *ctx, const share_state *s, size_t need)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0) return 1; /* no /dev/shm: MPI puts them elsewhere */
    size_t room = (size_t)v.f_bavail * (size_t)v.f_frsize / 2;
    if (need <= room) return 1;
    int me = 0;
    MPI_Comm_rank(s->node, &me);
    if (me == 0)
        tess__warn(ctx,
                   "/dev/shm has %zu MB free; node-shared memory needs %zu MB: replicas and "
                   "tile outputs travel as messages (slower; docs/tables.md)",
                   2 * room >> 20, need >> 20);
    return 0;
}

/* This rank's window, with every rank's base; 0 when some rank has none. */
static int open_everywhere(tess__comm *c, tess_ctx *ctx, size_t bytes, size_t node_need,
                           void **bases)
{
    share_state *s = state_of(c);
    int room = shm_has_room(ctx, s, node_need), all_room = 0;
    MPI_Allreduce(&room, &all_room, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_room) return 0; /* before the window: every rank of a node opens it or none */
    MPI_Win win = MPI_WIN_NULL;
    int ok = open_window(s, bytes, &win), all_ok = 0;
    /* all ranks share or none: a rank must never send a notice that the
     * receiver cannot read */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (ok) MPI_Win_free(&win);
        return 0;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    s->win = win;
    find_bases(s, win, bases);
    return 1;
}

/* Some rank left (tess_finalize) instead of starting the job: it ends the
 * job with its own message; give it a moment to say why, then end it from
 * here too, so that the job ends even if that rank cannot. */
static void others_left(tess__comm *c, tess_ctx *ctx)
{
    (void)c;
    usleep(1000 * 1000);
    if (ctx->rank == 0)
        tess__warn(ctx, "a rank stopped before the job started (its message is above): ending "
                        "the job on every rank");
    tess__comm_abort_now(ctx, 1);
}

static int share_on_progress(tess__comm *c, void *arg)
{
    share_call *a = arg;
    if (!tess__comm_meet(c, TESS__PHASE_RUN)) others_left(c, a->ctx);
    if (!ranks_agree(a->n)) return TESS_ERR_UNSUPPORTED;
    int nranks = a->ctx->nranks;
    uint64_t *mine = calloc((size_t)a->n, sizeof *mine);
    uint64_t *sizes_of = calloc((size_t)a->n * (size_t)nranks, sizeof *sizes_of);
    void **bases = calloc((size_t)nranks, sizeof *bases);
    if (mine == NULL || sizes_of == NULL || bases == NULL) abort(); /* mid-collective */
    size_t total = 0, any = 0;
    for (int i = 0; i < a->n; i++) mine[i] = a->sizes[i], total += tess__cache_lines(a->sizes[i]);
    MPI_Allgather(mine, a->n, MPI_UINT64_T, sizes_of, a->n, MPI_UINT64_T, MPI_COMM_WORLD);
    for (size_t k = 0; k < (size_t)a->n * (size_t)nranks; k++) any += sizes_of[k] > 0;
    int rc = TESS_ERR_UNSUPPORTED;
    share_state *s = any > 0 ? state_of(c) : NULL; /* collective: every rank or none */
    size_t need = s && s->node_size > 1 ? node_bytes(s, sizes_of, a->n) : 0;
    if (s && s->node_size == 1) total = 0; /* alone on its node: nobody to share with */
    if (s && open_everywhere(c, a->ctx, total, need, bases)) {
        place_requests(a, nranks, bases, sizes_of);
        rc = TESS_OK;
    }
    free(mine);
    free(sizes_of);
    free(bases);
    return rc;
}

int tess__comm_share_alloc(tess_ctx *ctx, int n, const size_t *sizes, uint8_t **ptrs)
{
    share_call a = {ctx, n, sizes, ptrs};
    return tess__comm_call(ctx, share_on_progress, &a);
}

void tess__comm_share_release(tess__comm *c)
{
    share_state **slot = (share_state **)tess__comm_share_state(c);
    share_state *s = *slot;
    if (s == NULL) return;
    if (s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    MPI_Comm_free(&s->node);
    free(s->world_of);
    free(s);
    *slot = NULL;
}
