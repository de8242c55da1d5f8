! mpi_coll_f.F90 -- a plain Fortran MPI program for the vcoll drop-in: the
! collectives it intercepts, called from Fortran, on MPI_COMM_WORLD, on a
! split in reversed key order and on a two-colour split of a dup, checked
! against values computed here with plain loops. One source, three bindings:
!   -DUSE_MPIF_H   include 'mpif.h'  (gfortran >= 10 needs
!                  -fallow-argument-mismatch: the same external procedure
!                  gets MPI_IN_PLACE (INTEGER) and REAL(8) buffers)
!   -DUSE_MPI      use mpi
!   -DUSE_MPI_F08  use mpi_f08        (some calls made without IERROR)
! -DUSE_INIT_THREAD starts with MPI_Init_thread(MPI_THREAD_FUNNELED);
! -DNITER=k sets the number of rounds (default 3).
! -DHAVE_PCOLL calls MPI-4's persistent collectives; with -DOMPI_PCOLL too,
! by Open MPI 4.1's names (MPIX_*_init, from its pcollreq extension:
! mpif-ext.h, use mpi_ext, use mpi_f08_ext).
! test_pending makes MPI's blocking calls that wait for other ranks
! (MPI_Sendrecv_replace, windows, an intercommunicator, MPI-IO, a
! disconnect; -DHAVE_MPI4: MPI-4's group constructors) on rank 0 with an
! MPI_Iallreduce still open there, the others after waiting for it: the
! drop-in's Fortran entry points of those calls, and vcoll moving meanwhile.
! -DHAVE_PORTS (Open MPI: Debian's MPICH on ch4:ucx cannot open a port)
! joins the even and odd world ranks by MPI_Comm_accept/MPI_Comm_connect
! once (test_ports), through the drop-in's Fortran entry points of both.
! -DHAVE_SPAWN (Open MPI: Debian's MPICH on ch4:ucx cannot spawn) adds
! MPI_Comm_spawn and MPI_Comm_spawn_multiple to test_pending when the
! program's first argument is 'spawn': the children (this program, with
! the arguments given) check what they got and report to the parents.
! Rank 0 prints 'fortran: all checks passed' at the end; the first failed
! check prints what failed and calls MPI_Abort.

#if !defined(USE_MPIF_H) && !defined(USE_MPI) && !defined(USE_MPI_F08)
#error "define one of USE_MPIF_H, USE_MPI, USE_MPI_F08"
#endif
#ifndef NITER
#define NITER 3
#endif
#if defined(OMPI_PCOLL)
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Neighbor_alltoall_init MPIX_Neighbor_alltoall_init
#endif
#if defined(USE_MPI_F08)
#define COMM_T type(MPI_Comm)
#define REQ_T type(MPI_Request)
#define WIN_T type(MPI_Win)
#define FILE_T type(MPI_File)
#define INFO_T type(MPI_Info)
#define STATUS_DECL type(MPI_Status) :: st
#define ST(f) st%f
#else
#define COMM_T integer
#define REQ_T integer
#define WIN_T integer
#define FILE_T integer
#define INFO_T integer
#define STATUS_DECL integer :: st(MPI_STATUS_SIZE)
#define ST(f) st(f)
#endif

program mpi_coll_f
#if defined(USE_MPI_F08)
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr
#if defined(OMPI_PCOLL)
  use mpi_f08_ext
#endif
#elif defined(USE_MPI)
  use mpi
#if defined(OMPI_PCOLL)
  use mpi_ext
#endif
#endif
  implicit none
#if defined(USE_MPIF_H)
  include 'mpif.h'
#if defined(OMPI_PCOLL)
  include 'mpif-ext.h'
#endif
#endif
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: ncomm = 3
  character(len=8), parameter :: cname(ncomm) = &
       [character(len=8) :: 'world', 'reversed', 'halves']
  COMM_T :: comms(ncomm), dupw
  integer :: ierr, wrank, wsize, it, ic, prov
  character(len=512) :: prog
  logical :: spawn
  COMM_T :: parent

#if defined(USE_INIT_THREAD)
  call MPI_Init_thread(MPI_THREAD_FUNNELED, prov, ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Init_thread failed'
#else
  prov = -1
  call MPI_Init(ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Init failed'
#endif
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
  call get_command_argument(0, prog)
  spawn = .false.
#if defined(HAVE_SPAWN)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent /= MPI_COMM_NULL) then
     call spawned(parent)
     call MPI_Finalize(ierr)
     stop
  end if
  if (command_argument_count() >= 1) then
     call get_command_argument(1, prog)
     spawn = prog == 'spawn'
     call get_command_argument(0, prog)
  end if
#endif

  comms(1) = MPI_COMM_WORLD
  ! all ranks, rank order reversed
  call MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, comms(2), ierr)
  call chkerr('MPI_Comm_split reversed', 2, 0)
  ! even and odd world ranks, each half reversed, split from a dup
  call MPI_Comm_dup(MPI_COMM_WORLD, dupw, ierr)
  call chkerr('MPI_Comm_dup', 3, 0)
  call MPI_Comm_split(dupw, mod(wrank, 2), -wrank, comms(3), ierr)
  call chkerr('MPI_Comm_split halves', 3, 0)

  do it = 1, NITER
     do ic = 1, ncomm
        call test_comm(comms(ic), ic, it)
     end do
     call test_topo(it)
     call test_pending(it)
#if defined(HAVE_PORTS)
     if (it == 1) call test_ports()
#endif
  end do

  call MPI_Comm_free(comms(3), ierr)
  call MPI_Comm_free(comms(2), ierr)
  call MPI_Comm_free(dupw, ierr)
  call chkerr('MPI_Comm_free', 0, 0)
  if (wrank == 0) then
     write (*, '(a)') 'fortran: all checks passed'
     flush (6)
  end if
  call MPI_Finalize(ierr)

contains

  subroutine fail(what, ic, it)
    character(len=*), intent(in) :: what
    integer, intent(in) :: ic, it
    character(len=8) :: cn
    integer :: e
    cn = 'setup'
    if (ic >= 1 .and. ic <= ncomm) cn = cname(ic)
    write (*, '(a,i0,a,a,a,i0,a,a)') 'fortran: rank ', wrank, ' comm ', trim(cn), &
         ' iter ', it, ': FAILED ', what
    flush (6)
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
    stop 1
  end subroutine fail

  subroutine chk(ok, what, ic, it)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: ic, it
    if (.not. ok) call fail(what, ic, it)
  end subroutine chk

  subroutine chkerr(what, ic, it)
    character(len=*), intent(in) :: what
    integer, intent(in) :: ic, it
    if (ierr /= MPI_SUCCESS) call fail(what // ': ierror /= MPI_SUCCESS', ic, it)
  end subroutine chkerr

  ! bitwise: a Fortran LOGICAL from MPI must be this compiler's .true./.false.
  logical function same_logical(a, b)
    logical, intent(in) :: a, b
    same_logical = transfer(a, 0) == transfer(b, 0)
  end function same_logical

  ! the rank and size a communicator must have, from the world rank
  subroutine expect_rank(ic, rank, nproc)
    integer, intent(in) :: ic
    integer, intent(out) :: rank, nproc
    integer :: r
    select case (ic)
    case (1)
       rank = wrank
       nproc = wsize
    case (2)
       rank = wsize - 1 - wrank
       nproc = wsize
    case default
       rank = 0
       nproc = 0
       do r = 0, wsize - 1
          if (mod(r, 2) /= mod(wrank, 2)) cycle
          nproc = nproc + 1
          if (r > wrank) rank = rank + 1
       end do
    end select
  end subroutine expect_rank

  subroutine test_comm(comm, ic, it)
    COMM_T, intent(in) :: comm
    integer, intent(in) :: ic, it
    integer, parameter :: n = 5, m = 3
    integer :: rank, nproc, erank, enproc, root, tgt, i, j, r
    real(dp) :: d(n), dr(n), dref(n), dummy(n)
    integer :: iv(n), ir(n), iref(n)
    logical :: lv(n), lr(n), lref(n)
    complex(dp) :: z(n), zr(n), zref(n)
    real(dp) :: p(2, 2), pr(2, 2)
    integer, allocatable :: sa(:, :), ra(:, :)
    integer :: sm(m), rm(m)
    REQ_T :: req
    STATUS_DECL
    integer, asynchronous :: rcv

    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nproc, ierr)
    call expect_rank(ic, erank, enproc)
    call chk(rank == erank .and. nproc == enproc, 'communicator rank/size', ic, it)
    ! a non-zero root whenever there is more than one rank
    root = 0
    if (nproc > 1) root = 1 + mod(it + ic, nproc - 1)
    allocate (sa(m, 0:nproc - 1), ra(m, 0:nproc - 1))

    ! --- MPI_Allreduce DOUBLE PRECISION / MPI_SUM
    do i = 1, n
       d(i) = real(rank + i + it, dp)
       dref(i) = real(nproc * (i + it) + nproc * (nproc - 1) / 2, dp)
    end do
    dr = -1
    call MPI_Allreduce(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    call chkerr('MPI_Allreduce DOUBLE PRECISION SUM', ic, it)
    call chk(all(dr == dref), 'MPI_Allreduce DOUBLE PRECISION SUM', ic, it)

    ! --- MPI_Allreduce DOUBLE PRECISION / MPI_SUM, MPI_IN_PLACE
    dr = d
    call MPI_Allreduce(MPI_IN_PLACE, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    call chkerr('MPI_Allreduce IN_PLACE DOUBLE PRECISION SUM', ic, it)
    call chk(all(dr == dref), 'MPI_Allreduce IN_PLACE DOUBLE PRECISION SUM', ic, it)

    ! --- MPI_Allreduce INTEGER / MPI_MAX (and again in place)
    do i = 1, n
       iv(i) = mod(7 * rank + 3 * i + it, 11) - 5
       iref(i) = -huge(0)
       do r = 0, nproc - 1
          iref(i) = max(iref(i), mod(7 * r + 3 * i + it, 11) - 5)
       end do
    end do
    ir = -999
    call MPI_Allreduce(iv, ir, n, MPI_INTEGER, MPI_MAX, comm, ierr)
    call chkerr('MPI_Allreduce INTEGER MAX', ic, it)
    call chk(all(ir == iref), 'MPI_Allreduce INTEGER MAX', ic, it)
    ir = iv
    call MPI_Allreduce(MPI_IN_PLACE, ir, n, MPI_INTEGER, MPI_MAX, comm, ierr)
    call chkerr('MPI_Allreduce IN_PLACE INTEGER MAX', ic, it)
    call chk(all(ir == iref), 'MPI_Allreduce IN_PLACE INTEGER MAX', ic, it)

    ! --- MPI_Allreduce LOGICAL / MPI_LAND: element mod(r+it,n)+1 is false on rank r
    do i = 1, n
       lv(i) = i /= mod(rank + it, n) + 1
       lref(i) = .true.
       do r = 0, nproc - 1
          if (i == mod(r + it, n) + 1) lref(i) = .false.
       end do
    end do
    lr = .not. lref
    call MPI_Allreduce(lv, lr, n, MPI_LOGICAL, MPI_LAND, comm, ierr)
    call chkerr('MPI_Allreduce LOGICAL LAND', ic, it)
    do i = 1, n
       call chk(same_logical(lr(i), lref(i)), 'MPI_Allreduce LOGICAL LAND', ic, it)
    end do
    lr = lv
    call MPI_Allreduce(MPI_IN_PLACE, lr, n, MPI_LOGICAL, MPI_LAND, comm, ierr)
    call chkerr('MPI_Allreduce IN_PLACE LOGICAL LAND', ic, it)
    do i = 1, n
       call chk(same_logical(lr(i), lref(i)), 'MPI_Allreduce IN_PLACE LOGICAL LAND', ic, it)
    end do

    ! --- MPI_Bcast from a non-zero root (f08: without IERROR)
    do i = 1, n
       dref(i) = real(100 * it + 10 * root + i, dp)
    end do
    dr = -1
    if (rank == root) dr = dref
#if defined(USE_MPI_F08)
    call MPI_Bcast(dr, n, MPI_DOUBLE_PRECISION, root, comm)
#else
    call MPI_Bcast(dr, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
    call chkerr('MPI_Bcast', ic, it)
#endif
    call chk(all(dr == dref), 'MPI_Bcast', ic, it)

    ! --- MPI_Allgather
    do j = 1, m
       sm(j) = 1000 * rank + 10 * j + it
    end do
    ra = -999
    call MPI_Allgather(sm, m, MPI_INTEGER, ra, m, MPI_INTEGER, comm, ierr)
    call chkerr('MPI_Allgather', ic, it)
    do r = 0, nproc - 1
       do j = 1, m
          call chk(ra(j, r) == 1000 * r + 10 * j + it, 'MPI_Allgather', ic, it)
       end do
    end do

    ! --- MPI_Alltoall: block for rank r carries (me, r, j)
    do r = 0, nproc - 1
       do j = 1, m
          sa(j, r) = 10000 * rank + 100 * r + j + it
       end do
    end do
    ra = -999
    call MPI_Alltoall(sa, m, MPI_INTEGER, ra, m, MPI_INTEGER, comm, ierr)
    call chkerr('MPI_Alltoall', ic, it)
    do r = 0, nproc - 1
       do j = 1, m
          call chk(ra(j, r) == 10000 * r + 100 * rank + j + it, 'MPI_Alltoall', ic, it)
       end do
    end do

    ! --- MPI_Reduce DOUBLE PRECISION SUM to a non-zero root
    do i = 1, n
       dref(i) = real(nproc * (i + it) + nproc * (nproc - 1) / 2, dp)
    end do
    dr = -1
    call MPI_Reduce(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
    call chkerr('MPI_Reduce', ic, it)
    if (rank == root) call chk(all(dr == dref), 'MPI_Reduce', ic, it)
    if (rank /= root) call chk(all(dr == -1), 'MPI_Reduce wrote a non-root buffer', ic, it)

    ! --- MPI_Reduce with MPI_IN_PLACE at the root
    if (rank == root) then
       dr = d
       call MPI_Reduce(MPI_IN_PLACE, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
       call chkerr('MPI_Reduce IN_PLACE', ic, it)
       call chk(all(dr == dref), 'MPI_Reduce IN_PLACE', ic, it)
    else
       dummy = -1
       call MPI_Reduce(d, dummy, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
       call chkerr('MPI_Reduce IN_PLACE (non-root)', ic, it)
    end if

    ! --- MPI_Gather to the root
    do j = 1, m
       sm(j) = 1000 * rank + 10 * j + 2 * it
    end do
    ra = -999
    call MPI_Gather(sm, m, MPI_INTEGER, ra, m, MPI_INTEGER, root, comm, ierr)
    call chkerr('MPI_Gather', ic, it)
    if (rank == root) then
       do r = 0, nproc - 1
          do j = 1, m
             call chk(ra(j, r) == 1000 * r + 10 * j + 2 * it, 'MPI_Gather', ic, it)
          end do
       end do
    end if

    ! --- MPI_Scatter from the root
    sa = -999
    if (rank == root) then
       do r = 0, nproc - 1
          do j = 1, m
             sa(j, r) = 500 * r + j + 3 * it
          end do
       end do
    end if
    rm = -999
    call MPI_Scatter(sa, m, MPI_INTEGER, rm, m, MPI_INTEGER, root, comm, ierr)
    call chkerr('MPI_Scatter', ic, it)
    do j = 1, m
       call chk(rm(j) == 500 * rank + j + 3 * it, 'MPI_Scatter', ic, it)
    end do

    ! --- MPI_Barrier (f08: without IERROR)
#if defined(USE_MPI_F08)
    call MPI_Barrier(comm)
#else
    call MPI_Barrier(comm, ierr)
    call chkerr('MPI_Barrier', ic, it)
#endif

    ! --- MPI_Iallreduce + MPI_Wait (a status, or MPI_STATUS_IGNORE)
    do i = 1, n
       dref(i) = real(nproc * (i + it) + nproc * (nproc - 1) / 2, dp)
    end do
    dr = -1
    call MPI_Iallreduce(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, req, ierr)
    call chkerr('MPI_Iallreduce', ic, it)
    if (mod(it, 2) == 1) then
       call MPI_Wait(req, st, ierr)
    else
       call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    end if
    call chkerr('MPI_Wait', ic, it)
    call chk(req == MPI_REQUEST_NULL, 'MPI_Wait left the request set', ic, it)
    call chk(all(dr == dref), 'MPI_Iallreduce', ic, it)
    ! in place, completed with the other MPI_Wait form
    dr = d
    call MPI_Iallreduce(MPI_IN_PLACE, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, req, ierr)
    call chkerr('MPI_Iallreduce IN_PLACE', ic, it)
    if (mod(it, 2) == 0) then
       call MPI_Wait(req, st, ierr)
    else
       call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    end if
    call chkerr('MPI_Wait', ic, it)
    call chk(req == MPI_REQUEST_NULL, 'MPI_Wait left the request set', ic, it)
    call chk(all(dr == dref), 'MPI_Iallreduce IN_PLACE', ic, it)

    ! --- a status through the drop-in's Fortran MPI_Wait: a single
    ! completion leaves MPI_ERROR as the caller set it (MPI-4.1 3.2.5).
    ! STATUS_KEEPS_ERROR where the MPI itself does so (MPICH; Open MPI
    ! 4.1's Fortran MPI_Wait returns a stack word there)
    ST(MPI_ERROR) = MPI_ERR_DIMS
    ST(MPI_TAG) = -1
    rcv = -1
    call MPI_Irecv(rcv, 1, MPI_INTEGER, rank, 7 + it, comm, req, ierr)
    call MPI_Send(it, 1, MPI_INTEGER, rank, 7 + it, comm, ierr)
    call MPI_Wait(req, st, ierr)
    call chkerr('MPI_Wait on a receive', ic, it)
    call chk(rcv == it .and. ST(MPI_SOURCE) == rank .and. ST(MPI_TAG) == 7 + it, &
         'MPI_Wait status', ic, it)
#if defined(STATUS_KEEPS_ERROR)
    call chk(ST(MPI_ERROR) == MPI_ERR_DIMS, 'MPI_Wait changed MPI_ERROR', ic, it)
#endif

    ! --- MPI_Reduce MPI_MINLOC on MPI_2DOUBLE_PRECISION to the root
    ! pair 1: unique minimum on rank tgt; pair 2: a tie on every rank -> lowest rank
    tgt = mod(it + ic, nproc)
    p(1, 1) = real(abs(rank - tgt), dp) + 0.25_dp
    p(2, 1) = real(rank, dp)
    p(1, 2) = 7.5_dp
    p(2, 2) = real(rank, dp)
    pr = -1
    call MPI_Reduce(p, pr, 2, MPI_2DOUBLE_PRECISION, MPI_MINLOC, root, comm, ierr)
    call chkerr('MPI_Reduce MINLOC 2DOUBLE_PRECISION', ic, it)
    if (rank == root) then
       call chk(pr(1, 1) == 0.25_dp .and. pr(2, 1) == real(tgt, dp), &
            'MPI_Reduce MINLOC 2DOUBLE_PRECISION (unique minimum)', ic, it)
       call chk(pr(1, 2) == 7.5_dp .and. pr(2, 2) == 0.0_dp, &
            'MPI_Reduce MINLOC 2DOUBLE_PRECISION (tie -> lowest rank)', ic, it)
    end if

    ! --- MPI_Allreduce DOUBLE COMPLEX / MPI_SUM
    do i = 1, n
       z(i) = cmplx(rank + i, -(2 * rank + it), kind=dp)
       zref(i) = cmplx(nproc * i + nproc * (nproc - 1) / 2, &
            -(nproc * (nproc - 1) + nproc * it), kind=dp)
    end do
    zr = (-1.0_dp, -1.0_dp)
    call MPI_Allreduce(z, zr, n, MPI_DOUBLE_COMPLEX, MPI_SUM, comm, ierr)
    call chkerr('MPI_Allreduce DOUBLE_COMPLEX SUM', ic, it)
    call chk(all(zr == zref), 'MPI_Allreduce DOUBLE_COMPLEX SUM', ic, it)

    deallocate (sa, ra)
  end subroutine test_comm

  ! neighbourhood collectives on a 1-D periodic grid (MPI-4's pairing: block
  ! 1 from the left neighbour's block 2, block 2 from the right one's block
  ! 1, also when both are one rank or this one); with HAVE_PCOLL (MPICH 4)
  ! a persistent allreduce started twice and a persistent neighbour
  ! alltoall, then freed
  ! rank 0 with an allreduce open, the others after it: the blocking calls
  ! must let it finish. Each step's first blocking call is the one rank 0
  ! makes with the allreduce pending (what comes after it finds it done):
  !   1 MPI_Sendrecv_replace  2 windows  3 MPI_Intercomm_create
  !   4 MPI_File_set_size and collective I/O on a file opened before
  !   5 MPI_File_open (a name with blanks around it: trimmed)
  !   6 MPI_File_set_view (datarep 'native' with trailing blanks)
  !   7 MPI_Comm_disconnect of a dup made before
  !   8 MPI-4's MPI_Comm_create_from_group, then from np 2
  !     MPI_Intercomm_create_from_groups (HAVE_MPI4)
  !   9 MPI_Comm_spawn, an argument list (blanks around an argument,
  !     ended by a blank one before a last that must not be read) with the
  !     error codes, then MPI_ARGV_NULL with MPI_ERRCODES_IGNORE
  !  10 MPI_Comm_spawn_multiple, two commands (1 and 2 processes) with
  !     their argument lists (ARRAY_OF_ARGV(2, 3)), MPI_ERRCODES_IGNORE,
  !     then MPI_ARGVS_NULL with the error codes
  !     (9 and 10: HAVE_SPAWN, first round, when asked for: spawn)
  ! (windows from np 2: Open MPI 4.1 with self and vader has no one-sided
  ! component for one process; no data through them: Debian's MPICH 4.0.2
  ! on ch4:ucx loses puts even plain)
  subroutine test_pending(it)
    integer, intent(in) :: it
    REQ_T :: req
    WIN_T :: win
    FILE_T :: fh
    COMM_T :: local, inter, dupc
    integer, parameter :: nbig = 65536
    integer :: x(nbig), y(nbig), v, step, rs, tag, amode
    character(len=64) :: fname
    character(len=16) :: datarep
    logical :: ex
    integer :: cell(2)
    integer(kind=MPI_ADDRESS_KIND) :: wsz
    character(len=8) :: argv(5), argvs(2, 3)
    character(len=520) :: cmds(2)
    integer :: errs(2), nprocs(2)
    INFO_T :: infos(2)
#if defined(USE_MPI_F08)
    type(c_ptr) :: base
#else
    integer(kind=MPI_ADDRESS_KIND) :: base
#endif
#if defined(HAVE_MPI4)
#if defined(USE_MPI_F08)
    type(MPI_Group) :: wgroup, lgroup, rgroup
#else
    integer :: wgroup, lgroup, rgroup
#endif
    integer :: ranges(3, 1), sz
#endif
    ! a file name all ranks share, new each run
    call system_clock(tag)
    call MPI_Bcast(tag, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    write (fname, '(a,i0)') '/tmp/vcoll_mpi_coll_f.', tag
    amode = ior(ior(MPI_MODE_CREATE, MPI_MODE_RDWR), MPI_MODE_DELETE_ON_CLOSE)
    datarep = 'native'
    do step = 1, 10
#if !defined(HAVE_MPI4)
       if (step == 8) cycle
#endif
       if (step >= 9 .and. (.not. spawn .or. it > 1)) cycle
       x = wrank + it + step
       if (step == 4 .or. step == 6) then
          call MPI_File_open(MPI_COMM_WORLD, fname, amode, MPI_INFO_NULL, fh, ierr)
          call chkerr('MPI_File_open', 0, it)
       end if
       if (step == 7) then
          call MPI_Comm_dup(MPI_COMM_WORLD, dupc, ierr)
          call chkerr('MPI_Comm_dup', 0, it)
       end if
       call open_allreduce(x, y, nbig, req, it)
       select case (step)
       case (1)
          v = 11 * wrank + it
          call MPI_Sendrecv_replace(v, 1, MPI_INTEGER, mod(wrank + 1, wsize), 4, &
               mod(wrank - 1 + wsize, wsize), 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
          call chkerr('MPI_Sendrecv_replace', 0, it)
          call chk(v == 11 * mod(wrank - 1 + wsize, wsize) + it, 'MPI_Sendrecv_replace', 0, it)
       case (2)
          if (wsize > 1) then
             wsz = 8
             call MPI_Win_create(cell, wsz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
             call chkerr('MPI_Win_create', 0, it)
             call MPI_Win_fence(0, win, ierr)
             call chkerr('MPI_Win_fence', 0, it)
             call MPI_Win_fence(0, win, ierr)
             call MPI_Win_lock(MPI_LOCK_SHARED, mod(wrank + 1, wsize), 0, win, ierr)
             call chkerr('MPI_Win_lock', 0, it)
             call MPI_Win_flush(mod(wrank + 1, wsize), win, ierr)
             call chkerr('MPI_Win_flush', 0, it)
             call MPI_Win_unlock(mod(wrank + 1, wsize), win, ierr)
             call chkerr('MPI_Win_unlock', 0, it)
             call MPI_Win_free(win, ierr)
             call chkerr('MPI_Win_free', 0, it)
             call chk(win == MPI_WIN_NULL, 'MPI_Win_free: handle not MPI_WIN_NULL', 0, it)
             wsz = 64
             call MPI_Win_allocate(wsz, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
             call chkerr('MPI_Win_allocate', 0, it)
             call MPI_Win_lock_all(0, win, ierr)
             call MPI_Win_flush_all(win, ierr)
             call MPI_Win_unlock_all(win, ierr)
             call chkerr('MPI_Win_unlock_all', 0, it)
             call MPI_Win_free(win, ierr)
             call chk(win == MPI_WIN_NULL, 'MPI_Win_free (allocated)', 0, it)
          end if
       case (3)
          if (wsize > 1) then
             call MPI_Comm_split(MPI_COMM_WORLD, mod(wrank, 2), wrank, local, ierr)
             call MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - mod(wrank, 2), 7, &
                  inter, ierr)
             call chkerr('MPI_Intercomm_create', 0, it)
             call MPI_Comm_remote_size(inter, rs, ierr)
             call chk(rs == (wsize + mod(wrank, 2)) / 2, 'MPI_Intercomm_create: remote size', &
                  0, it)
             call MPI_Comm_free(inter, ierr)
             call MPI_Comm_free(local, ierr)
          end if
       case (4)
          call MPI_File_set_size(fh, 0_MPI_OFFSET_KIND, ierr)
          call chkerr('MPI_File_set_size', 0, it)
          call MPI_File_set_atomicity(fh, .false., ierr)
          call chkerr('MPI_File_set_atomicity', 0, it)
          call file_io(fh, 4, it)
       case (5)
          call MPI_File_open(MPI_COMM_WORLD, '  ' // trim(fname) // '  ', amode, &
               MPI_INFO_NULL, fh, ierr)
          call chkerr('MPI_File_open (blanks around the name)', 0, it)
          inquire (file=trim(fname), exist=ex)
          call chk(ex, 'MPI_File_open: the file is not there by its trimmed name', 0, it)
          call file_io(fh, 4, it)
       case (6)
          call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, &
               datarep, MPI_INFO_NULL, ierr)
          call chkerr('MPI_File_set_view', 0, it)
          call file_io(fh, 1, it)
       case (7)
          call MPI_Comm_disconnect(dupc, ierr)
          call chkerr('MPI_Comm_disconnect', 0, it)
          call chk(dupc == MPI_COMM_NULL, 'MPI_Comm_disconnect: handle not MPI_COMM_NULL', &
               0, it)
#if defined(HAVE_MPI4)
       case (8)
          call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
          call MPI_Comm_create_from_group(wgroup, 'org.vcoll.test.pending  ', &
               MPI_INFO_NULL, MPI_ERRORS_RETURN, dupc, ierr)
          call chkerr('MPI_Comm_create_from_group', 0, it)
          call MPI_Comm_size(dupc, sz, ierr)
          call chk(sz == wsize, 'MPI_Comm_create_from_group: size', 0, it)
          call MPI_Comm_free(dupc, ierr)
          if (wsize > 1) then
             ! even ranks and odd ranks, each the other's remote group
             ranges(:, 1) = (/ mod(wrank, 2), wsize - 1, 2 /)
             call MPI_Group_range_incl(wgroup, 1, ranges, lgroup, ierr)
             ranges(:, 1) = (/ 1 - mod(wrank, 2), wsize - 1, 2 /)
             call MPI_Group_range_incl(wgroup, 1, ranges, rgroup, ierr)
             call MPI_Intercomm_create_from_groups(lgroup, 0, rgroup, 0, &
                  'org.vcoll.test.inter', MPI_INFO_NULL, MPI_ERRORS_RETURN, inter, ierr)
             call chkerr('MPI_Intercomm_create_from_groups', 0, it)
             call MPI_Comm_remote_size(inter, rs, ierr)
             call chk(rs == (wsize + mod(wrank, 2)) / 2, &
                  'MPI_Intercomm_create_from_groups: remote size', 0, it)
             call MPI_Comm_free(inter, ierr)
             call MPI_Group_free(lgroup, ierr)
             call MPI_Group_free(rgroup, ierr)
          end if
          call MPI_Group_free(wgroup, ierr)
#endif
#if defined(HAVE_SPAWN)
       case (9)
          argv = [character(len=8) :: 'c1', '  a b  ', 'three', ' ', 'junk']
          errs = -1
          call MPI_Comm_spawn('  ' // trim(prog) // ' ', argv, 1, MPI_INFO_NULL, 0, &
               MPI_COMM_WORLD, inter, errs, ierr)
          call chkerr('MPI_Comm_spawn', 0, it)
          call chk(errs(1) == MPI_SUCCESS, 'MPI_Comm_spawn: error code', 0, it)
          call children(inter, 1, 'MPI_Comm_spawn', it)
          call MPI_Comm_spawn(prog, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &
               inter, MPI_ERRCODES_IGNORE, ierr)
          call chkerr('MPI_Comm_spawn (MPI_ARGV_NULL)', 0, it)
          call children(inter, 1, 'MPI_Comm_spawn (MPI_ARGV_NULL)', it)
       case (10)
          cmds(1) = prog
          cmds(2) = ' ' // prog
          argvs = ' '
          argvs(1, 1) = 'm1'
          argvs(1, 3) = 'junk'
          argvs(2, 1) = 'm2'
          argvs(2, 2) = ' x y'
          nprocs = [1, 2]
          infos = MPI_INFO_NULL
          call MPI_Comm_spawn_multiple(2, cmds, argvs, nprocs, infos, 0, MPI_COMM_WORLD, &
               inter, MPI_ERRCODES_IGNORE, ierr)
          call chkerr('MPI_Comm_spawn_multiple', 0, it)
          call children(inter, 3, 'MPI_Comm_spawn_multiple', it)
          nprocs = [1, 1]
          errs = -1
          call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, nprocs, infos, 0, &
               MPI_COMM_WORLD, inter, errs, ierr)
          call chkerr('MPI_Comm_spawn_multiple (MPI_ARGVS_NULL)', 0, it)
          call chk(all(errs == MPI_SUCCESS), 'MPI_Comm_spawn_multiple: error codes', 0, it)
          call children(inter, 2, 'MPI_Comm_spawn_multiple (MPI_ARGVS_NULL)', it)
#endif
       end select
       if (wrank == 0) call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
       call chkerr('MPI_Wait (pending)', 0, it)
       call chk(all(y == wsize * (wsize - 1) / 2 + (it + step) * wsize), &
            'pending MPI_Iallreduce', 0, it)
    end do
  end subroutine test_pending

  ! a large allreduce that world rank 0 starts first (the others on its
  ! word, then wait for it here): rank 0 cannot finish its part at its
  ! start, so the others' waits need it to keep moving inside the blocking
  ! call it makes next
  subroutine open_allreduce(x, y, n, req, it)
    integer, intent(in) :: n, it
    integer :: x(n), y(n)
    REQ_T, intent(out) :: req
    integer :: r, v
    if (wrank == 0) then
       call MPI_Iallreduce(x, y, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
       do r = 1, wsize - 1
          call MPI_Send(r, 1, MPI_INTEGER, r, 3, MPI_COMM_WORLD, ierr)
       end do
    else
       call MPI_Recv(v, 1, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
       call MPI_Iallreduce(x, y, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    end if
    call chkerr('MPI_Iallreduce (pending)', 0, it)
    if (wrank /= 0) call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  end subroutine open_allreduce

#if defined(HAVE_SPAWN)
  ! the parents' side of a spawn: n children, each of which sends world
  ! rank 0 whether its arguments were the ones its command was given
  subroutine children(inter, n, what, it)
    COMM_T, intent(inout) :: inter
    integer, intent(in) :: n, it
    character(len=*), intent(in) :: what
    integer :: rs, i, ok
    call MPI_Comm_remote_size(inter, rs, ierr)
    call chk(rs == n, what // ': number of children', 0, it)
    if (wrank == 0) then
       do i = 1, n
          call MPI_Recv(ok, 1, MPI_INTEGER, MPI_ANY_SOURCE, 9, inter, MPI_STATUS_IGNORE, ierr)
          call chkerr(what // ': a child''s report', 0, it)
          call chk(ok == 1, what // ': a child got other arguments', 0, it)
       end do
    end if
    call MPI_Comm_disconnect(inter, ierr)
    call chkerr(what // ': MPI_Comm_disconnect', 0, it)
  end subroutine children

  ! a spawned child: its arguments by its first one (none: MPI_ARGV_NULL or
  ! MPI_ARGVS_NULL), blanks around each dropped, the list ended at the
  ! blank element
  subroutine spawned(parent)
    COMM_T, intent(inout) :: parent
    character(len=16) :: a(3)
    integer :: n, i, ok, e
    n = command_argument_count()
    a = ' '
    do i = 1, min(n, 3)
       call get_command_argument(i, a(i))
    end do
    select case (a(1))
    case (' ')
       ok = merge(1, 0, n == 0)
    case ('c1')
       ok = merge(1, 0, n == 3 .and. a(2) == 'a b' .and. a(3) == 'three')
    case ('m1')
       ok = merge(1, 0, n == 1)
    case ('m2')
       ok = merge(1, 0, n == 2 .and. a(2) == 'x y')
    case default
       ok = 0
    end select
    if (ok /= 1) write (*, '(a,i0,3(a,a,a))') 'spawned child: ', n, &
         (' [', trim(a(i)), ']', i = 1, 3)
    call MPI_Send(ok, 1, MPI_INTEGER, 0, 9, parent, e)
    call MPI_Comm_disconnect(parent, e)
  end subroutine spawned
#endif

#if defined(HAVE_PORTS)
  ! the even world ranks accept on a port world rank 0 opened, the odd ones
  ! connect to it; the port name goes through as MPI_Open_port gave it
  ! (blank-padded) on one side and with leading blanks on the other (both
  ! MPIs trim both ends). The two leaders swap their world ranks over the
  ! intercommunicator, then both sides disconnect. World rank 0 enters
  ! accept with an allreduce open, the others after waiting for it (as in
  ! test_pending): plain Open MPI 4.1 hangs there, as it does not move its
  ! own non-blocking collectives while it waits in the process manager.
  subroutine test_ports()
    character(len=MPI_MAX_PORT_NAME) :: port
    COMM_T :: local, inter
    REQ_T :: req
    integer, parameter :: nbig = 65536
    integer :: x(nbig), y(nbig)
    integer :: lrank, rs, v
    if (wsize < 2) return
    if (wrank == 0) then
       call MPI_Open_port(MPI_INFO_NULL, port, ierr)
       call chkerr('MPI_Open_port', 0, 1)
    end if
    call MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Comm_split(MPI_COMM_WORLD, mod(wrank, 2), wrank, local, ierr)
    call MPI_Comm_rank(local, lrank, ierr)
    x = wrank
    call open_allreduce(x, y, nbig, req, 1)
    if (mod(wrank, 2) == 0) then
       call MPI_Comm_accept(port, MPI_INFO_NULL, 0, local, inter, ierr)
       call chkerr('MPI_Comm_accept', 0, 1)
    else
       call MPI_Comm_connect('   ' // trim(port), MPI_INFO_NULL, 0, local, inter, ierr)
       call chkerr('MPI_Comm_connect (leading blanks)', 0, 1)
    end if
    if (wrank == 0) call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call chk(all(y == wsize * (wsize - 1) / 2), 'MPI_Iallreduce open in accept', 0, 1)
    call MPI_Comm_remote_size(inter, rs, ierr)
    call chk(rs == (wsize + mod(wrank, 2)) / 2, 'accept/connect: remote size', 0, 1)
    if (lrank == 0) then
       call MPI_Sendrecv(wrank, 1, MPI_INTEGER, 0, 5, v, 1, MPI_INTEGER, 0, 5, inter, &
            MPI_STATUS_IGNORE, ierr)
       call chkerr('MPI_Sendrecv over the accepted intercommunicator', 0, 1)
       call chk(v == 1 - mod(wrank, 2), 'accept/connect: the other leader', 0, 1)
    end if
    call MPI_Comm_disconnect(inter, ierr)
    call chkerr('MPI_Comm_disconnect (accepted)', 0, 1)
    call chk(inter == MPI_COMM_NULL, 'MPI_Comm_disconnect: handle not MPI_COMM_NULL', 0, 1)
    call MPI_Comm_free(local, ierr)
    if (wrank == 0) then
       call MPI_Close_port(port, ierr)
       call chkerr('MPI_Close_port', 0, 1)
    end if
  end subroutine test_ports
#endif

  ! collective file I/O on fh, then its close: each rank writes its value
  ! at its place, then reads its right neighbour's (sync, barrier, sync);
  ! per: offset units per INTEGER (4 without a view, where offsets count
  ! bytes; 1 with an MPI_INTEGER one, where they count INTEGERs)
  subroutine file_io(fh, per, it)
    FILE_T, intent(inout) :: fh
    integer, intent(in) :: per, it
    integer(kind=MPI_OFFSET_KIND) :: off
    integer :: v, w
    off = per * wrank
    v = 1000 + wrank + it
    call MPI_File_write_at_all(fh, off, v, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call chkerr('MPI_File_write_at_all', 0, it)
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    off = per * mod(wrank + 1, wsize)
    w = -1
    call MPI_File_read_at_all(fh, off, w, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call chkerr('MPI_File_read_at_all', 0, it)
    call MPI_File_close(fh, ierr)
    call chkerr('MPI_File_close', 0, it)
    call chk(fh == MPI_FILE_NULL, 'MPI_File_close: handle not MPI_FILE_NULL', 0, it)
    call chk(w == 1000 + mod(wrank + 1, wsize) + it, 'MPI_File_read_at_all', 0, it)
  end subroutine file_io

  subroutine test_topo(it)
    integer, intent(in) :: it
    COMM_T :: cart
    REQ_T :: req
    integer :: dims(1), s(2), r(2), g(2), left, right, k, x, y
    logical :: periods(1)
    dims(1) = wsize
    periods(1) = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
    call chkerr('MPI_Cart_create', 0, it)
    left = mod(wrank - 1 + wsize, wsize)
    right = mod(wrank + 1, wsize)
    s = [10 * wrank + 1 + 100 * it, 10 * wrank + 2 + 100 * it]
    r = -1
    call MPI_Neighbor_alltoall(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, cart, ierr)
    call chkerr('MPI_Neighbor_alltoall', 0, it)
    call chk(r(1) == 10 * left + 2 + 100 * it .and. r(2) == 10 * right + 1 + 100 * it, &
         'MPI_Neighbor_alltoall', 0, it)
    g = -1
    call MPI_Ineighbor_allgather(s(1), 1, MPI_INTEGER, g, 1, MPI_INTEGER, cart, req, ierr)
    call chkerr('MPI_Ineighbor_allgather', 0, it)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call chk(g(1) == 10 * left + 1 + 100 * it .and. g(2) == 10 * right + 1 + 100 * it, &
         'MPI_Ineighbor_allgather', 0, it)
#if defined(HAVE_PCOLL)
    call MPI_Allreduce_init(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
         req, ierr)
    call chkerr('MPI_Allreduce_init', 0, it)
    do k = 1, 2
       x = wrank + k
       call MPI_Start(req, ierr)
       call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
       call chk(y == wsize * (wsize - 1) / 2 + k * wsize, 'persistent allreduce', 0, it)
    end do
    call MPI_Request_free(req, ierr)
    call chkerr('MPI_Request_free', 0, it)
    call MPI_Neighbor_alltoall_init(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, cart, &
         MPI_INFO_NULL, req, ierr)
    do k = 1, 2
       s = [10 * wrank + 1 + 1000 * k, 10 * wrank + 2 + 1000 * k]
       call MPI_Start(req, ierr)
       call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
#if defined(OMPI_PCOLL)
       ! Open MPI 4.1's own persistent form pairs the blocks the pre-MPI-4
       ! way when both neighbours are one rank (np <= 2): where it is the
       ! MPI's (mpi_f08's Cartesian communicator falls back), check the
       ! unambiguous case only
       if (wsize > 2) &
#endif
       call chk(r(1) == 10 * left + 2 + 1000 * k .and. r(2) == 10 * right + 1 + 1000 * k, &
            'persistent MPI_Neighbor_alltoall', 0, it)
    end do
    call MPI_Request_free(req, ierr)
#else
    k = 0
    x = 0
    y = 0
#endif
    call MPI_Comm_free(cart, ierr)
    call test_dgraph(it, left, right)
  end subroutine test_topo

  ! distributed graphs made with the weights sentinels: Fortran's
  ! MPI_UNWEIGHTED is the address of the MPI's own object, which the
  ! drop-in's Fortran entries must hand to C as C's MPI_UNWEIGHTED (else
  ! the graph is weighted, with whatever that object holds); real weights
  ! pass unchanged
  subroutine test_dgraph(it, left, right)
    integer, intent(in) :: it, left, right
    COMM_T :: dg
    integer :: nb(2), g(2), w(2), one(1), deg(1), indeg, outdeg, v
    logical :: weighted
    nb = [left, right]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb, &
         MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dg, ierr)
    call chkerr('MPI_Dist_graph_create_adjacent', 0, it)
    call MPI_Dist_graph_neighbors_count(dg, indeg, outdeg, weighted, ierr)
    call chk(indeg == 2 .and. outdeg == 2 .and. .not. weighted, &
         'MPI_Dist_graph_create_adjacent with MPI_UNWEIGHTED', 0, it)
    g = -1
    v = 10 * wrank + 1 + 100 * it
    call MPI_Neighbor_allgather(v, 1, MPI_INTEGER, g, 1, MPI_INTEGER, dg, ierr)
    call chk(g(1) == 10 * left + 1 + 100 * it .and. g(2) == 10 * right + 1 + 100 * it, &
         'MPI_Neighbor_allgather on a distributed graph', 0, it)
    call MPI_Comm_free(dg, ierr)
    one(1) = wrank
    deg(1) = 2
    call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, one, deg, nb, MPI_UNWEIGHTED, &
         MPI_INFO_NULL, .false., dg, ierr)
    call chkerr('MPI_Dist_graph_create', 0, it)
    call MPI_Dist_graph_neighbors_count(dg, indeg, outdeg, weighted, ierr)
    call chk(indeg == 2 .and. outdeg == 2 .and. .not. weighted, &
         'MPI_Dist_graph_create with MPI_UNWEIGHTED', 0, it)
    call MPI_Comm_free(dg, ierr)
    w = [3, 4]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, w, 2, nb, w, &
         MPI_INFO_NULL, .false., dg, ierr)
    call chkerr('MPI_Dist_graph_create_adjacent with weights', 0, it)
    call MPI_Dist_graph_neighbors_count(dg, indeg, outdeg, weighted, ierr)
    call chk(indeg == 2 .and. outdeg == 2 .and. weighted, &
         'MPI_Dist_graph_create_adjacent with weights', 0, it)
    call MPI_Comm_free(dg, ierr)
  end subroutine test_dgraph

end program mpi_coll_f
