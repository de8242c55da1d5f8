/*
 * shm_reduce.c -- reduce and allreduce through a communicator's shared
 * segment (shm_seg.h), for members that all live on one node.
 *
 * The vector goes through in windows of RED_W ring slots (whole
 * elements; a window's slots are adjacent, since windows start at a
 * multiple of RED_W in every ring). For window k every member
 *   1. copies its input window into its own ring slot (posted[me]),
 *   2. once every member has posted window k, reduces its slice of it
 *      (the p balanced slices of coll_block) over all p inputs and leaves
 *      the result in its own slot, over its own input copy there
 *      (red[me]),
 *   3. once every member has reduced window k, copies every member's
 *      result slice out (allreduce: everyone; reduce: the root only) and
 *      says it is done with their slots (done[me][s]).
 * With SEG_DEPTH / RED_W windows per ring a member may copy window k + 1
 * in while others still reduce window k, so copying in, reducing and
 * copying out overlap across the members, and the reduction work is split
 * p ways. Windows of two slots, not one: each window costs two waits for
 * all members, and when ranks share cores (a loaded node) a wait costs a
 * scheduler turn, so half the waits was worth more than the deeper
 * pipeline (np=2 1 MiB allreduce: see select.c).
 *
 * Bytes per member for n bytes: n copied in, n read and n/p written
 * reducing (p slices of n/p each), n copied out (the root only for
 * reduce) -- against n log2 p moved and reduced by recursive doubling.
 *
 * Order: every element is x0 op x1 op ... op x(p-1), left to right in
 * comm rank order, computed once by the one member that owns its slice
 * and copied by everyone else. So results are bitwise identical on every
 * member and non-commutative (user) ops get exactly rank order.
 *
 * A member reads its own input from its buffer, not from its slot, since
 * its slice of the slot is where the result accumulates.
 *
 * The windows run as a state machine (coll_shm_red_t) whose step never
 * waits: the blocking call loops over it with prog_wait_step between
 * steps; a persistent allreduce with a segment of its own (exec.c) steps
 * it from progress, so its starts may come in any order beside others.
 */
#include <string.h>
#include "core/copy.h"
#include "coll.h"
#include "p2p/p2p.h"
#include "progress/progress.h"
#include "shm_seg.h"

#define RED_W 2     /* ring slots per window; divides SEG_DEPTH */

/* member s's slots of window k, and its chunk count once k is written */
static uint8_t *win_slot(struct coll_shmseg *g, int s, uint64_t k)
{
    return seg_slot(g, s, g->seq[s] + k * RED_W);
}

static uint64_t win_end(struct coll_shmseg *g, int s, uint64_t k)
{
    return g->seq[s] + (k + 1) * RED_W;
}

/* elements of window k: [*first, *first + *n) */
static void window(const coll_shm_red_t *c, uint64_t k, size_t *first, size_t *n)
{
    *first = (size_t)k * c->wc;
    *n = c->count - *first < c->wc ? c->count - *first : c->wc;
}

/* has every member posted window k? */
static int all_posted(struct coll_shmseg *g, uint64_t k)
{
    for (int s = 0; s < g->p; s++)
        if (seg_load(seg_posted(g, s)) < win_end(g, s, k))
            return 0;
    return 1;
}

/* has every member reduced its slice of window k? */
static int all_reduced(struct coll_shmseg *g, uint64_t k)
{
    for (int s = 0; s < g->p; s++)
        if (seg_load(seg_red(g, s)) < g->rseq + k + 1)
            return 0;
    return 1;
}

static void copy_in(const coll_shm_red_t *c, uint64_t k)
{
    struct coll_shmseg *g = c->g;
    size_t f, n, es = c->o.esize;
    window(c, k, &f, &n);
    core_copy(win_slot(g, c->me, k), c->in + f * es, n * es);
    seg_store(seg_posted(g, c->me), win_end(g, c->me, k));
}

/* member j's input for window k at element f of the window */
static const uint8_t *input(const coll_shm_red_t *c, uint64_t k, int j, size_t wf, size_t f)
{
    size_t es = c->o.esize;
    if (j == c->me)
        return c->in + (wf + f) * es;
    return win_slot(c->g, j, k) + f * es;
}

static void reduce_slice(const coll_shm_red_t *c, uint64_t k)
{
    struct coll_shmseg *g = c->g;
    const coll_redop_t *o = &c->o;
    size_t wf, wn, f, n, es = o->esize;
    window(c, k, &wf, &wn);
    coll_block(wn, g->p, c->me, &f, &n);
    if (n) {
        uint8_t *acc = win_slot(g, c->me, k) + f * es;
        coll_reduce_kernel(acc, input(c, k, 0, wf, f), input(c, k, 1, wf, f), n, o->dt,
                           o->op, es, o->ufn);
        for (int j = 2; j < g->p; j++)
            coll_reduce_kernel(acc, acc, input(c, k, j, wf, f), n, o->dt, o->op, es, o->ufn);
    }
    seg_store(seg_red(g, c->me), g->rseq + k + 1);
}

/* done with window k of every other member's slot */
static void release(const coll_shm_red_t *c, uint64_t k)
{
    for (int s = 0; s < c->g->p; s++)
        if (s != c->me)
            seg_store(seg_done(c->g, c->me, s), win_end(c->g, s, k));
}

static void copy_out(const coll_shm_red_t *c, uint64_t k)
{
    struct coll_shmseg *g = c->g;
    size_t wf, wn, f, n, es = c->o.esize;
    window(c, k, &wf, &wn);
    for (int s = 0; s < g->p; s++) {
        coll_block(wn, g->p, s, &f, &n);
        core_copy(c->out + (wf + f) * es, win_slot(g, s, k) + f * es, n * es);
    }
}

