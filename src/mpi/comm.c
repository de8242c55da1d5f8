/*
 * comm.c -- each MPI intracommunicator gets a vcoll twin inside the call
 * that makes it (MPI_Comm_dup, split, create, the topology constructors,
 * ...): the same members in the same order, made with vc_comm_create_group
 * over the members only, from the parent's twin (make_twin). The twin is
 * cached as an attribute whose delete callback frees it with the MPI
 * communicator.
 *
 * Constructors are blocking and collective over the new communicator, so
 * every member makes the twin there, together. Never later: a twin made on
 * a communicator's first collective would block inside MPI_Ibarrier and
 * the like, which a correct program may call right before a Send its peer
 * needs. A communicator without a twin (made by a call the drop-in does
 * not see, such as MPI_Comm_idup, or an intercommunicator) falls back on
 * every member alike. MPI_COMM_WORLD is vcoll's world itself; MPI_COMM_SELF
 * gets its twin in MPI_Init.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "vcmpi.h"

/* an allreduce of the drop-in's own, blocking on every rank: MPI does not
   match a blocking collective with a non-blocking one, and whether vcoll
   requests are pending differs between ranks (a non-blocking form there
   hung a dup that rank 0 made before waiting on its MPI_Ibcast). vcoll's
   requests move meanwhile (progress.c), as in the constructor itself. */
static int agree(void *val, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    int rc;
    VCMPI_BLOCKING(rc, PMPI_Allreduce(MPI_IN_PLACE, val, 1, dt, op, comm));
    return rc;
}

static void unlink_twin(vcmpi_comm_t *t)
{
    pthread_mutex_lock(&vcmpi.lock);
    if (t->prev)
        t->prev->next = t->next;
    else if (vcmpi.comms == t)
        vcmpi.comms = t->next;
    if (t->next)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&vcmpi.lock);
}

static int delete_twin(MPI_Comm comm, int keyval, void *val, void *extra)
{
    vcmpi_comm_t *t = val;
    (void)comm, (void)keyval, (void)extra;
    if (t->vc != VC_COMM_NULL && vcmpi.on)
        vc_comm_free(&t->vc);
    unlink_twin(t);
    free(t);
    return MPI_SUCCESS;
}

int vcmpi_comm_setup(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_twin, &vcmpi.keyval,
                                   NULL) != MPI_SUCCESS;
}

/* every twin still alive: MPI frees their communicators (and calls
   delete_twin) only after vcoll has gone */
void vcmpi_comm_free_all(void)
{
    pthread_mutex_lock(&vcmpi.lock);
    for (vcmpi_comm_t *t = vcmpi.comms; t; t = t->next)
        if (t->vc != VC_COMM_NULL) {
            vc_comm_free(&t->vc);
            t->why = "MPI is finalizing";
        }
    pthread_mutex_unlock(&vcmpi.lock);
}

/* members' ranks in `in_comm` (the world, or the parent), in comm order;
   NULL when a member is not in it (a merge with a spawned job: alike on
   every member), or with *oom set when memory ran out here */
static int *ranks_in(MPI_Comm comm, int n, MPI_Comm in_comm, int *oom)
{
    MPI_Group g, w;
    int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    *oom = !in || !out;
    if (*oom || PMPI_Comm_group(comm, &g) != MPI_SUCCESS) {
        free(in);
        free(out);
        return NULL;
    }
    if (PMPI_Comm_group(in_comm, &w) != MPI_SUCCESS) {
        PMPI_Group_free(&g);
        free(in);
        free(out);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        in[i] = i;
    int rc = PMPI_Group_translate_ranks(g, n, in, w, out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&w);
    free(in);
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            rc = MPI_ERR_GROUP;     /* a member outside this job's world or the parent */
    if (rc != MPI_SUCCESS) {
        free(out);
        return NULL;
    }
    return out;
}

/* The tag of a twin's creation on vcoll's world: one no other creation
   this process takes part in uses, now or later (until the tags wrap,
   after 2^29 such creations: make_twin uses the upper half of the tag
   space). The members' largest
   next_tag, held against this process's other threads while a second
   round asks every member whether it is still free, as vcoll agrees on
   context ids (src/coll/comm_split.c): threads making communicators from
   different parents at once agreed on one tag otherwise, and their
   creations' messages crossed (MPICH's threads/comm/comm_create_threads
   hung). Collective over comm; 0 or an MPI error. */
typedef struct vcmpi_tag_hold {
    uint32_t tag;
    struct vcmpi_tag_hold *next;
} tag_hold_t;

static int tag_held(uint32_t tag)
{
    for (const tag_hold_t *h = vcmpi.tag_holds; h; h = h->next)
        if (h->tag == tag)
            return 1;
    return 0;
}

/* a different number in each call, without touching the program's rand() */
static uint32_t salt(void)
{
    static _Atomic uint32_t calls;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20) ^
                 ((uint64_t)++calls << 40) ^ (uint64_t)(uintptr_t)&ts;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return (uint32_t)(x ^ (x >> 33));
}

