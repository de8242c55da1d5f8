/*
 * vcoll_info -- what vcoll sees on this node: version, verbs devices and
 * GIDs, which HCA each local rank would use (and why), transports, config.
 *
 *   vcoll_info [--all] [--devices] [--config] [--algorithms] [--job]
 *              [--local-ranks N]
 *
 * --job (also the default when started by a PMIx launcher): this job's node
 * layout as the library computes it, and the transport each kind of peer
 * would use, without opening any transport. Every rank prints one line, so
 * `mpirun -np N vcoll_info --job` shows whether the ranks agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <hwloc.h>

#include "vcoll.h"
#include "core/config.h"
#include "core/copy.h"
#include "core/clock.h"
#include "net/net.h"
#include "coll/coll.h"
#include "coll/registry.h"
#include "coll/rules.h"
#include "net/verbs/device.h"
#include "net/verbs/memhook.h"
#include "topo/topo.h"
#include "boot/boot.h"

/* Transports are reported by whether their entry points are linked in. */
int net_shm_open(const net_env_t *env, const net_upcalls_t *up, net_t **out) __attribute__((weak));
int net_ud_open(const net_env_t *env, const net_upcalls_t *up, net_t **out) __attribute__((weak));

static void print_gids(const char *dev, int port, int tbl_len)
{
    int ndev = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    struct ibv_context *ctx = NULL;
    for (int i = 0; list && i < ndev && !ctx; i++)
        if (!strcmp(ibv_get_device_name(list[i]), dev))
            ctx = ibv_open_device(list[i]);
    if (list)
        ibv_free_device_list(list);
    if (!ctx)
        return;
    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry e;
        if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0))
            continue;
        char s[64];
        net_vdev_gid_str(&e.gid, s, sizeof s);
        printf("      GID[%d] %-40s %s\n", i, s, net_vdev_gid_type_str((int)e.gid_type));
    }
    ibv_close_device(ctx);
}

static void show_devices(const net_vport_t *ports, int n)
{
    printf("Verbs devices:\n");
    if (n == 0) {
        char rep[256];
        net_vdev_reject_report(ports, n, rep, sizeof rep);
        printf("  %s\n", rep);
        return;
    }
    for (int i = 0; i < n; i++) {
        const net_vport_t *v = &ports[i];
        printf("  %s port %d: %s, %s, MTU %d, LID %u, max msg %u B, %s\n", v->dev,
               v->port, ibv_port_state_str(v->state),
               net_vdev_link_layer_str(v->link_layer),
               net_vdev_mtu_bytes(v->active_mtu), v->lid, v->max_msg_sz,
               v->usable ? "usable" : "NOT usable");
        if (!v->usable)
            printf("      why: %s\n", v->why);
        else if (v->gid_index >= 0)
            printf("      vcoll uses GID[%d] (%s)\n", v->gid_index,
                   net_vdev_gid_type_str(v->gid_type));
        else
            printf("      vcoll uses the LID (InfiniBand, no GRH)\n");
        if (v->usable)
            printf("      registration cache: %s\n", v->odp
                   ? "on-demand paging (RC READ), no memory hooks needed"
                   : "no on-demand paging: pinned, invalidated by memory hooks");
        print_gids(v->dev, v->port, v->gid_tbl_len);
    }
}

/* What the RC registration cache does in a process like this one: the
   hooks are really installed and probed here (harmless in this tool), so
   the answer is the one a rank gets, unless the application brings its
   own allocator or sanitizer. Each rank logs its own mode with
   VCOLL_LOG=info, and its hit/miss counts at finalize with debug. */
static void show_rcache(void)
{
    vc_config_t cfg;
    char err[320], why[240];
    if (cfg_parse(&cfg, (const char *(*)(const char *))getenv, err, sizeof err))
        return;
    if (!cfg.rcache) {
        printf("Registration cache: off (VCOLL_RCACHE=off)\n");
        return;
    }
    int hooks = net_memhook_install(why, sizeof why) == VC_SUCCESS;
    printf("Registration cache: up to %zu MiB (VCOLL_RCACHE_MAX)\n"
           "  devices with on-demand paging: on, no hooks needed\n"
           "  other devices: %s (%s)\n"
           "  (each rank's mode with VCOLL_LOG=info, its counts at finalize with debug)\n",
           cfg.rcache_max >> 20, hooks ? "on, pinned, invalidated by memory hooks"
                                       : "off, no trustworthy memory hooks", why);
}

