#!/bin/bash
# slurm-local.sh -- a single-node Slurm on this machine, for testing
# `srun --mpi=pmix` without a cluster.  Usage: slurm-local.sh [start|stop|status]
# Starts munged, slurmctld and slurmd by hand (works without systemd) and
# waits until the node is idle. Idempotent.
set -eu
cmd=${1:-start}
conf=/etc/slurm/slurm.conf
cpus=${SLURM_LOCAL_CPUS:-8}   # advertise more CPUs than cores: tests oversubscribe

install_pkgs() {
    local need=()
    for p in slurmctld slurmd slurm-client munge libpmix-dev; do
        dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
    done
    [ ${#need[@]} -eq 0 ] && return
    echo "slurm-local: installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "${need[@]}" >/dev/null ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
          apt-get -o DPkg::Lock::Timeout=600 install -y -q "${need[@]}" >/dev/null; }
}

write_conf() {
    mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
    local tmp
    tmp=$(mktemp)
    cat > "$tmp" <<CONF
# written by vcoll contrib/slurm-local.sh
ClusterName=vcolltest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    if ! cmp -s "$tmp" "$conf"; then
        mv "$tmp" "$conf"
        return 0     # changed: daemons must restart
    fi
    rm -f "$tmp"
    return 1
}

stop() {
    pkill -x slurmd 2>/dev/null || true
    pkill -x slurmctld 2>/dev/null || true
    for _ in $(seq 50); do pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break; sleep 0.1; done
}

start() {
    install_pkgs
    if write_conf; then stop; fi
    if ! pgrep -x munged >/dev/null; then
        mkdir -p -m755 /run/munge && chown munge:munge /run/munge
        [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null;
            chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
        runuser -u munge -- /usr/sbin/munged --force
    fi
    pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld -i
    pgrep -x slurmd >/dev/null || /usr/sbin/slurmd -N localhost
    for _ in $(seq 150); do
        state=$(sinfo -h -N -o %T 2>/dev/null || true)
        case $state in idle*|mixed*|allocated*) echo "slurm-local: node is $state"; return 0 ;; esac
        sleep 0.2
    done
    echo "slurm-local: the node did not become idle (see /var/log/slurm/)" >&2
    return 1
}

case $cmd in
start) start ;;
stop) stop ;;
restart) stop; start ;;
status) sinfo -N 2>/dev/null || { echo "no slurmctld"; exit 1; } ;;
*) echo "usage: $0 [start|stop|restart|status]" >&2; exit 2 ;;
esac
