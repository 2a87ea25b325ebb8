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
# VM booted for it would show. A driver that cannot be unloaded ends the VM after that command
# (its result stands), and the next command boots a new one. The host root stays mounted, so
# its page cache (and the emulator's translations of what it holds) carry over from one
# command to the next; with the default cache=loose a file the host rewrites in place after a
# command of the session read it can look unchanged to the next (new files are seen): the
# tests write into new folders and change no program during a run. What else a command
# changes in the guest (sysctls, mounts outside /run and /dev/shm, dmesg) carries over. The
# command's output comes back when it ends, from files (not a terminal or a pipe).
#
# Files: $CACHE/session.PID/ (mode 700: each command's environment is there) is shared as the
# guest's /xfer; jobs/N/ holds command N (cmd.sh, vivid-opts, then ready), and the guest writes
# its out, err and rc there. Clients take turns on $CACHE/session.PID.lock; the watchdog takes
# it too before it ends an idle VM or removes the folder.

session_vm() {  # the session's VM's process id, if it is running
  local pid
  pid=$(cat "$session/qemu.pid" 2>/dev/null) && [ -n "$pid" ] && grep -q qemu-system "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

session_alive() { [ ! -f "$session/retired" ] && session_vm > /dev/null; }  # and takes commands

session_commands() { find "$session/jobs" -mindepth 1 -maxdepth 1 | wc -l; }

# Whether the next command can go to the running VM: it takes commands, it was booted with
# the settings asked now, and its last command has ended. A command whose client ended before
# its exit code (killed, or stopped between making its folder and saying ready) would hold up
# every later one: clients take turns, so an unfinished command found here has nobody waiting.
session_usable() {
  local n
  session_alive && [ "$(cat "$session/config" 2>/dev/null)" = "$(session_config)" ] || return 1
  n=$(session_commands)
  [ "$n" -eq 0 ] || [ -f "$session/jobs/$((n - 1))/rc" ] && return 0
  log "the last command of this session never ended (its caller did): a new VM"
  return 1
}

# SIGKILL, to the VM's process group: a test process's threads block SIGTERM, and the mask
# passes down to every process it starts, so qemu never saw a SIGTERM (nor would timeout's).
# The guest's files are synced after each command, so nothing is lost with it.
session_stop() {
  local pid
  pid=$(session_vm) && kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$session/qemu.pid"
}

# What a VM is booted with: a command asking for other settings gets a VM of its own.
session_config() { printf '%s\n' "$KERNEL" "$MEM" "$SMP" "$cpu" "$accel_opt" "$P9CACHE" "$RO"; }

session_start() {
  rm -rf "$session"
  mkdir -m 700 "$session"
  mkdir "$session/jobs"
  session_config > "$session/config"
  local job_script
  job_script=$(printf %q "$session/jobs")
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
  echo "vivid-vm: could not unload\$loaded: the VM ends here, the next command boots a new one"
  return 1
}
# The host says "ready" on the ctl port: waiting there costs the emulated CPUs nothing, where
# polling the 9p share took most of one host CPU from the tests running meanwhile.
for p in /sys/class/virtio-ports/*; do [ "\$(cat \$p/name)" = ctl ] && exec 3< /dev/\${p##*/}; done
n=0
while :; do
  job=/xfer/jobs/\$n
  until [ -f \$job/ready ]; do read -r _ <&3 || sleep 1; done
  fresh_run
  opts=\$(cat \$job/vivid-opts)
  if [ -n "\$opts" ]; then
    modprobe vivid \$opts || echo "vivid-vm: modprobe vivid \$opts failed" >> \$job/err
  fi
  echo "vivid-vm: command \$n starts at uptime \$(cut -d' ' -f1 /proc/uptime)s"
  chroot /host /bin/bash $job_script/\$n/cmd.sh < /dev/null > \$job/out 2>> \$job/err 3<&-
  echo \$? > \$job/rc.new
  echo "vivid-vm: command \$n exited with \$(cat \$job/rc.new) at uptime \$(cut -d' ' -f1 /proc/uptime)s"
  kill_leftovers >> \$job/err
  unload_devices >> \$job/err || touch /xfer/retired
  sync
  mv \$job/rc.new \$job/rc
  [ -f /xfer/retired ] && exit
  n=\$((n + 1))