static void show_selection(const net_vport_t *ports, int n, int nlocal,
                           const char *hca)
{
    const char **names = calloc((size_t)n + 1, sizeof *names);
    int nn = names ? net_vdev_usable_names(ports, n, names, n) : 0;
    printf("HCA selection%s:\n", hca && *hca ? " (VCOLL_HCA set)" : "");
    if (nn == 0) {
        printf("  no usable device: the rc transport cannot run here\n");
        free(names);
        return;
    }
    hwloc_topology_t topo = NULL;
    if (topo_load(&topo) != VC_SUCCESS)
        printf("  (hwloc topology unavailable: devices treated as equidistant)\n");
    hwloc_bitmap_t mine = topo ? topo_my_cpuset(topo) : NULL;
    topo_hca_choice_t ch;
    if (topo_hca_select(topo, mine, names, nn, 0, hca, &ch) == VC_SUCCESS)
        printf("  this process (local rank 0, as bound now): %s\n", ch.why);
    else
        printf("  this process: error: %s\n", ch.why);
    /* Launchers usually bind rank i to core i: show that layout. */
    int ncores = topo ? hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) : 0;
    for (int lr = 0; lr < nlocal; lr++) {
        hwloc_bitmap_t cs = NULL;
        char where[64] = "unbound";
        if (topo && ncores > 0) {
            hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE,
                                                     (unsigned)(lr % ncores));
            cs = core && core->cpuset ? hwloc_bitmap_dup(core->cpuset) : NULL;
            snprintf(where, sizeof where, "bound to core %d", lr % ncores);
        }
        int rc = topo_hca_select(topo, cs, names, nn, lr, hca, &ch);
        printf("  local rank %d (%s): %s%s\n", lr, where, rc ? "error: " : "", ch.why);
        hwloc_bitmap_free(cs);
    }
    hwloc_bitmap_free(mine);
    if (topo)
        hwloc_topology_destroy(topo);
    free(names);
}

/* the exact line that runs an unmodified MPI program's collectives on vcoll */
static void show_mpi_dropins(void)
{
    const char *built = VC_MPI_DROPINS;
    if (!*built)
        return;
    printf("MPI drop-in (an unmodified MPI program's collectives on vcoll):\n");
    if (strstr(built, "openmpi"))
        printf("  Open MPI: mpirun -x LD_PRELOAD=%s/libvcoll_mpi_openmpi.so ./app\n",
               VC_LIBDIR);
    if (strstr(built, "mpich"))
        printf("  MPICH:    mpiexec -genv LD_PRELOAD %s/libvcoll_mpi_mpich.so ./app\n",
               VC_LIBDIR);
}

static void show_config(void)
{
    printf("Configuration (environment variables):\n");
    const char *name, *deflt, *help;
    for (int i = 0; cfg_describe(i, &name, &deflt, &help); i++) {
        const char *cur = getenv(name);
        printf("  %-22s default %-8s current %s\n", name,
               deflt && *deflt ? deflt : "\"\"", cur ? cur : "(default)");
        printf("      %s\n", help ? help : "");
        char vals[256];
        size_t n = strlen(name);
        int kind = -1;
        /* VCOLL_<COLL>_ALG: the names are the registry's */
        if (n > 10 && !strcmp(name + n - 4, "_ALG")) {
            char coll[64];
            snprintf(coll, sizeof coll, "%.*s", (int)(n - 10), name + 6);
            for (char *p = coll; *p; p++)
                *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
            kind = coll_kind_of(coll);
        }
        if (kind >= 0)
            printf("      values: %s\n", coll_alg_choices(kind, vals, sizeof vals));
        else if (cfg_values(i, vals, sizeof vals) && vals[0])
            printf("      values: %s\n", vals);
    }
}