/* Two members, the result wanted by one (reduce): the other streams its
 * vector through its ring and the root folds each chunk into its result
 * as it lands, reading its own input and the chunk and writing the result:
 * the least the root can do, and the copy in runs on the other member's
 * core meanwhile. The windows above would have the root copy its own input
 * in and the whole result out as well (np 2, 512 KiB: see
 * doc/collectives.md). Operands go in rank order, x0 op x1. */
static int reduce_pair(struct coll_shmseg *g, const void *in, void *out, size_t count,
                       const coll_redop_t *o, int me, int root)
{
    int s = 1 - root;           /* the member that streams */
    /* whole chunks: smaller pieces overlap more but pay a hand-over each
       (np 2, 128 KiB in 16 KiB pieces: 19.6 us against 13.6 in chunks) */
    size_t es = o->esize, per = g->chunk / es;
    uint64_t nch = (count + per - 1) / per, base = g->seq[s], w = 0;
    unsigned idle = 0;
    double next_check = 0;
    int rc;

    while (w < nch) {
        size_t f = (size_t)w * per, n = count - f < per ? count - f : per;
        if (me == s ? coll_seg_slot_free(g, me, base + w)
                    : seg_load(seg_posted(g, s)) > base + w) {
            uint8_t *slot = seg_slot(g, s, base + w);
            if (me == s) {
                core_copy(slot, (const uint8_t *)in + f * es, n * es);
                seg_store(seg_posted(g, s), base + w + 1);
            } else {
                const uint8_t *mine = (const uint8_t *)in + f * es;
                coll_reduce_kernel((uint8_t *)out + f * es, root == 0 ? mine : slot,
                                   root == 0 ? slot : mine, n, o->dt, o->op, es, o->ufn);
                seg_store(seg_done(g, me, s), base + w + 1);
            }
            w++;
            idle = 0;
            continue;
        }
        if ((rc = prog_wait_step(p2p_prog(g->comm->p2p), g->comm, &idle, &next_check,
                                 comm_world_rank(g->comm, 1 - me))))
            return rc;
    }
    g->seq[s] = base + nch;
    return VC_SUCCESS;
}

void coll_shm_red_begin(coll_shm_red_t *c, struct coll_shmseg *g, const void *in, void *out,
                        size_t count, const coll_redop_t *o, int me)
{
    *c = (coll_shm_red_t){.g = g, .o = *o, .in = in, .out = out, .count = count,
                          .wc = RED_W * g->chunk / o->esize, .me = me};
    c->nwin = c->wc ? (count + c->wc - 1) / c->wc : 0;
    if (!c->nwin)
        return;
    /* every member aligns every ring alike (streams leave them anywhere);
       the chunks skipped are never written nor waited for */
    for (int s = 0; s < g->p; s++)
        g->seq[s] = (g->seq[s] + RED_W - 1) / RED_W * RED_W;
}

/* w windows copied in, r reduced, x released (copied out if I read) */
int coll_shm_red_step(coll_shm_red_t *c)
{
    struct coll_shmseg *g = c->g;
    int moved = 0, again = 1;
    if (c->x >= c->nwin)
        return COLL_RED_DONE;
    while (again) {
        again = 0;
        while (c->r < c->w && all_posted(g, c->r)) {
            reduce_slice(c, c->r++);
            if (!c->out)
                release(c, c->x++);
            again = 1;
        }
        while (c->out && c->x < c->r && all_reduced(g, c->x)) {
            copy_out(c, c->x);
            release(c, c->x++);
            again = 1;
        }
        /* my slots of window w - SEG_DEPTH / RED_W must be finished with,
           by me (x) and by the others (their done counters) */
        while (c->w < c->nwin && c->w < c->x + SEG_DEPTH / RED_W &&
               coll_seg_slot_free(g, c->me, win_end(g, c->me, c->w) - 1)) {
            copy_in(c, c->w++);
            again = 1;
        }
        moved |= again;
    }
    if (c->x < c->nwin)
        return moved ? COLL_RED_MOVED : COLL_RED_STUCK;
    for (int s = 0; s < g->p; s++)
        g->seq[s] = win_end(g, s, c->nwin - 1);
    g->rseq += c->nwin;
    return COLL_RED_DONE;
}

int coll_shm_red_lagging(const coll_shm_red_t *c)
{
    struct coll_shmseg *g = c->g;
    if (c->x >= c->nwin)
        return -1;
    for (int s = 0; s < g->p; s++)
        if (s != c->me && (c->r < c->w ? seg_load(seg_posted(g, s)) < win_end(g, s, c->r)
                                       : seg_load(seg_red(g, s)) < g->rseq + c->x + 1))
            return s;
    return -1;
}

int coll_shm_reduce(struct coll_shmseg *g, const void *in, void *out, size_t count,
                    const coll_redop_t *o, int me, int root)
{
    if (g->p == 2 && root >= 0 && count && g->chunk >= o->esize)
        return reduce_pair(g, in, out, count, o, me, root);
    coll_shm_red_t c;
    unsigned idle = 0;
    double next_check = 0;
    int rc, st;

    coll_shm_red_begin(&c, g, in, out, count, o, me);
    while ((st = coll_shm_red_step(&c)) != COLL_RED_DONE) {
        if (st == COLL_RED_MOVED) {
            idle = 0;
            continue;
        }
        if ((rc = prog_wait_step(p2p_prog(g->comm->p2p), g->comm, &idle, &next_check, -1)))
            return rc;
    }
    return VC_SUCCESS;
}
