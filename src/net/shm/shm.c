/*
 * shm.c -- intra-node transport: packets through per-pair rings in one
 * shared segment per node, bulk data single-copy with CMA
 * (process_vm_readv) straight from the sender's buffer.
 *
 * Segment life cycle (why: no /dev/shm litter even after kill -9):
 *   open:        the node's first rank creates and sizes the segment
 *   fence(1)
 *   connect:     the others map it
 *   fence(0)
 *   after_fence: the creator unlinks the name; the mappings stay valid
 * A job killed after vc_init therefore leaves nothing behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "vcoll.h"
#include "../net.h"
#include "../../core/clock.h"
#include "../../core/config.h"
#include "../../core/log.h"
#include "../../boot/boot.h"
#include "shm_ring.h"

#define SHM_MAGIC 0x7663534d48ull
#define SHM_KEY "vc.shm"
/* Past this size a message goes by CMA even under a larger
 * VCOLL_EAGER_LIMIT. An eager packet is copied twice, one copy after the
 * other (into the ring, then out of it once the whole packet is
 * there), and its ring lines cross between the cores twice (the receiver
 * reads them, the sender later takes them back to write). Rendezvous costs
 * two small packets and a syscall but copies once, straight from the
 * sender's buffer. On the 2-core EPYC box, np=2 vcoll_osu_latency: 4 KiB
 * eager 0.99 us, 8 KiB eager 2.05 us, 16 KiB rendezvous 1.25 us; so 8 KiB
 * goes by rendezvous too (numbers in the commit that set this). */
#define SHM_CMA_EAGER_MAX 4096

/* Past the eager limit a message is either pulled with one
 * process_vm_readv or streamed through the rings (two copies, packet by
 * packet). A pull's fixed price is the system call, which differs tenfold
 * between machines: 2.45 us for 64 bytes on a sandboxed 2-core EPYC VM
 * (getppid 1 us there), a few tenths of a microsecond on bare metal; a
 * stream's price grows with the bytes. So each rank times both at
 * start-up, the call (the least of SHM_PROBES reads of 64 bytes from
 * itself) and a hot memcpy of 64 KiB, and streams what is smaller than
 * the size where the call costs what the stream's extra copying does,
 * taken as SHM_STREAM_COPIES hot copies per byte; never less than the
 * old 4 KiB edge, at most SHM_PULL_MAX. On that VM, np 2
 * vcoll_osu_latency, pulled 8/16/32/64 KiB 3.56/3.67/4.26/5.15 us,
 * streamed (eager to 8 KiB) 1.13/2.20/3.22/5.28: the stream's slope is
 * 0.047 us/KiB above the pull's, 4.8-5.4 times a hot memcpy's
 * (0.0087-0.0098 us/KiB, run to run), and the two meet near 48 KiB; with
 * 6 copies the formula gives 2.45 us / (6 x 0.57 us / 64 KiB) = 46 KiB,
 * erring towards the pull the library always made before. Only the
 * sender's eager choice and the receiver's pull choice depend on it, and
 * either end takes any packet the other sends, so ranks need not agree. */
#define SHM_PROBES 16
#define SHM_STREAM_COPIES 6.0
#define SHM_PULL_MAX (256u << 10)

/* Fan-in eager (p2p_send_fast's P2P_SEND_EAGER: a gather's blocks on their
 * way to the root) may take one packet of up to SHM_FANIN_EAGER bytes, past
 * the eager limit, where ranks outnumber the cores: a sender then copies its
 * block into the ring and leaves, instead of waiting twice for the busy
 * root to be scheduled (its RTS seen, the FIN back). Through the Open MPI
 * drop-in on the 2-core Xeon VM, np 8, OSU gather 16/32/64 KiB: 3.5/5.2/
 * 8.7 us against 15.6/19.5/22.0 pulled (Open MPI 18.6/22.5/33.0). Not with
 * a core per rank: np 2 took 2.7/5/8-10 us against the pull's 1.7/2.5/4
 * (the second copy is then the cost, the wait is short; doc/collectives.md).
 * A ring holds at least SHM_FANIN_SHARE such packets, or there are none.
 * The ring's size does not change, and the receiver's bound (max_packet)
 * comes from the config alone, the same on every rank; whether a rank
 * sends such packets is its own choice. */
#define SHM_FANIN_EAGER (64u << 10)
#define SHM_FANIN_SHARE 2

size_t net_shm_pull_min(double call_us, double copy64k_us)
{
    if (!(call_us > 0) || !(copy64k_us > 0))
        return SHM_CMA_EAGER_MAX + 1;
    double b = call_us * 65536.0 / (SHM_STREAM_COPIES * copy64k_us);
    if (!(b > SHM_CMA_EAGER_MAX))
        return SHM_CMA_EAGER_MAX + 1;
    return b < SHM_PULL_MAX ? (size_t)b : SHM_PULL_MAX;
}

/* microseconds of the cheapest of a few 64-byte reads of my own memory
   through process_vm_readv (< 0 when refused), and of a hot 64 KiB memcpy
   (< 0 when no memory) */
