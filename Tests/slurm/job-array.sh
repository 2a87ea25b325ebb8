#!/usr/bin/env bash
# job-array.sh WORK ROWS -- COMMAND...: starts a Slurm of one node (Debian's slurmctld, slurmd
# and munge) in WORK, as root, configured there and nowhere else (its own ports and munge
# socket), submits COMMAND as a job array of ROWS tasks (sbatch --array, waited for), and
# stops every daemon it started, whatever happens. Exits with sbatch's status, or 77 with a
# line saying why when Slurm cannot start here. Each task's output is in WORK/task-N.out.
# The settings are the ones a single node starts with in a container: process tracking by
# /proc (no cgroups) and no task plugin, munged forced to run as root.
set -euo pipefail
work=$1 rows=$2
shift 3
not_run() { echo "NOT RUN: $*"; exit 77; }
for tool in munged slurmctld slurmd sbatch scontrol; do
  command -v "$tool" > /dev/null || not_run "$tool is not installed (Debian: munge slurmctld slurmd slurm-client)"
done
[ "$(id -u)" = 0 ] || not_run "a Slurm of its own starts as root"
mkdir -p "$work"/{state,spool,munge}
chmod 700 "$work/munge"
head -c 1024 /dev/urandom > "$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"

daemons=()
stop_daemons() {
  for pid in "${daemons[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2> /dev/null || true
  done
}
trap stop_daemons EXIT

socket=$work/munge/munge.socket
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/munge.seed" &
daemons+=($!)

host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
export SLURM_CONF=$work/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=dualcamtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=batch Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || not_run "munged did not start: $(tail -n 3 "$work/munged.log" 2> /dev/null)"
slurmctld -D -c -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" > "$work/slurmd.out" 2>&1 &
daemons+=($!)
idle() { scontrol show node "$host" 2> /dev/null | grep -q 'State=IDLE'; }
for _ in $(seq 300); do idle && break; sleep 0.1; done
idle || not_run "Slurm's node is not up after 30 s: $(tail -n 3 "$work/slurmctld.log" "$work/slurmd.log" 2> /dev/null | tr '\n' ' ')"
echo "slurm: one node, $(nproc) CPUs, up in ${SECONDS} s"

printf -v command '%q ' "$@"
status=0
sbatch --wait --quiet --array="0-$((rows - 1))" --cpus-per-task=1 --output="$work/task-%a.out" --wrap "$command" || status=$?
echo "slurm: $rows tasks ended, sbatch exit $status, after ${SECONDS} s"
exit "$status"
