/*
 * launcher.c -- recognise launchers that do not speak PMIx.
 * hydra and `srun --mpi=pmi2|none` start N processes whose PMIx_Init all
 * fail the same way a lone singleton's does. Without this check each would
 * run as its own 1-rank job and the user would get N wrong answers.
 */
#include <stdlib.h>
#include <string.h>
#include "boot.h"

static long env_long(const char *(*get)(const char *), const char *name)
{
    const char *v = get(name);
    if (!v || !*v)
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return *end ? 0 : n;
}

int boot_foreign_launcher(const char *(*get)(const char *), const char **who)
{
    static const struct { const char *var, *name; } probes[] = {
        {"PMI_SIZE", "a PMI-1/PMI-2 launcher (mpiexec.hydra or srun --mpi=pmi2)"},
        {"MPI_LOCALNRANKS", "mpiexec.hydra"},
        /* the step's size, set by srun for the tasks it starts; not
           SLURM_NTASKS, which is the allocation's: a program started by hand
           inside salloc/sbatch -n 4 sees it and is a legitimate singleton */
        {"SLURM_STEP_NUM_TASKS", "srun without --mpi=pmix"},
        {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun (its PMIx server was unreachable)"},
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        long n = env_long(get, probes[i].var);
        if (n > 1) {
            if (who)
                *who = probes[i].name;
            return (int)n;
        }
    }
    if (who)
        *who = NULL;
    return 1;
}
