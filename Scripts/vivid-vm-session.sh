# Sourced by vivid-vm.sh when VIVID_VM_SESSION is set: one VM runs the commands of a session
# one after another, each from fresh devices, instead of a VM booted for each. Under TCG a boot
# and the first start of dualcam cost about 10 s of every camera scenario.
#
# VIVID_VM_SESSION=PID: the process the session belongs to (the test run). The VM ends when
# that process ends, or after VIVID_VM_IDLE seconds (default 60) with no command.
#
# Between two commands the guest kills every process the last one left, unloads the modules a
# command may have loaded (v4l2loopback, vivid, snd-aloop, snd-dummy) and mounts a fresh /run
# and /dev/shm, then loads vivid with this command's options: each command sees the devices a
# VM booted for it would show. The host root stays mounted, so its page cache (and the
# emulator's translations of what it holds) carry over from one command to the next.
#
# Files: $CACHE/session.PID/ is shared as the guest's /xfer; jobs/N/ holds command N (cmd.sh,
# vivid-opts, then ready), and the guest writes its out, err and rc there. Clients take turns
# on $CACHE/session.PID.lock; the watchdog takes it too before it ends an idle VM.

session_alive() {  # whether the session's VM is running
  local pid
  pid=$(cat "$session/qemu.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && grep -q qemu-system "/proc/$pid/cmdline" 2>/dev/null
}

# SIGKILL, to the VM's process group: a test process's threads block SIGTERM, and the mask
# passes down to every process it starts, so qemu never saw a SIGTERM (nor would timeout's).
# The guest's files are synced after each command, so nothing is lost with it.
session_stop() {
  local pid
  pid=$(cat "$session/qemu.pid" 2>/dev/null) || true
  [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$session/qemu.pid"
}

# Runs "$@" in a session of its own (its process id into $1, the session's too), with none of this script's descriptors but 0-2: the
# test process learns that a child ended when its socket (Foundation's Process) closes, and a
# VM that had inherited it held the test for as long as the VM lived.
# In the background here, not by its caller: `detach ... &` would run in a subshell of this
# script that holds the lock for as long as the VM lives.
detach() {
  setsid bash -c 'echo $$ > "$1"; shift
    for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
    exec "$@"' detached "$@" &
  disown $!
}

session_start() {
  rm -rf "$session"
  mkdir -p "$session/jobs"
  cat > "$session/stage2.sh" <<EOF
# runs in the initramfs (busybox sh, pid != 1): the commands of jobs/ in turn
hostname vivid-vm
$guest_mounts
# Every process but init and this loop (kernel threads have no exe and ignore signals).
leftovers() {
  for p in /proc/[0-9]*; do
    p=\${p#/proc/}
    [ "\$p" != 1 ] && [ "\$p" != \$\$ ] && [ -e /proc/\$p/exe ] && echo \$p
  done
}
# (Listed into a file: a command substitution's own subshell would list itself.)
kill_leftovers() {
  for i in \$(seq 50); do
    leftovers > /tmp/leftovers
    [ -s /tmp/leftovers ] || return 0
    kill -9 \$(cat /tmp/leftovers) 2>/dev/null
    sleep 0.1
  done
  echo "vivid-vm: processes outlived the command:" \$(cat /tmp/leftovers)
}
unload_devices() {
  for i in \$(seq 50); do
    loaded=
    for m in v4l2loopback vivid snd_aloop snd_dummy; do
      [ -d /sys/module/\$m ] && { rmmod \$m 2>/dev/null || loaded="\$loaded \$m"; }
    done
    [ -z "\$loaded" ] && return 0
    sleep 0.1
  done
  echo "vivid-vm: could not unload\$loaded"
}
# The host says "ready" on the ctl port: waiting there costs the emulated CPUs nothing, where
# polling the 9p share took most of one host CPU from the tests running meanwhile.
for p in /sys/class/virtio-ports/*; do [ "\$(cat \$p/name)" = ctl ] && exec 3< /dev/\${p##*/}; done
n=0
while :; do
  job=/xfer/jobs/\$n
  until [ -f \$job/ready ]; do read -r _ <&3 || sleep 1; done
  kill_leftovers > \$job/err
  unload_devices >> \$job/err
  fresh_run
  opts=\$(cat \$job/vivid-opts)
  if [ -n "\$opts" ]; then
    modprobe vivid \$opts || echo "vivid-vm: modprobe vivid \$opts failed" >> \$job/err
  fi
  echo "vivid-vm: command \$n starts at uptime \$(cut -d' ' -f1 /proc/uptime)s"
  chroot /host /bin/bash "$session/jobs/\$n/cmd.sh" < /dev/null > \$job/out 2>> \$job/err 3<&-
  echo \$? > \$job/rc.new
  echo "vivid-vm: command \$n exited with \$(cat \$job/rc.new) at uptime \$(cut -d' ' -f1 /proc/uptime)s"
  kill_leftovers >> \$job/err
  sync
  mv \$job/rc.new \$job/rc
  n=\$((n + 1))
done
EOF
  qemu_args "$session"
  mkfifo "$session/ctl.in" "$session/ctl.out"
  qemu+=(-chardev pipe,id=ctl,path="$session/ctl" -device virtserialport,chardev=ctl,name=ctl)
  detach "$session/qemu.pid.new" timeout -s KILL 10800 qemu-system-x86_64 "${qemu[@]}" </dev/null >"$session/qemu.log" 2>&1
  until [ -s "$session/qemu.pid.new" ]; do sleep 0.05; done
  mv "$session/qemu.pid.new" "$session/qemu.pid"
  touch "$session/idle-since"
  detach "$session/watchdog.pid" bash -c "$(declare -f session_watchdog); session_watchdog \"\$@\"" watchdog \
    "$VIVID_VM_SESSION" "$session" "${VIVID_VM_IDLE:-60}" "$(cat "$session/qemu.pid")" </dev/null >/dev/null 2>&1
}

# Ends the VM when its owner has ended, or when it has had no command for IDLE seconds (under
# the clients' lock, so never while one is submitting or waiting).
session_watchdog() {
  local owner=$1 session=$2 idle=$3 qemu=$4 lock
  while kill -0 "$qemu" 2>/dev/null; do
    sleep 1
    kill -0 "$owner" 2>/dev/null || break
    exec {lock}>"$session.lock"
    if flock -n "$lock"; then
      if [ $(($(date +%s) - $(stat -c %Y "$session/idle-since" 2>/dev/null || echo 0))) -gt "$idle" ]; then break; fi
    fi
    exec {lock}>&-
  done
  kill -KILL -- "-$qemu" 2>/dev/null
  # Unless a client has started another VM in its place.
  [ "$(cat "$session/qemu.pid" 2>/dev/null)" = "$qemu" ] && rm -rf "$session"
  # No client can come once the owner has gone.
  kill -0 "$owner" 2>/dev/null || rm -f "$session.lock"
}

run_in_session() {
  [[ $VIVID_VM_SESSION =~ ^[0-9]+$ ]] || die "VIVID_VM_SESSION must be the process id the VM lives for"
  session=$CACHE/session.$VIVID_VM_SESSION
  exec {lock}>"$session.lock"
  flock "$lock"
  session_alive || session_start
  local n job console_from waited=0 rc
  n=$(find "$session/jobs" -mindepth 1 -maxdepth 1 | wc -l)
  job=$session/jobs/$n
  mkdir "$job"
  write_command "$job/cmd.sh" "$@"
  printf '%s' "$vivid_opts" > "$job/vivid-opts"
  console_from=$(stat -c %s "$session/console.log" 2>/dev/null || echo 0)
  trap 'log "interrupted"; session_stop; exit 130' INT TERM HUP
  touch "$job/ready"
  # Read-write, so that the open never waits for a reader, as it would if the VM had died.
  exec {ctl}<>"$session/ctl.in"
  echo ready >&"$ctl"
  exec {ctl}>&-
  # The command's limit counts from here, the boot included when this command started the VM.
  until [ -f "$job/rc" ]; do
    if ! session_alive; then
      log "VM ended without an exit code"; rc=125; break
    fi
    if [ "$waited" -ge $((TIMEOUT * 10)) ]; then
      log "timed out after ${TIMEOUT}s (VIVID_VM_TIMEOUT); qemu killed"; rc=124; session_stop; break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  cat "$job/out" 2>/dev/null || true
  cat "$job/err" >&2 2>/dev/null || true
  if [ -z "${rc:-}" ]; then
    rc=$(cat "$job/rc")
    touch "$session/idle-since"
  fi
  if [ "$verbose" = 1 ] || [ "$rc" = 124 ] || [ "$rc" = 125 ]; then
    log "---- guest console since this command ($ACCEL_USED, cpu=$cpu, ${MEM}MiB, smp=$SMP) ----"
    tail -c +$((console_from + 1)) "$session/console.log" 2>/dev/null | tr -d '\r' | tail -n 40 >&2 || true
  fi
  exit "$rc"
}
