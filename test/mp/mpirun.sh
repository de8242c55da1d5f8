#!/bin/bash
# make check: the multi-process suite under Open MPI's mpirun, np 1..8, shm.
exec "${srcdir:-.}/test/mp/run-mp.sh" --launcher mpirun --builddir . --srcdir "${srcdir:-.}"