/* The collectives' shared segments (coll/shm_seg.c): what one costs and
 * the node's cap. k > 0: the segment of a communicator over this node's k
 * ranks (what a job's world or node communicator gets). */
static void show_segments(int k)
{
    vc_config_t cfg;
    char err[320];
    if (cfg_parse(&cfg, (const char *(*)(const char *))getenv, err, sizeof err))
        return;
    if (k > 0) {
        printf("collective segment for this node's %d ranks %zu KiB, at most %zu KiB of "
               "segments per node (VCOLL_SHM_COLL_MAX)", k, coll_shmseg_bytes(k) >> 10,
               cfg.shm_coll_max >> 10);
        return;
    }
    printf("Collective shared segments: one per communicator with members sharing a node "
           "(per node), made on its first segment collective: %zu KiB for 2 ranks, %zu KiB "
           "for 8, %zu KiB for 16, %zu KiB for 64; at most %zu KiB of them per node "
           "(VCOLL_SHM_COLL_MAX), past which collectives use messages\n",
           coll_shmseg_bytes(2) >> 10, coll_shmseg_bytes(8) >> 10,
           coll_shmseg_bytes(16) >> 10, coll_shmseg_bytes(64) >> 10, cfg.shm_coll_max >> 10);
}

/* Whether this machine's memcpy has the page-aliasing cliff core_copy
 * steps around (core/copy.h): 64 KiB copied to 0 and to 16 bytes above
 * its source modulo 4 KiB, by memcpy and by core_copy, best of a few. */
static double copy_gbs(void (*f)(void *, const void *, size_t), unsigned char *d,
                       const unsigned char *s, size_t n)
{
    double best = 0;
    for (int i = 0; i < 100; i++) {
        double t0 = core_wtime();
        f(d, s, n);
        __asm__ __volatile__("" : : "r"(d) : "memory");
        double t = core_wtime() - t0;
        if (t > 0 && (best == 0 || t < best))
            best = t;
    }
    return best > 0 ? (double)n / best / 1e9 : 0;
}

static void by_memcpy(void *d, const void *s, size_t n) { memcpy(d, s, n); }
static void by_core_copy(void *d, const void *s, size_t n) { core_copy(d, s, n); }

static void show_copies(void)
{
    const size_t n = 64u << 10;
    unsigned char *a = aligned_alloc(4096, 3 * n);
    if (!a)
        return;
    memset(a, 1, 3 * n);
    double flat = copy_gbs(by_memcpy, a + n, a, n), skew = copy_gbs(by_memcpy, a + n + 16, a, n),
           ours = copy_gbs(by_core_copy, a + n + 16, a, n);
    free(a);
    printf("Copies: memcpy of 64 KiB %.1f GB/s, %.1f GB/s 16 bytes above its source modulo "
           "4 KiB (where a malloc'd buffer meets a slot)%s; vcoll's bulk copies there %.1f "
           "GB/s\n", flat, skew, skew * 2 < flat ? ": the rep movsb cliff" : "", ours);
}

static int show_job(void)
{
    vc_config_t cfg;
    char err[320];
    if (cfg_parse(&cfg, (const char *(*)(const char *))getenv, err, sizeof err)) {
        printf("Job: configuration error: %s\n", err);
        return 1;
    }
    boot_info_t b;
    memset(&b, 0, sizeof b);     /* boot_init first asks whether an exchange is armed */
    if (boot_init(&b) != VC_SUCCESS) {
        boot_info_free(&b);
        printf("Job: bootstrap failed (see the message above)\n");
        return 1;
    }
    char layout[256] = "";
    boot_nodemap_describe(&b, layout, sizeof layout);
    net_plan_t p;
    int rc = net_plan(&cfg, &b, &p, err, sizeof err);
    printf("Job rank %d/%d (%s): %s; node map from %s; most remote peers of a rank %d; ",
           b.rank, b.size, b.launcher, layout, b.map_source, boot_max_remote_peers(&b));
    if (rc)
        printf("transports: error: %s\n", err);
    else
        printf("transports: same node %s, other nodes %s%s%s%s; ", net_kind_names[p.local],
               net_kind_names[p.remote], p.why[0] ? " (" : "", p.why, p.why[0] ? ")" : "");
    if (!rc)
        show_segments(b.local_size);
    printf("\n");
    fflush(stdout);
    boot_info_free(&b);
    boot_finalize(&b);
    return rc ? 1 : 0;
}