done
EOF
  qemu_args "$session"
  mkfifo "$session/ctl.in" "$session/ctl.out"
  qemu+=(-chardev pipe,id=ctl,path="$session/ctl" -device virtserialport,chardev=ctl,name=ctl)
  # One process of its own starts the VM and watches it: nothing between the two can leave a
  # VM unwatched. In a session of its own, with none of this script's descriptors but 0-2:
  # the test process learns that a child ended when its socket (Foundation's Process) closes,
  # and a VM that had inherited it held the test for as long as the VM lived. In the
  # background here, not by the caller: `func ... &` would run in a subshell of this script
  # that holds the lock for as long as the VM lives.
  setsid bash -c "$(declare -f session_watchdog); session_watchdog \"\$@\"" watchdog \
    "$VIVID_VM_SESSION" "$session" "${VIVID_VM_IDLE:-60}" "${qemu[@]}" </dev/null >/dev/null 2>&1 &
  disown $!
  local tries=0
  until [ -s "$session/qemu.pid" ]; do
    [ $((tries += 1)) -gt 200 ] && die "the session's VM did not start"
    sleep 0.05
  done
}

# Starts the VM, then ends it when its owner has ended, or when it has had no command for IDLE
# seconds (under the clients' lock, so never while one is submitting or waiting).
session_watchdog() {
  local owner=$1 session=$2 idle=$3 qemu lock fd held=
  shift 3
  for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && exec {fd}>&-; done
  # Its own process group (setsid does not fork here: this process leads a session, its
  # child does not), so that one kill ends timeout and qemu together.
  setsid timeout -s KILL 10800 qemu-system-x86_64 "$@" </dev/null >"$session/qemu.log" 2>&1 &
  qemu=$!
  echo "$qemu" > "$session/qemu.pid.new" && mv "$session/qemu.pid.new" "$session/qemu.pid"
  touch "$session/idle-since"
  while kill -0 "$qemu" 2>/dev/null; do
    sleep 1
    kill -0 "$owner" 2>/dev/null || break
    exec {lock}>"$session.lock"
    if flock -n "$lock"; then
      # Idle: the lock is kept until the VM is gone, so no client can start a command in it.
      if [ $(($(date +%s) - $(stat -c %Y "$session/idle-since" 2>/dev/null || echo 0))) -gt "$idle" ]; then
        held=1
        break
      fi
    fi
    exec {lock}>&-
  done
  kill -KILL -- "-$qemu" 2>/dev/null
  # Under the lock, and unless a client has started another VM (a stopped one leaves no pid).
  if [ -z "$held" ]; then
    exec {lock}>"$session.lock"
    flock "$lock"
  fi
  case $(cat "$session/qemu.pid" 2>/dev/null) in "" | "$qemu") rm -rf "$session" ;; esac
  # No client can come once the owner has gone.
  kill -0 "$owner" 2>/dev/null || rm -f "$session.lock"
}

run_in_session() {
  [[ $VIVID_VM_SESSION =~ ^[0-9]+$ ]] || die "VIVID_VM_SESSION must be the process id the VM lives for"
  [[ ${VIVID_VM_IDLE:-60} =~ ^[0-9]+$ ]] || die "VIVID_VM_IDLE must be a number of seconds"
  session=$CACHE/session.$VIVID_VM_SESSION
  exec {lock}>"$session.lock"
  flock "$lock"
  local n job console_from deadline rc=
  session_usable || { session_stop; session_start; }
  n=$(session_commands)
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
  # The command's limit counts from here, the boot included when this command started the
  # VM; 0 is none, as for the one-VM-per-command mode's timeout.
  deadline=$((SECONDS + TIMEOUT))
  until [ -f "$job/rc" ]; do
    if ! session_alive; then
      [ -f "$job/rc" ] && break
      log "VM ended without an exit code"; rc=125; break
    fi
    if [ "$TIMEOUT" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
      log "timed out after ${TIMEOUT}s (VIVID_VM_TIMEOUT); qemu killed"; rc=124; session_stop; break
    fi
    sleep 0.1
  done
  cat "$job/out" 2>/dev/null || true
  cat "$job/err" >&2 2>/dev/null || true
  if [ -z "$rc" ]; then
    rc=$(cat "$job/rc")
    touch "$session/idle-since"
  fi
  if [ "$verbose" = 1 ] || [ "$rc" = 124 ] || [ "$rc" = 125 ]; then
    log "---- guest console since this command ($ACCEL_USED, cpu=$cpu, ${MEM}MiB, smp=$SMP) ----"
    tail -c +$((console_from + 1)) "$session/console.log" 2>/dev/null | tr -d '\r' | tail -n 40 >&2 || true
    [ "$rc" = 125 ] && tail -n 20 "$session/qemu.log" >&2 2>/dev/null
  fi
  exit "$rc"
}
