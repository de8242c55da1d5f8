/*
 * comm.c -- each MPI intracommunicator gets a vcoll twin on its first
 * collective: the same members in the same order, made with
 * vc_comm_create_group over the members only (a sub-communicator's first
 * collective involves nobody else). The twin is cached as an attribute
 * whose delete callback frees it with the MPI communicator.
 *
 * First use is the same call on every member (collectives are ordered per
 * communicator), so the members create together. MPI_COMM_WORLD is
 * vcoll's world itself.
 */
#include <stdlib.h>
#include "vcmpi.h"

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

/* members' world ranks in comm order */
static int *world_ranks(MPI_Comm comm, int n)
{
    MPI_Group g, w;
    int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    if (!in || !out || PMPI_Comm_group(comm, &g) != MPI_SUCCESS) {
        free(in);
        free(out);
        return NULL;
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &w);
    for (int i = 0; i < n; i++)
        in[i] = i;
    int rc = PMPI_Group_translate_ranks(g, n, in, w, out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&w);
    free(in);
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            rc = MPI_ERR_GROUP;     /* a member outside this job's world */
    if (rc != MPI_SUCCESS) {
        free(out);
        return NULL;
    }
    return out;
}

/* Collective over comm. The tag is agreed (the members' largest) so that
   no two creations a process takes part in share one. */
static void make_twin(MPI_Comm comm, vcmpi_comm_t *t)
{
    int n, ok = 0, all = 0;
    PMPI_Comm_size(comm, &n);
    int *ranks = world_ranks(comm, n);
    pthread_mutex_lock(&vcmpi.lock);
    uint32_t mine = vcmpi.next_tag++, tag = mine;
    pthread_mutex_unlock(&vcmpi.lock);
    if (PMPI_Allreduce(&mine, &tag, 1, MPI_UINT32_T, MPI_MAX, comm) == MPI_SUCCESS) {
        pthread_mutex_lock(&vcmpi.lock);
        if (vcmpi.next_tag <= tag)
            vcmpi.next_tag = tag + 1;
        pthread_mutex_unlock(&vcmpi.lock);
        /* a rank without its list still joins the agreement below */
        ok = ranks && vc_comm_create_group(VC_COMM_WORLD, n, ranks, (int)(tag % VC_TAG_UB),
                                           &t->vc) == VC_SUCCESS;
        if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            all = 0;
    }
    free(ranks);
    if (!all) {
        if (t->vc != VC_COMM_NULL)
            vc_comm_free(&t->vc);
        t->why = "vcoll could not make this communicator";
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
    int flag = 0, inter = 0;
    if (PMPI_Comm_get_attr(comm, vcmpi.keyval, &t, &flag) != MPI_SUCCESS) {
        *why = "not a communicator";
        return VC_COMM_NULL;
    }
    if (!flag) {
        if (!(t = calloc(1, sizeof *t))) {
            *why = "out of memory";
            return VC_COMM_NULL;
        }
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            t->why = "intercommunicator";
        else
            make_twin(comm, t);
        pthread_mutex_lock(&vcmpi.lock);
        t->next = vcmpi.comms;
        if (t->next)
            t->next->prev = t;
        vcmpi.comms = t;
        pthread_mutex_unlock(&vcmpi.lock);
        PMPI_Comm_set_attr(comm, vcmpi.keyval, t);
    }
    if (t->vc == VC_COMM_NULL)
        *why = t->why;
    return t->vc;
}
