/*
 * ops.c -- MPI ops that outlive MPI_Op_free.
 *
 * A program may free an op right after starting a non-blocking reduction
 * with it ("the operation completes normally"). When vcoll runs that
 * reduction, it calls the op through PMPI_Reduce_local until the end, so
 * the handle must stay valid: MPI_Op_free of an op a call in flight holds
 * only marks it, and the last release frees it. The program's handle
 * becomes MPI_OP_NULL at once, as MPI says.
 */
#include <stdlib.h>
#include "vcmpi.h"

static struct vcmpi_held_op *lookup(MPI_Op op)
{
    for (int i = 0; i < vcmpi.nheld; i++)
        if (vcmpi.held_ops[i].op == op && !vcmpi.held_ops[i].freed)
            return &vcmpi.held_ops[i];
    return NULL;
}

int vcmpi_op_hold(MPI_Op op)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&vcmpi.lock);
    struct vcmpi_held_op *h = lookup(op);
    if (!h && vcmpi.nheld == vcmpi.capheld) {
        int cap = vcmpi.capheld ? 2 * vcmpi.capheld : 8;
        struct vcmpi_held_op *n = realloc(vcmpi.held_ops, (size_t)cap * sizeof *n);
        if (n) {
            vcmpi.held_ops = n;
            vcmpi.capheld = cap;
        }
    }
    if (!h && vcmpi.nheld < vcmpi.capheld) {
        h = &vcmpi.held_ops[vcmpi.nheld++];
        h->op = op;
        h->uses = 0;
        h->freed = 0;
    }
    if (h)
        h->uses++;
    else
        rc = MPI_ERR_NO_MEM;
    pthread_mutex_unlock(&vcmpi.lock);
    return rc;
}

/* the entry of op with at least one use (freed or not) */
static int find_used(MPI_Op op)
{
    for (int i = 0; i < vcmpi.nheld; i++)
        if (vcmpi.held_ops[i].op == op && vcmpi.held_ops[i].uses > 0)
            return i;
    return -1;
}

void vcmpi_op_release(MPI_Op op)
{
    MPI_Op dead = MPI_OP_NULL;
    pthread_mutex_lock(&vcmpi.lock);
    int i = find_used(op);
    if (i >= 0 && --vcmpi.held_ops[i].uses == 0) {
        if (vcmpi.held_ops[i].freed)
            dead = op;
        vcmpi.held_ops[i] = vcmpi.held_ops[--vcmpi.nheld];
    }
    pthread_mutex_unlock(&vcmpi.lock);
    if (dead != MPI_OP_NULL)
        PMPI_Op_free(&dead);
}

int MPI_Op_free(MPI_Op *op)
{
    if (!op)
        return PMPI_Op_free(op);
    pthread_mutex_lock(&vcmpi.lock);
    struct vcmpi_held_op *h = lookup(*op);
    if (h)
        h->freed = 1;
    pthread_mutex_unlock(&vcmpi.lock);
    if (!h)
        return PMPI_Op_free(op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