/* Which rules table VCOLL_TUNE_FILE gives here (ranks of a job must all
   get the same: vc_init checks); all: the algorithms and every rule. */
static int show_algorithms(int all)
{
    const char *tf = getenv("VCOLL_TUNE_FILE");
    char err[640];
    if (coll_rules_load(tf ? tf : "", err, sizeof err)) {
        printf("Collective selection rules: error: %s\n", err);
        return 1;
    }
    const coll_rules_t *t = coll_rules_in_force();
    printf("Collective selection rules: %s (%d rules)\n", t->source, t->n);
    if (!all) {
        coll_rules_unload();
        return 0;
    }
    printf("Algorithms (RO: combines in rank order; node: node and leader phases; "
           "shared: through shared memory, blocking calls only):\n");
    for (int k = 0; k < COLL_NKINDS; k++) {
        const coll_alg_t *const *l;
        int n = coll_algs(k, &l);
        printf("  %-21s", coll_kind_name(k));
        for (int i = 0; i < n; i++)
            printf(" %s%s%s%s%s", l[i]->name,
                   l[i]->props & (ALG_RANK_ORDERED | ALG_NODE_AWARE | ALG_SHARED) ? "(" : "",
                   l[i]->props & ALG_RANK_ORDERED ? "RO" : "",
                   l[i]->props & ALG_NODE_AWARE ? ",node" : "",
                   l[i]->props & ALG_SHARED ? ",shared)" : l[i]->props ? ")" : "");
        printf("\n");
    }
    printf("Rules, first that holds and whose algorithm can serve the call wins:\n");
    for (int i = 0; i < t->n; i++) {
        char f[256];
        coll_rule_format(&t->rule[i], f, sizeof f);
        printf("  %-60s # %s line %d\n", f, t->rule[i].builtin ? "built-in" : "file",
               t->rule[i].line);
    }
    coll_rules_unload();
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: vcoll_info [--all] [--devices] [--config] [--algorithms] [--job]\n"
               "                  [--local-ranks N]\n"
               "  (no option: version, devices, HCA selection, transports, the collective\n"
               "  rules in force, and the job's node layout when a launcher started it)\n");
}

int main(int argc, char **argv)
{
    int devices = 0, config = 0, job = 0, algs = 0, nlocal = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all"))
            devices = config = algs = 1;
        else if (!strcmp(argv[i], "--devices"))
            devices = 1;
        else if (!strcmp(argv[i], "--config"))
            config = 1;
        else if (!strcmp(argv[i], "--algorithms"))
            algs = 1;
        else if (!strcmp(argv[i], "--job"))
            job = 1;
        else if (!strcmp(argv[i], "--local-ranks") && i + 1 < argc)
            nlocal = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    int plain = !devices && !config && !job && !algs;
    if (job)   /* one line per rank, nothing else: easy to compare */
        return show_job();
    if (nlocal < 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nlocal = n > 0 ? (int)(n < 8 ? n : 8) : 1;
    }

    printf("vcoll %s\n", vc_version_string());
    printf("Transports built in: self%s rc%s\n", net_shm_open ? " shm" : "",
           net_ud_open ? " ud" : "");
    show_segments(-1);
    if (plain) {
        show_copies();
        show_mpi_dropins();
    }
    if (plain || devices)
        show_rcache();
    if (plain || devices) {
        const char *g = getenv("VCOLL_GID_INDEX");
        net_vport_t *ports = NULL;
        int n = 0;
        net_vdev_scan(g && *g ? atoi(g) : -1, &ports, &n);
        show_devices(ports, n);
        const char *hca = getenv("VCOLL_HCA");
        show_selection(ports, n, nlocal, hca);
        free(ports);
    }
    if (config)
        show_config();
    int bad = (plain || algs) && show_algorithms(algs);
    if (plain && getenv("PMIX_NAMESPACE"))
        return show_job() || bad;
    return bad;
}