static double cma_call_us(void)
{
    char src[64] = {1}, dst[64];
    double best = -1;
    for (int i = 0; i < SHM_PROBES; i++) {
        struct iovec l = {dst, sizeof dst}, r = {src, sizeof src};
        double t0 = core_wtime();
        ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        double t = (core_wtime() - t0) * 1e6;
        if (got != (ssize_t)sizeof dst)
            return -1;
        if (best < 0 || t < best)
            best = t;
    }
    return best;
}

/* Whether the kernel's copy has memcpy's page-aliasing cliff here
   (core/copy.h): a 16 KiB read of my own memory into a destination 16
   bytes above its source modulo 4 KiB, against one into a destination at
   the source's own offset, best of a few each. The kernel copies user
   memory with the same `rep movsb`; on the EPYC VM, 64 KiB / 1 MiB took
   39 / 474 us at 16 bytes against 9 / 131 us at 0. Cut where the two
   differ by 2x: the cliff is 3x or more where it exists (16 KiB: 8.1 us
   against 2.5). */
#define SHM_ALIAS_PROBES 4
static int cma_alias_slow(void)
{
    const size_t n = 16u << 10;
    unsigned char *a = aligned_alloc(4096, 3 * n);
    double best[2] = {-1, -1};
    if (!a)
        return 0;
    memset(a, 1, 3 * n);
    for (int i = 0; i < 2 * SHM_ALIAS_PROBES; i++) {
        int skew = i & 1;
        struct iovec l = {a + n + (skew ? 16 : 0), n}, r = {a, n};
        double t0 = core_wtime();
        ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        double t = (core_wtime() - t0) * 1e6;
        if (got != (ssize_t)n) {
            free(a);
            return 0;
        }
        if (best[skew] < 0 || t < best[skew])
            best[skew] = t;
    }
    free(a);
    return best[1] > 2 * best[0];
}

static double copy64k_us(void)
{
    const size_t n = 64u << 10;
    unsigned char *a = malloc(2 * n);
    double best = -1;
    if (!a)
        return -1;
    memset(a, 1, 2 * n);    /* faulted in and hot before the timing */
    for (int i = 0; i < SHM_PROBES; i++) {
        double t0 = core_wtime();
        memcpy(a + n, a, n);
        __asm__ __volatile__("" : : "r"(a) : "memory");
        double t = (core_wtime() - t0) * 1e6;
        if (best < 0 || t < best)
            best = t;
    }
    free(a);
    return best;
}

/* Split copies: messages from SHM_SPLIT_MIN are copied part by the
 * receiver (process_vm_readv) and part by the sender (process_vm_writev)
 * at once, when the sender is in the library to take its part; two cores
 * then move the message. From 128 KiB, since a busy sender (receives
 * posted) no longer splits at all (p2p.c): np 2 vcoll_osu_bw, 3 runs of
 * 400-1000 iterations, 128 KiB 32.0-33.5 GB/s split against 22.3-23.5 one
 * copy, 256 KiB 38.7-39.2 against 24.4-24.6, bibw the same either way;
 * at 64 KiB splitting lost (19.5 against 21.2). Each ordered pair has
 * SHM_CLAIMS claim words in the segment (after the flag slots): word =
 * generation << 2 | state. */
#define SHM_SPLIT_MIN (128u << 10)
/* A sender with nothing else to copy (p2p/proto.h: P2P_F_LONE; a bcast's
   root, a ping-pong) helps from here: np 2 vcoll_osu_latency 256 KiB 8.1
   us against 12.6 with one copy (doc/collectives.md). The same size as
   SHM_SPLIT_MIN since session 33; kept apart because the two were
   measured apart and may part again on another machine. */
#define SHM_SPLIT_LONE_MIN (128u << 10)
#define SHM_CLAIMS 16
enum { CLAIM_OPEN = 0, CLAIM_RECEIVER = 1, CLAIM_SENDER = 2, CLAIM_DONE = 3 };

/* Pulls batched: the rendezvous messages one burst of a ring announces
 * (at most SHM_BURST) are pulled with one process_vm_readv of an iovec
 * each, once the burst is read. Why: a pull's system call (the task and
 * mm lookups, the iovec import, the sandbox's syscall hooks) costs more
 * than the copy of a few KiB, and a window of messages (OSU's bw posts 64)
 * pays it per message while the sender idles. On the 2-core Xeon VM, one
 * process's own 8 pulls of 4/8/16/32 KiB: 0.64/0.80/2.28/4.24 us each,
 * 0.31/0.53/1.37/3.71 batched. Up to SHM_BATCH_MAX bytes per message:
 * a bigger one's copy dwarfs the call, and a batch completes all its
 * messages only at its end (a pipeline forwarding chunk by chunk would
 * wait for the next chunk's copy). Only once a pull has worked, so that
 * CMA refused (ptrace policy) is still found by a single pull, which p2p
 * turns into streaming. */
#define SHM_BURST 8
#define SHM_BATCH_MAX (64u << 10)

typedef struct shm_pull {
    void *dst;
    size_t len;
    uint64_t raddr;
    void *cookie;
} shm_pull_t;