static int agree_tag(MPI_Comm comm, uint32_t *out)
{
    uint32_t from = 0;
    for (;;) {
        pthread_mutex_lock(&vcmpi.lock);
        uint32_t mine = from > vcmpi.next_tag ? from : vcmpi.next_tag;
        while (tag_held(mine))
            mine++;
        pthread_mutex_unlock(&vcmpi.lock);
        /* the candidate in the high half; the low half, the largest of
           the members' salts, gives this creation a retry stride of its
           own: two creations that each held the candidate first on a
           different process both fail, and stepping both by one would
           meet again */
        uint64_t v = (uint64_t)mine << 32 | salt();
        int rc = agree(&v, MPI_UINT64_T, MPI_MAX, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        uint32_t cand = (uint32_t)(v >> 32);
        pthread_mutex_lock(&vcmpi.lock);
        int ok = cand >= vcmpi.next_tag && !tag_held(cand), all = ok;
        tag_hold_t hold = {cand, vcmpi.tag_holds};
        if (ok)
            vcmpi.tag_holds = &hold;
        pthread_mutex_unlock(&vcmpi.lock);
        rc = agree(&all, MPI_INT, MPI_MIN, comm);
        pthread_mutex_lock(&vcmpi.lock);
        if (ok) {   /* unlink: other threads may have pushed above it */
            tag_hold_t **pp = &vcmpi.tag_holds;
            while (*pp != &hold)
                pp = &(*pp)->next;
            *pp = hold.next;
        }
        if (rc == MPI_SUCCESS && all && vcmpi.next_tag <= cand)
            vcmpi.next_tag = cand + 1;
        pthread_mutex_unlock(&vcmpi.lock);
        if (rc != MPI_SUCCESS)
            return rc;
        if (all) {
            *out = cand;
            return MPI_SUCCESS;
        }
        from = cand + 1 + (uint32_t)v % 61;
    }
}

/* Tags of twins made on vcoll's world (agree_tag) are in the upper half;
   the lower half is for twins made on their parent's twin, so the two
   kinds never meet on the world's traffic. */
#define TAG_HALF ((uint32_t)VC_TAG_UB / 2 + 1)

/* The other members would wait for this one in vc_comm_create_group's
   exchange: stop the job with a reason rather than hang it. */
static void out_of_memory(void)
{
    fprintf(stderr, "vcoll_mpi: cannot list a new communicator's members for its vcoll twin "
                    "(out of memory)\n");
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

/* Collective over comm; have: this rank can keep the twin (else every
   member drops it). A constructor collective over a parent that has a
   twin makes the new twin from the parent's, on the parent's own traffic,
   with a fixed tag, 0: no two such calls can be in flight on one parent
   at once (MPI leaves their order to the user, and a blocking call cannot
   be ordered against another while it runs); disjoint groups of a split
   share the tag, but each member only hears its own group's. Calls on one
   parent one after another reuse it safely: vcoll delivers a sender's
   messages on one tag in order, and a creation leaves none unread.
   MPI_Comm_create_group's own tag (tag >= 0), which MPI requires to differ
   between concurrent calls on one parent, becomes tag + 1. Otherwise (no
   parent twin: an intercommunicator's merge, MPI_COMM_SELF's own twin, a
   parent from MPI_Comm_idup; or a tag past the lower half) the twin is
   made on vcoll's world with an agreed tag. Every member takes the same
   path: a parent's twin exists on all its members or on none. */
static void make_twin(MPI_Comm parent, int tag, MPI_Comm comm, vcmpi_comm_t *t, int have)
{
    int n, ok = 0, all = 0, oom = 0;
    const char *why = NULL;
    PMPI_Comm_size(comm, &n);
    vc_comm_t pv = parent == MPI_COMM_NULL ? VC_COMM_NULL : vcmpi_comm(parent, &why);
    uint32_t vtag = tag < 0 ? 0 : (uint32_t)tag + 1;
    if (pv != VC_COMM_NULL && vtag < TAG_HALF) {
        int *ranks = ranks_in(comm, n, parent, &oom);
        if (!ranks)
            out_of_memory();    /* (members of a parent are in it) */
        ok = vc_comm_create_group(pv, n, ranks, (int)vtag, &t->vc) == VC_SUCCESS;
        free(ranks);
    } else {
        int *ranks = ranks_in(comm, n, MPI_COMM_WORLD, &oom);
        if (oom)
            out_of_memory();
        /* members outside the world (a spawned job's) are so on every
           member: none makes it, all agree below that there is none */
        if (agree_tag(comm, &vtag) == MPI_SUCCESS && ranks)
            ok = vc_comm_create_group(VC_COMM_WORLD, n, ranks,
                                      (int)(TAG_HALF + vtag % TAG_HALF),
                                      &t->vc) == VC_SUCCESS;
        free(ranks);
    }
    all = ok && have;
    if (agree(&all, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all = 0;
    if (!all) {
        if (t->vc != VC_COMM_NULL)
            vc_comm_free(&t->vc);
        t->why = "vcoll could not make this communicator";
    }
}

/* A topology on comm (Cartesian, graph, distributed graph, also through a
 * dup): the twin becomes one with the same neighbours, in MPI's order, so
 * neighbourhood collectives can run on vcoll. Collective over comm; vcoll
 * agrees on the outcome, so either every member's twin has the graph or
 * none has (a rank that cannot build its lists passes arguments that fail
 * the agreement). A grid is made as a grid, not as the graph of its
 * shifts: MPI pairs the blocks of two neighbours that are one rank
 * differently. */
static void add_topology(MPI_Comm comm, vcmpi_comm_t *t)
{
    int status = MPI_UNDEFINED, rc = VC_ERR_ARG, me, n = 0, nin = 0, nout = 0, w = 0;
    int *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    vc_comm_t g = VC_COMM_NULL;
    if (t->vc == VC_COMM_NULL || !vc_comm_create_graph || !vc_comm_create_cart ||
        PMPI_Topo_test(comm, &status) != MPI_SUCCESS || status == MPI_UNDEFINED)
        return;
    if (status == MPI_CART) {
        if (PMPI_Cartdim_get(comm, &n) != MPI_SUCCESS)
            n = -1;
        a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
        b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
        c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
        if (!a || !b || !c || (n > 0 && PMPI_Cart_get(comm, n, a, b, c) != MPI_SUCCESS))
            n = -1;
        rc = vc_comm_create_cart(t->vc, n, a, b, &g);
    } else if (status == MPI_DIST_GRAPH) {
        if (PMPI_Dist_graph_neighbors_count(comm, &nin, &nout, &w) != MPI_SUCCESS)
            nin = -1;
        a = malloc((size_t)(nin > 0 ? nin : 1) * sizeof *a);
        b = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *b);
        c = malloc((size_t)(nin > 0 ? nin : 1) * sizeof *c);     /* weights, unused */
        d = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *d);
        if (!a || !b || !c || !d ||
            (nin >= 0 && PMPI_Dist_graph_neighbors(comm, nin, a, w ? c : MPI_UNWEIGHTED,
                                                    nout, b, w ? d : MPI_UNWEIGHTED) !=
                             MPI_SUCCESS))
            nin = -1;
        rc = vc_comm_create_graph(t->vc, nin, a, nout, b, &g);
    } else if (status == MPI_GRAPH) {
        /* a graph topology's neighbours are both its sources and its
           destinations (an asymmetric one fails vcoll's agreement: MPI
           keeps it) */
        PMPI_Comm_rank(comm, &me);
        if (PMPI_Graph_neighbors_count(comm, me, &n) != MPI_SUCCESS)
            n = -1;
        a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
        if (!a || (n > 0 && PMPI_Graph_neighbors(comm, me, n, a) != MPI_SUCCESS))
            n = -1;
        rc = vc_comm_create_graph(t->vc, n, a, n, a, &g);
    }
    free(a);
    free(b);
    free(c);
    free(d);
    if (rc == VC_SUCCESS) {     /* the graph's twin replaces the plain one */
        vc_comm_free(&t->vc);
        t->vc = g;
    } else {
        vcmpi_log("a topology communicator's neighbours stay with MPI: %s",
                  vc_strerror(rc));
    }
}

/* newcomm was just made by a constructor every member called: its twin
   (parent: the intracommunicator it was made from, or MPI_COMM_NULL; tag:
   MPI_Comm_create_group's, or -1) */
void vcmpi_comm_made(MPI_Comm parent, int tag, MPI_Comm newcomm)
{
    vcmpi_comm_t *t;
    int inter = 0;
    if (!vcmpi.on || newcomm == MPI_COMM_NULL || vcmpi.mpi_thread > vcmpi.vc_thread)
        return;
    /* MPI_Comm_test_inter gives the same answer on every member; a failed
       allocation here makes every member drop the twin (make_twin agrees) */
    t = calloc(1, sizeof *t);
    PMPI_Comm_test_inter(newcomm, &inter);
    if (inter) {
        if (!t)
            return;
        t->why = "intercommunicator";
    } else {
        vcmpi_comm_t dummy = {0};
        make_twin(parent, tag, newcomm, t ? t : &dummy, t != NULL);
        add_topology(newcomm, t ? t : &dummy);
        if (!t) {
            if (dummy.vc != VC_COMM_NULL)
                vc_comm_free(&dummy.vc);
            return;
        }
    }
    pthread_mutex_lock(&vcmpi.lock);
    t->next = vcmpi.comms;
    if (t->next)
        t->next->prev = t;
    vcmpi.comms = t;
    pthread_mutex_unlock(&vcmpi.lock);
    if (PMPI_Comm_set_attr(newcomm, vcmpi.keyval, t) != MPI_SUCCESS) {
        /* no twin recorded here, but the others may have one: a
           communicator must not be half vcoll. This cannot fail for a
           valid keyval; abort rather than hang. */
        fprintf(stderr, "vcoll_mpi: cannot record a communicator's vcoll twin\n");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
}

vc_comm_t vcmpi_comm(MPI_Comm comm, const char **why)
{
    if (!vcmpi.on) {
        *why = "vcoll is not running";
        return VC_COMM_NULL;
    }
    if (vcmpi.mpi_thread > vcmpi.vc_thread) {
        *why = "vcoll did not grant MPI's thread level";
        return VC_COMM_NULL;
    }
    if (comm == MPI_COMM_WORLD)
        return VC_COMM_WORLD;
    if (comm == MPI_COMM_NULL) {
        *why = "MPI_COMM_NULL";
        return VC_COMM_NULL;
    }
    vcmpi_comm_t *t;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, vcmpi.keyval, &t, &flag) != MPI_SUCCESS) {
        *why = "not a communicator";
        return VC_COMM_NULL;
    }
    if (!flag) {
        *why = "communicator made by a call the drop-in does not see";
        return VC_COMM_NULL;
    }
    if (t->vc == VC_COMM_NULL)
        *why = t->why;
    return t->vc;
}

/* the constructors: MPI's, then the twin on the new communicator, made
   from the parent's */
#define MADE(call, parent, tag, out)                                            \
    do {                                                                        \
        int rc_;                                                                \
        VCMPI_BLOCKING(rc_, call);                                              \
        if (rc_ == MPI_SUCCESS)                                                 \
            vcmpi_comm_made(parent, tag, *(out));                               \
        return rc_;                                                             \
    } while (0)

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    MADE(PMPI_Comm_dup(comm, newcomm), comm, -1, newcomm);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    MADE(PMPI_Comm_dup_with_info(comm, info, newcomm), comm, -1, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    MADE(PMPI_Comm_split(comm, color, key, newcomm), comm, -1, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    MADE(PMPI_Comm_split_type(comm, type, key, info, newcomm), comm, -1, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    MADE(PMPI_Comm_create(comm, group, newcomm), comm, -1, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    MADE(PMPI_Comm_create_group(comm, group, tag, newcomm), comm, tag, newcomm);
}

int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *newcomm)
{
    MADE(PMPI_Intercomm_merge(inter, high, newcomm), MPI_COMM_NULL, -1, newcomm);
}

/* MPI_Comm_free that first waits for the communicator's pending
   communication, so it blocks (a rank's pending send waits for a receiver
   that may need vcoll to move first), and vcoll is kept moving meanwhile.
   The twin goes first, here: its delete callback (vc_comm_free) must not
   run inside MPI while the stand-in polls vcoll from another thread.
   (Only communicators made through the drop-in carry the attribute.) */
int MPI_Comm_disconnect(MPI_Comm *comm)
{
    int rc;
    if (vcmpi.on && comm && *comm != MPI_COMM_NULL) {
        void *t;
        int flag = 0;
        if (PMPI_Comm_get_attr(*comm, vcmpi.keyval, &t, &flag) == MPI_SUCCESS && flag)
            PMPI_Comm_delete_attr(*comm, vcmpi.keyval);
    }
    VCMPI_BLOCKING(rc, PMPI_Comm_disconnect(comm));
    return rc;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *newcomm)
{
    MADE(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), comm, -1, newcomm);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm)
{
    MADE(PMPI_Cart_sub(comm, remain, newcomm), comm, -1, newcomm);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    MADE(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), comm, -1, newcomm);
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int dests[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *newcomm)
{
    MADE(PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder,
                                newcomm), comm, -1, newcomm);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indeg, const int sources[],
                                   const int sweights[], int outdeg, const int dests[],
                                   const int dweights[], MPI_Info info, int reorder,
                                   MPI_Comm *newcomm)
{
    MADE(PMPI_Dist_graph_create_adjacent(comm, indeg, sources, sweights, outdeg, dests,
                                         dweights, info, reorder, newcomm), comm, -1, newcomm);
}