typedef struct shm_hdr {
    uint64_t magic;
    uint32_t nlocal, nlines;  /* lines per ring (shm_ring.h) */
    uint64_t max_packet;
    uint64_t coll_bytes;    /* collective segments mapped on the node (net.h) */
} shm_hdr_t;

typedef struct shm_blob {       /* what each rank publishes */
    int32_t pid;
    int32_t local_idx;
} shm_blob_t;

typedef struct net_shm {
    net_t base;
    const net_env_t *env;
    int me;                     /* my local index */
    int nlocal;
    int *world_of;              /* local index -> world rank */
    int *local_of;              /* world rank -> local index or -1 */
    pid_t *pid;                 /* by local index */
    char name[128];
    void *seg;
    size_t seg_bytes;
    int creator, unlinked;
    int cma;                    /* 1 = use process_vm_readv, 0 = refused/off */
    int cma_worked;             /* a pull or put has gone through */
    int batch_from;             /* local index whose burst is being read, or -1:
                                   shm_get pulls at once */
    int nbatch;                 /* pulls queued for batch_from */
    shm_pull_t batch[SHM_BURST];
    shm_ring_t *out;            /* by local index: my ring to them */
    shm_ring_t *in;             /* by local index: their ring to me */
    int rr;                     /* round-robin start for fairness */
    uint32_t nlines;            /* units per ring, as this rank computes it */
    uint8_t *warm;              /* by local index: rings to and from it populated */
    uint64_t *claim_gen;        /* by local index: claims opened for its messages */
    uint64_t *claim_tok;        /* [local index][SHM_CLAIMS]: token of a word in
                                   use, 0 when free */
    int fault_peer, fault_after; /* VCOLL_FAULT_SHM_SEND: the broken link's
                                   world rank (-1: none), sends left to it */
    net_ops_t fault_ops;        /* shm_ops with shm_send_fault, when set */
    int fault_short;            /* VCOLL_FAULT_SHM_PULL=short */
    long fault_refuse;          /* refuse@N: N; refuse@batch: -1; else 0 */
    long reads_ok;              /* CMA reads that worked (for refuse@N) */
    int refusing;               /* the fault has struck: every read fails */
} net_shm_t;

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static void seg_name(net_shm_t *s, const net_env_t *env)
{
    char job[80];
    size_t j = 0;
    /* nspace may hold '.' or '/'; keep a portable name */
    for (const char *p = env->boot->jobid; *p && j < sizeof job - 1; p++)
        job[j++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ? *p : '_';
    job[j] = 0;
    snprintf(s->name, sizeof s->name, "/vcoll-%s-n%d", job, env->boot->node_id);
}

static uint8_t *ring_base(net_shm_t *s, int from, int to)
{
    shm_hdr_t *h = s->seg;
    size_t rb = shm_ring_bytes(h->nlines);
    return (uint8_t *)s->seg + round_up(sizeof *h, 4096) + ((size_t)from * s->nlocal + (size_t)to) * rb;
}

/* Map the pages of both rings with local rank l at the first packet
 * either way, in one call: touched one by one, a ring's 34 pages (each
 * end faults its own mapping) cost a benchmark's first row a quarter of
 * its rate on a VM with slow faults (np 2 vcoll_osu_bw, 1 B: 0.75 of the
 * fixed-cell rings, which touched one line per 8 KiB cell). Only the rings
 * of pairs that talk: the segment has L*L of them. Failure is harmless
 * (the pages then fault in as they are touched). */
static void rings_warm(net_shm_t *s, int l)
{
    s->warm[l] = 1;
    size_t rb = shm_ring_bytes(s->nlines);
    const uint8_t *pair[2] = {ring_base(s, s->me, l), ring_base(s, l, s->me)};
    unsigned sum = 0;
    for (int i = 0; i < 2; i++) {
#ifdef MADV_POPULATE_WRITE   /* Linux 5.14; older kernels say EINVAL */
        uintptr_t a = (uintptr_t)pair[i] & ~(uintptr_t)4095, e = (uintptr_t)pair[i] + rb;
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#endif
        /* then read it into this core's cache in address order (the
           hardware prefetcher streams it): a line's first use otherwise
           comes from memory, on the message's path */
        const volatile uint8_t *p = pair[i];
        for (size_t o = 0; o < rb; o += SHM_CACHELINE)
            sum += p[o];
    }
    (void)sum;
}

static int shm_send(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    net_shm_t *s = (net_shm_t *)n;
    int l = s->local_of[peer];
    if (__builtin_expect(!s->warm[l], 0))
        rings_warm(s, l);
    return shm_ring_push(&s->out[l], iov, iovcnt) ? NET_AGAIN : VC_SUCCESS;
}

/* send with VCOLL_FAULT_SHM_SEND set (the ops of such an instance only, so
   the usual send has nothing to check): the link to fault_peer works for
   fault_after - 1 sends, then fails every one, as a connection broken at
   this end would; the peer sees nothing */
static int shm_send_fault(net_t *n, int peer, const struct iovec *iov, int iovcnt)
{
    net_shm_t *s = (net_shm_t *)n;
    if (peer != s->fault_peer || s->fault_after > 1) {
        s->fault_after -= peer == s->fault_peer;
        return shm_send(n, peer, iov, iovcnt);
    }
    if (s->fault_after == 1) {
        s->fault_after = 0;
        LOG_WARN("shm: VCOLL_FAULT_SHM_SEND: the link to rank %d is broken from now on", peer);
    }
    return VC_ERR_TRANSPORT;
}

static void pulls_flush(net_shm_t *s, int l);

static int shm_progress(net_t *n)
{
    net_shm_t *s = (net_shm_t *)n;
    int events = 0;
    /* polled from inside a burst (a handler's callback waited): that
       burst's pulls first; it goes on pulling one at a time */
    if (s->nbatch)
        pulls_flush(s, s->batch_from);
    /* rotate the starting ring so a chatty peer cannot starve the others */
    for (int k = 0; k < s->nlocal; k++) {
        int l = s->rr + k;
        if (l >= s->nlocal)
            l -= s->nlocal;
        if (l == s->me)
            continue;
        shm_ring_t *r = &s->in[l];
        s->batch_from = l;
        for (int burst = 0; burst < SHM_BURST; burst++) {
            shm_pkt_t *pkt = shm_ring_peek(r);
            if (!pkt)
                break;
            if (__builtin_expect(!s->warm[l], 0))
                rings_warm(s, l);
            /* the length is the peer's word, in memory it can still write:
               read it once, and never past the packet's room */
            uint32_t len = __atomic_load_n(&pkt->len, __ATOMIC_RELAXED);
            if (shm_ring_len_ok(r, len))
                n->up.packet(n->up.arg, s->world_of[l], pkt->data, len);
            else
                LOG_ERR("shm: dropping a packet of %u bytes from rank %d (at most %zu, "
                        "%u lines before the ring's end)", len, s->world_of[l],
                        s->base.max_packet, r->nlines - r->idx);
            shm_ring_pop(r, len);
            events++;
        }
        s->batch_from = -1;
        if (s->nbatch)
            pulls_flush(s, l);
    }
    if (++s->rr >= s->nlocal)
        s->rr = 0;
    return events;
}

static int shm_expose(net_t *n, const void *buf, size_t len, net_key_t *key, void **handle)
{
    /* CMA needs nothing: the receiver reads our address space by pid */
    memset(key, 0, sizeof *key);
    *handle = NULL;
    return VC_SUCCESS;
}

static int shm_release(net_t *n, void *handle) { return VC_SUCCESS; }

/* process_vm_readv from a peer, with VCOLL_FAULT_SHM_PULL applied: short
   reads only the first half, plus one byte, of what was asked, as the
   kernel does when it meets a fault part way (the caller must read the
   rest itself, from the right place);
   refuse@N fails every read after N worked with EPERM, refuse@batch every
   read from the first that carries several messages on (which read that is
   depends on timing, so refuse@N alone may never strike one) */
static ssize_t cma_readv(net_shm_t *s, pid_t pid, const struct iovec *lv, unsigned long ln,
                         const struct iovec *rv, unsigned long rn)
{
    if ((s->fault_refuse > 0 && s->reads_ok >= s->fault_refuse) ||
        (s->fault_refuse < 0 && ln > 1))
        s->refusing = 1;
    if (s->refusing) {
        errno = EPERM;
        return -1;
    }
    struct iovec cut[SHM_BURST];
    if (s->fault_short && ln <= SHM_BURST) {
        /* the local side cut to the first half (+1 byte): both sides are
           the same lengths here, so the remote one needs no cut */
        size_t total = 0, want, i;
        for (i = 0; i < ln; i++)
            total += lv[i].iov_len;
        want = total > 1 ? total / 2 + 1 : total;
        for (i = 0; i < ln && want; i++) {
            cut[i] = lv[i];
            if (cut[i].iov_len > want)
                cut[i].iov_len = want;
            want -= cut[i].iov_len;
        }
        lv = cut;
        ln = i;
    }
    ssize_t got = process_vm_readv(pid, lv, ln, rv, rn, 0);
    if (got > 0)
        s->reads_ok++;
    return got;
}

/* Move len bytes between my memory at local and pid's at raddr with CMA
   (write: mine to theirs), resuming after partial copies and signals.
   Returns 0, or -1 with errno set (0 for a copy that made no progress);
   *done says how far it got. */
static int cma_move(net_shm_t *s, pid_t pid, void *local, uint64_t raddr, size_t len,
                    int write, size_t *done)
{
    *done = 0;
    while (*done < len) {
        struct iovec l = {(char *)local + *done, len - *done};
        struct iovec r = {(void *)(uintptr_t)(raddr + *done), len - *done};
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : cma_readv(s, pid, &l, 1, &r, 1);
        if (got > 0) {
            *done += (size_t)got;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0)
            errno = 0;
        return -1;
    }
    return 0;
}

/* one pull, now: 0 and get_done called, or VC_ERR_UNSUPPORTED (CMA
   refused; nothing written, get_done not called) */
static int pull_now(net_shm_t *s, int peer, void *dst, size_t len, uint64_t raddr,
                    void *cookie)
{
    net_t *n = &s->base;
    size_t done;
    if (!cma_move(s, s->pid[s->local_of[peer]], dst, raddr, len, 0, &done)) {
        s->cma_worked = 1;
        n->up.get_done(n->up.arg, cookie, VC_SUCCESS);
        return VC_SUCCESS;
    }
    if ((errno == EPERM || errno == ENOSYS || errno == EACCES) && done == 0) {
        /* ptrace policy or a seccomp filter forbids CMA: copy through the
         * rings from now on (p2p switches to its streamed protocol) */
        LOG_INFO("process_vm_readv from rank %d refused (%s); large shm messages "
                 "will be copied through the segment", peer, strerror(errno));
        s->cma = 0;
        n->eager_cap = 0;
        n->pull_min = 0;
        n->split_min = 0;
        n->split_lone_min = 0;
        return VC_ERR_UNSUPPORTED;
    }
    if (errno == ESRCH) {
        n->up.peer_failed(n->up.arg, peer, "process exited during a large-message read");
        n->up.get_done(n->up.arg, cookie, VC_ERR_PEER_FAILED);
        return VC_SUCCESS;
    }
    LOG_ERR("process_vm_readv of %zu bytes from rank %d failed: %s", len - done, peer,
            errno ? strerror(errno) : "short read");
    n->up.get_done(n->up.arg, cookie, VC_ERR_TRANSPORT);
    return VC_SUCCESS;
}

static int shm_get(net_t *n, int peer, void *dst, size_t len, uint64_t raddr,
                   const net_key_t *key, void *cookie)
{
    net_shm_t *s = (net_shm_t *)n;
    if (!s->cma)
        return VC_ERR_UNSUPPORTED;
    /* announced by the burst being read (not a receive posted late, nor
       another peer's message that a packet's handler matched): queued */
    if (s->cma_worked && s->batch_from >= 0 && s->local_of[peer] == s->batch_from &&
        len <= SHM_BATCH_MAX && s->nbatch < SHM_BURST) {
        s->batch[s->nbatch++] = (shm_pull_t){dst, len, raddr, cookie};
        return VC_SUCCESS;
    }
    return pull_now(s, peer, dst, len, raddr, cookie);
}

/* The queued pulls of one burst in one call. It copies in iovec order and
   stops at the first fault, so the bytes it reports are whole messages and
   then part of one: those complete, the rest goes one pull at a time,
   which finds and reports what stopped it. A pull refused now (CMA worked
   before, so a policy changed under the job) is streamed, like every
   message after it. Completions run with batching off: a handler that
   posts a receive pulls at once. */
static void pulls_flush(net_shm_t *s, int l)
{
    net_t *n = &s->base;
    int nb = s->nbatch;
    /* copied out: a completion that polls runs shm_progress, whose bursts
       queue and flush their own pulls in s->batch */
    shm_pull_t b[SHM_BURST];
    memcpy(b, s->batch, (size_t)nb * sizeof b[0]);
    s->nbatch = 0;
    s->batch_from = -1;
    struct iovec lv[SHM_BURST], rv[SHM_BURST];
    for (int i = 0; i < nb; i++) {
        lv[i] = (struct iovec){b[i].dst, b[i].len};
        rv[i] = (struct iovec){(void *)(uintptr_t)b[i].raddr, b[i].len};
    }
    ssize_t got = nb > 1 ? cma_readv(s, s->pid[l], lv, (unsigned long)nb, rv, (unsigned long)nb)
                         : 0;
    size_t left = got > 0 ? (size_t)got : 0;
    for (int i = 0; i < nb; i++) {
        if (left >= b[i].len) {
            left -= b[i].len;
            n->up.get_done(n->up.arg, b[i].cookie, VC_SUCCESS);
            continue;
        }
        size_t skip = left;
        left = 0;
        /* refused (pull_now said why and turned CMA off): p2p streams
           the whole message instead, as it does a refused lone pull */
        if (!s->cma || pull_now(s, s->world_of[l], (char *)b[i].dst + skip, b[i].len - skip,
                                b[i].raddr + skip, b[i].cookie))
            n->up.get_done(n->up.arg, b[i].cookie, VC_ERR_UNSUPPORTED);
    }
}

static void *shm_node_slots(net_t *n);

/* the claim words after the flag slots: [receiver][sender][SHM_CLAIMS] */
static uint64_t *claim_word(net_shm_t *s, int receiver, int sender, unsigned i)
{
    uint8_t *w = (uint8_t *)shm_node_slots(&s->base) +
                 (size_t)s->nlocal * NET_SHM_SLOTS * NET_SHM_SLOT_BYTES;
    return (uint64_t *)w + ((size_t)receiver * s->nlocal + sender) * SHM_CLAIMS + i;
}

static int shm_claim_open(net_t *n, int peer, uint64_t *token)
{
    net_shm_t *s = (net_shm_t *)n;
    int l = s->local_of[peer];
    /* the generation names the word too (token % SHM_CLAIMS): take the
       next one that lands on a free word -- or on one whose sender has
       finished its put (its HELPED is still on the way: a burst of RTS
       queued ahead of it would otherwise hold every word) */
    uint64_t *tok = &s->claim_tok[(size_t)l * SHM_CLAIMS];
    uint64_t g = s->claim_gen[l];
    unsigned i = 0, k;
    for (k = 0; k < SHM_CLAIMS; k++) {
        i = (unsigned)(++g % SHM_CLAIMS);
        if (!tok[i] || __atomic_load_n(claim_word(s, s->me, l, i), __ATOMIC_ACQUIRE) ==
                           (tok[i] << 2 | CLAIM_DONE))
            break;
    }
    s->claim_gen[l] = g;
    if (k == SHM_CLAIMS)
        return VC_ERR_NOMEM;
    tok[i] = g;
    /* the new generation opens the word; a sender holding an older token
       (a message long done) can no longer take it */
    __atomic_store_n(claim_word(s, s->me, l, i), g << 2 | CLAIM_OPEN, __ATOMIC_RELEASE);
    *token = g;
    return VC_SUCCESS;
}

/* the token is the peer's word when I am the sender: any value, so only
   its slot (mod SHM_CLAIMS) and generation are used, and only by a CAS */
static int shm_claim_take(net_t *n, int peer, uint64_t token, int owner)
{
    net_shm_t *s = (net_shm_t *)n;
    int l = s->local_of[peer];
    unsigned i = (unsigned)(token % SHM_CLAIMS);
    uint64_t *w = owner ? claim_word(s, s->me, l, i) : claim_word(s, l, s->me, i);
    uint64_t open = token << 2 | CLAIM_OPEN;
    uint64_t mine = token << 2 | (owner ? CLAIM_RECEIVER : CLAIM_SENDER);
    return __atomic_compare_exchange_n(w, &open, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* a word taken over by a newer claim (above) is no longer this token's */
static void shm_claim_close(net_t *n, int peer, uint64_t token)
{
    net_shm_t *s = (net_shm_t *)n;
    uint64_t *tok = &s->claim_tok[(size_t)s->local_of[peer] * SHM_CLAIMS + token % SHM_CLAIMS];
    if (*tok == token)
        *tok = 0;
}

static int shm_put(net_t *n, int peer, uint64_t token, const void *src, size_t len,
                   uint64_t raddr)
{
    net_shm_t *s = (net_shm_t *)n;
    int pl = s->local_of[peer];
    size_t done;
    if (cma_move(s, s->pid[pl], (void *)src, raddr, len, 1, &done)) {
        /* the receiver copies the part itself (it asked, so it can) */
        LOG_DEBUG("process_vm_writev of %zu bytes to rank %d failed: %s", len - done, peer,
                  errno ? strerror(errno) : "short write");
        return errno == ESRCH ? VC_ERR_PEER_FAILED : VC_ERR_TRANSPORT;
    }
    s->cma_worked = 1;
    /* the part is in place: the receiver may reuse the word at once */
    __atomic_store_n(claim_word(s, pl, s->me, (unsigned)(token % SHM_CLAIMS)),
                     token << 2 | CLAIM_DONE, __ATOMIC_RELEASE);
    return VC_SUCCESS;
}

static int shm_check_peer(net_t *n, int peer)
{
    net_shm_t *s = (net_shm_t *)n;
    int l = s->local_of[peer];
    if (l < 0)
        return VC_SUCCESS;
    return net_pid_gone(s->pid[l]) ? VC_ERR_PEER_FAILED : VC_SUCCESS;
}

static void shm_close(net_t *n)
{
    net_shm_t *s = (net_shm_t *)n;
    if (s->seg)
        munmap(s->seg, s->seg_bytes);
    if (s->creator && !s->unlinked)
        shm_unlink(s->name);
    free(s->world_of);
    free(s->local_of);
    free(s->pid);
    free(s->out);
    free(s->in);
    free(s->warm);
    free(s->claim_gen);
    free(s->claim_tok);
    free(s);
}

static uint64_t *shm_node_bytes(net_t *n);

static const net_ops_t shm_ops = {
    .send = shm_send,
    .progress = shm_progress,
    .mem_expose = shm_expose,
    .mem_release = shm_release,
    .get = shm_get,
    .check_peer = shm_check_peer,
    .node_slots = shm_node_slots,
    .node_bytes = shm_node_bytes,
    .claim_open = shm_claim_open,
    .claim_take = shm_claim_take,
    .claim_close = shm_claim_close,
    .put = shm_put,
    .close = shm_close,
};

int net_shm_open(const net_env_t *env, const net_upcalls_t *up, net_t **out)
{
    net_shm_t *s = calloc(1, sizeof *s);
    if (!s)
        return VC_ERR_NOMEM;
    s->base.ops = &shm_ops;
    s->base.name = "shm";
    s->base.up = *up;
    s->env = env;
    s->nlocal = env->boot->local_size;
    s->world_of = malloc((size_t)s->nlocal * sizeof(int));
    s->local_of = malloc((size_t)env->size * sizeof(int));
    s->pid = calloc((size_t)s->nlocal, sizeof(pid_t));
    s->out = calloc((size_t)s->nlocal, sizeof(shm_ring_t));
    s->in = calloc((size_t)s->nlocal, sizeof(shm_ring_t));
    s->warm = calloc((size_t)s->nlocal, 1);
    s->claim_gen = calloc((size_t)s->nlocal, sizeof *s->claim_gen);
    s->claim_tok = calloc((size_t)s->nlocal * SHM_CLAIMS, sizeof *s->claim_tok);
    if (!s->world_of || !s->local_of || !s->pid || !s->out || !s->in || !s->warm ||
        !s->claim_gen || !s->claim_tok) {
        shm_close(&s->base);
        return VC_ERR_NOMEM;
    }
    if (net_fault_spec(env, "VCOLL_FAULT_SHM_SEND", env->cfg->fault_shm_send, &s->fault_peer,
                       &s->fault_after)) {
        shm_close(&s->base);
        return VC_ERR_ARG;
    }
    const char *fp = env->cfg->fault_shm_pull;
    char extra;
    if (!strcmp(fp, "short")) {
        s->fault_short = 1;
    } else if (!strcmp(fp, "refuse@batch")) {
        s->fault_refuse = -1;
    } else if (fp[0] && (sscanf(fp, "refuse@%ld%c", &s->fault_refuse, &extra) != 1 ||
                         s->fault_refuse < 1)) {
        LOG_ERR("VCOLL_FAULT_SHM_PULL=%s: expected short, refuse@N (N >= 1) or refuse@batch",
                fp);
        shm_close(&s->base);
        return VC_ERR_ARG;
    }
    if (s->fault_peer >= 0) {
        s->fault_ops = shm_ops;
        s->fault_ops.send = shm_send_fault;
        s->base.ops = &s->fault_ops;
    }
    for (int r = 0; r < env->size; r++)
        s->local_of[r] = -1;
    for (int l = 0; l < s->nlocal; l++) {
        s->world_of[l] = env->boot->local_peers[l];
        s->local_of[s->world_of[l]] = l;
        if (s->world_of[l] == env->rank)
            s->me = l;
    }
    s->cma = env->cfg->shm_cma != CFG_CMA_OFF;
    s->batch_from = -1;
    /* More ranks here than cores: each leg of a rendezvous handshake waits
     * for the peer to be scheduled, which costs more than the second copy
     * eager pays, so the configured eager limit applies in full (every rank
     * of the node sees the same counts, so sender and receiver agree).
     * Measured on the 2-core box, np 4, neighbour alltoall on a 2x2 grid:
     * 8 KiB blocks 30 us with rendezvous, 18 us eager. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int oversub = cores > 0 && s->nlocal > cores;
    size_t pull = 0;
    if (s->cma) {
        pull = env->cfg->shm_pull_min;
        if (pull) {
            LOG_DEBUG("shm: messages from %zu bytes pulled (VCOLL_SHM_PULL_MIN)", pull);
        } else {
            double call = cma_call_us(), copy = copy64k_us();
            pull = net_shm_pull_min(call, copy);
            LOG_DEBUG("shm: messages from %zu bytes %s (a 64-byte process_vm_readv "
                      "%.2f us, a 64 KiB memcpy %.2f us)", pull,
                      oversub ? "would be pulled (not here: more ranks than cores)" : "pulled",
                      call, copy);
        }
    }
    s->base.pull_pays = pull;
    s->base.pull_alias_slow = s->cma && cma_alias_slow();
    if (s->base.pull_alias_slow)
        LOG_DEBUG("shm: a pull 1-63 bytes above its source modulo 4 KiB is slow here: such "
                  "messages are streamed");
    if (oversub)
        pull = 0;
    s->base.eager_cap = pull > 1 ? pull - 1 : pull;
    s->base.pull_min = pull;
    /* a sender that shares its core with the receiver cannot copy beside
       it: splitting would only add the request */
    s->base.split_min = s->cma && !oversub ? SHM_SPLIT_MIN : 0;
    s->base.split_lone_min = s->base.split_min ? SHM_SPLIT_LONE_MIN : 0;

    /* the largest packet is the largest eager message plus the p2p header;
       a ring holds VCOLL_SHM_CELLS of them (and any number of small ones) */
    size_t cell = round_up(env->cfg->eager_limit + 128 + SHM_PKT_HDR, SHM_CACHELINE);
    uint32_t ncells = (uint32_t)env->cfg->shm_cells;
    /* keep the segment's address space sane on fat nodes: rings are only
     * touched by pairs that talk, but the mapping is L*L rings */
    while (ncells > 2 && (double)s->nlocal * s->nlocal * cell * ncells > 4e9)
        ncells /= 2;
    uint32_t nlines = (uint32_t)(cell / SHM_CACHELINE * ncells);
    s->nlines = nlines;
    s->base.eager_packet = cell - SHM_PKT_HDR;   /* fits: a ring is >= 2 such packets */
    size_t big = round_up(SHM_FANIN_EAGER + 128 + SHM_PKT_HDR, SHM_CACHELINE);
    s->base.max_packet = big > cell && SHM_FANIN_SHARE * big <= (size_t)nlines * SHM_CACHELINE
                             ? big - SHM_PKT_HDR : s->base.eager_packet;
    s->base.fanin_packet = oversub ? s->base.max_packet : 0;
    s->seg_bytes = round_up(sizeof(shm_hdr_t), 4096) +
                   (size_t)s->nlocal * s->nlocal * shm_ring_bytes(nlines) +
                   (size_t)s->nlocal * NET_SHM_SLOTS * NET_SHM_SLOT_BYTES +
                   (size_t)s->nlocal * s->nlocal * SHM_CLAIMS * sizeof(uint64_t);
    seg_name(s, env);

    if (s->me == 0) {
        shm_unlink(s->name);  /* a stale one from a crashed job with the same id */
        int fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            LOG_ERR("shm_open(%s) failed: %s", s->name, strerror(errno));
            shm_close(&s->base);
            return VC_ERR_TRANSPORT;
        }
        s->creator = 1;
        if (ftruncate(fd, (off_t)s->seg_bytes) < 0) {
            LOG_ERR("cannot size shared segment %s to %zu bytes: %s (is /dev/shm full?)",
                    s->name, s->seg_bytes, strerror(errno));
            close(fd);
            shm_close(&s->base);
            return VC_ERR_TRANSPORT;
        }
        s->seg = mmap(NULL, s->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (s->seg == MAP_FAILED) {
            s->seg = NULL;
            LOG_ERR("mmap of %zu bytes of shared memory failed: %s", s->seg_bytes, strerror(errno));
            shm_close(&s->base);
            return VC_ERR_TRANSPORT;
        }
        shm_hdr_t *h = s->seg;
        h->nlocal = (uint32_t)s->nlocal;
        h->nlines = nlines;
        h->max_packet = s->base.max_packet;
        __atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    }
    shm_blob_t blob = {(int32_t)getpid(), s->me};
    int rc = boot_put(env->boot, SHM_KEY, &blob, sizeof blob);
    if (rc) {
        shm_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return VC_SUCCESS;
}

int net_shm_connect(net_t *n)
{
    net_shm_t *s = (net_shm_t *)n;
    for (int l = 0; l < s->nlocal; l++) {
        shm_blob_t b;
        size_t len = sizeof b;
        int rc = boot_get(s->env->boot, s->world_of[l], SHM_KEY, &b, &len);
        if (rc) {
            net_peer_missing(s->env, s->world_of[l], "shm");
            return rc;
        }
        s->pid[l] = b.pid;
    }
    if (!s->seg) {
        int fd = shm_open(s->name, O_RDWR, 0600);
        if (fd < 0) {
            LOG_ERR("cannot open the node's shared segment %s: %s", s->name, strerror(errno));
            return VC_ERR_TRANSPORT;
        }
        s->seg = mmap(NULL, s->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (s->seg == MAP_FAILED) {
            s->seg = NULL;
            LOG_ERR("mmap of shared segment %s failed: %s", s->name, strerror(errno));
            return VC_ERR_TRANSPORT;
        }
        shm_hdr_t *h = s->seg;
        if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC ||
            h->nlocal != (uint32_t)s->nlocal) {
            LOG_ERR("shared segment %s has an unexpected layout (ranks disagree on "
                    "VCOLL_EAGER_LIMIT or VCOLL_SHM_CELLS?)", s->name);
            return VC_ERR_TRANSPORT;
        }
        if (h->max_packet != s->base.max_packet || h->nlines != s->nlines) {
            LOG_ERR("shared segment ring size differs between ranks: set the same "
                    "VCOLL_EAGER_LIMIT and VCOLL_SHM_CELLS on every rank");
            return VC_ERR_TRANSPORT;
        }
    }
    shm_hdr_t *h = s->seg;
    for (int l = 0; l < s->nlocal; l++) {
        s->out[l] = shm_ring_at(ring_base(s, s->me, l), h->nlines, (uint32_t)h->max_packet);
        s->in[l] = shm_ring_at(ring_base(s, l, s->me), h->nlines, (uint32_t)h->max_packet);
    }
    return VC_SUCCESS;
}

void net_shm_after_fence(net_t *n)
{
    net_shm_t *s = (net_shm_t *)n;
    if (s->creator && !s->unlinked) {
        shm_unlink(s->name);
        s->unlinked = 1;
    }
}

static uint64_t *shm_node_bytes(net_t *n)
{
    shm_hdr_t *h = ((net_shm_t *)n)->seg;
    return h ? &h->coll_bytes : NULL;
}

static void *shm_node_slots(net_t *n)
{
    net_shm_t *s = (net_shm_t *)n;
    shm_hdr_t *h = s->seg;
    if (!h)
        return NULL;
    /* after the rings; every slot starts on its own cache line */
    return (uint8_t *)s->seg + round_up(sizeof *h, 4096) +
           (size_t)s->nlocal * s->nlocal * shm_ring_bytes(h->nlines);
}
