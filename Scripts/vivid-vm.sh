#!/usr/bin/env bash
# Vendored from the team's shared/vivid-vm recipe so that a fresh clone can run the camera tests.
# run-in-vivid-vm.sh - run a host command inside a throw-away QEMU VM whose
# (stock Debian) kernel has the `vivid` virtual V4L2 driver loaded, so that
# /dev/video0 .. /dev/video{N-1} are real V4L2 capture devices.
#
# usage: run-in-vivid-vm.sh [--devices N] [--vivid-opts 'k=v ...'] [--verbose] -- COMMAND [ARGS...]
#
#   --devices N      number of vivid capture devices (default 2; 0 = load no driver).
#                    Each is a capture-only node with one "webcam" input: /dev/video0 .. N-1.
#   --vivid-opts S   replace the vivid module parameters entirely, e.g. for 1080p30-capable
#                    HDMI-type inputs: 'n_devs=2 node_types=0x1,0x1 num_inputs=1,1 input_types=3,3'
#   --verbose        copy the guest kernel console to stderr after the run.
#
# The host root filesystem is shared into the VM with 9p at the same paths
# (writable unless VIVID_VM_RO=1); the command runs chrooted into it as root with
# the caller's cwd, exported environment and umask, stdin=/dev/null.  Its stdout
# and stderr are streamed back separately and the script exits with its exit code
# (124 if the VM hit the timeout, 125 for VM/infrastructure failures).
#
# Environment:
#   VIVID_VM_CACHE    cache dir for kernel+initramfs   (default /tmp/vivid-vm-cache)
#   VIVID_VM_TIMEOUT  hard limit in seconds for the VM (default 600)
#   VIVID_VM_MEM      guest memory in MiB              (default 2048)
#   VIVID_VM_SMP      guest vCPUs                      (default: host nproc)
#   VIVID_VM_ACCEL    auto|kvm|tcg                     (default auto: kvm only if a probe boot works)
#   VIVID_VM_CPU      qemu -cpu model                  (default: max for tcg, host for kvm)
#   VIVID_VM_RO       1 = share host root read-only    (default 0)
#   VIVID_VM_KERNEL_PKG  Debian kernel package to use  (default: what linux-image-amd64 depends on)
#   VIVID_VM_9P_CACHE 9p cache mode for the host root  (default loose: 2-4x faster program
#                     start-up; none = no guest caching, sees host-side changes at once)
#   VIVID_VM_SESSION  a process id: one VM runs every command given this value, one after
#                     another, each from fresh devices, and ends with that process or after
#                     VIVID_VM_IDLE seconds (default 60) without one (vivid-vm-session.sh)
#
# Inside the VM the command sees VIVID_VM=1, VIVID_VM_DEVICES=N, VIVID_VM_VIVID_OPTS (the
# module options used) and VIVID_VM_MODDIR, so a test can re-plug all cameras with
#   modprobe -d "$VIVID_VM_MODDIR" -r vivid && modprobe -d "$VIVID_VM_MODDIR" vivid $VIVID_VM_VIVID_OPTS
# and unplug one camera mid-stream (open fds then get ENODEV) with
#   v4l2-ctl -d /dev/video0 --set-ctrl=disconnect=1
# /run is a fresh tmpfs in the VM; /proc, /sys, /dev are the guest's; all else is the host's.
set -euo pipefail

RECIPE=6                                   # bump when the cached image layout changes
CACHE=${VIVID_VM_CACHE:-/tmp/vivid-vm-cache}
TIMEOUT=${VIVID_VM_TIMEOUT:-600}
MEM=${VIVID_VM_MEM:-2048}
SMP=${VIVID_VM_SMP:-$(nproc)}
ACCEL=${VIVID_VM_ACCEL:-auto}
RO=${VIVID_VM_RO:-0}
P9CACHE=${VIVID_VM_9P_CACHE:-loose}
MODULES=(vivid snd-aloop snd-dummy 9p 9pnet_virtio virtio_pci virtio_console)
KAPPEND="console=ttyS0 quiet loglevel=4 panic=-1 mitigations=off tsc=reliable"

log() { printf 'vivid-vm: %s\n' "$*" >&2; }
die() { log "$*"; exit 125; }
now() { date +%s.%N; }

devices=2 vivid_opts='' verbose=0
while [ $# -gt 0 ]; do
  case $1 in
    --devices) devices=${2:?}; shift 2 ;;
    --devices=*) devices=${1#*=}; shift ;;
    --vivid-opts) vivid_opts=${2?}; shift 2 ;;
    --vivid-opts=*) vivid_opts=${1#*=}; shift ;;
    --verbose) verbose=1; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || die "usage: $0 [--devices N] [--vivid-opts S] [--verbose] -- COMMAND [ARGS...]"
[[ $devices =~ ^[0-9]+$ ]] && [ "$devices" -le 16 ] || die "--devices must be 0..16"
[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "VIVID_VM_TIMEOUT must be a number of seconds"
[ "$(id -u)" = 0 ] || die "must run as root (apt, 9p export of /)"

# ---------------------------------------------------------------- host deps
ensure_deps() {
  local need=()
  command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
  command -v depmod >/dev/null || need+=(kmod)
  command -v cpio >/dev/null || need+=(cpio)
  command -v xz >/dev/null || need+=(xz-utils)
  command -v v4l2-ctl >/dev/null || need+=(v4l-utils)
  [ ${#need[@]} -eq 0 ] && return 0
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || true
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >&2 \
    || die "apt-get install ${need[*]} failed"
}

# ---------------------------------------------------------------- kernel + initramfs
build_image() {   # $1 = kernel package, $2 = output dir
  local pkg=$1 out=$2 tmp kv f rel off
  tmp=$(mktemp -d "$CACHE/build.XXXXXX")
  log "building VM image from $pkg into $out (one-time)"
  ( cd "$tmp" && apt-get -qq -o APT::Sandbox::User=root download "$pkg" >&2 ) \
    || { rm -rf "$tmp"; die "apt-get download $pkg failed (try apt-get update, or set VIVID_VM_KERNEL_PKG)"; }
  mkdir "$tmp/x"
  dpkg-deb -x "$tmp"/*.deb "$tmp/x"
  rm -f "$tmp"/*.deb
  kv=$(ls "$tmp/x/lib/modules")
  depmod -b "$tmp/x" "$kv"
  local ir=$tmp/ir
  mkdir -p "$ir"/{bin,dev,proc,sys,host,xfer,tmp} "$ir/lib/modules/$kv"
  cp /bin/busybox "$ir/bin/busybox"
  for m in "${MODULES[@]}"; do
    modprobe -d "$tmp/x" -S "$kv" --show-depends "$m" | awk '$1=="insmod"{print $2}'
  done | sort -u | while read -r f; do
    rel=${f#"$tmp/x/lib/modules/$kv/"}
    mkdir -p "$ir/lib/modules/$kv/$(dirname "$rel")"
    cp "$f" "$ir/lib/modules/$kv/$rel"
  done
  cp "$tmp/x/lib/modules/$kv"/modules.{order,builtin,builtin.modinfo} "$ir/lib/modules/$kv/"
  depmod -b "$ir" "$kv"
  # stage 1: mount the per-run transfer share and hand over to its stage2.sh
  cat > "$ir/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
modprobe virtio_pci; modprobe 9pnet_virtio; modprobe 9p; modprobe virtio_console
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 xfer /xfer 2>/dev/null && [ -f /xfer/stage2.sh ]; then
  sh /xfer/stage2.sh
else
  echo "vivid-vm-init: no xfer share"
fi
sync; echo o > /proc/sysrq-trigger; sleep 10
EOF
  chmod +x "$ir/init"
  ( cd "$ir" && find . | cpio -o -H newc --quiet | gzip -6 ) > "$tmp/initrd.gz"
  # An uncompressed vmlinux boots ~2.5 s faster under TCG (PVH entry, no decompressor).
  cp "$tmp/x/boot/vmlinuz-$kv" "$tmp/vmlinuz"
  if grep -q '^CONFIG_PVH=y' "$tmp/x/boot/config-$kv"; then
    off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$tmp/vmlinuz" | head -1 | cut -d: -f1 || true)
    if [ -n "$off" ] && tail -c +$((off + 1)) "$tmp/vmlinuz" > "$tmp/k.xz" \
       && xz -dcq --single-stream "$tmp/k.xz" > "$tmp/vmlinux" 2>/dev/null \
       && [ "$(head -c 4 "$tmp/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ]; then
      rm "$tmp/vmlinuz"
    else
      rm -f "$tmp/vmlinux"
    fi
    rm -f "$tmp/k.xz"
  fi
  rm -rf "$out"; mkdir -p "$out"
  mv "$tmp"/vmlinu[xz] "$tmp/initrd.gz" "$out/"
  echo "$kv" > "$out/kver"
  rm -rf "$tmp"
  touch "$out/ok"
}

ensure_image() {  # sets IMG and KERNEL
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"; flock 9
  local pkg=${VIVID_VM_KERNEL_PKG:-}
  if [ -z "$pkg" ] && [ -f "$CACHE/current/ok" ] && [[ $(readlink "$CACHE/current") == r$RECIPE-* ]]; then
    IMG=$(readlink -f "$CACHE/current")
  else
    if [ -z "$pkg" ]; then
      pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
      if [ -z "$pkg" ]; then
        apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || true
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
      fi
      [ -n "$pkg" ] || die "cannot resolve the kernel package behind linux-image-amd64"
    fi
    IMG=$CACHE/r$RECIPE-$pkg
    [ -f "$IMG/ok" ] || build_image "$pkg" "$IMG"
    [ -n "${VIVID_VM_KERNEL_PKG:-}" ] || ln -sfn "$(basename "$IMG")" "$CACHE/current"
  fi
  KERNEL=$IMG/vmlinux; [ -f "$KERNEL" ] || KERNEL=$IMG/vmlinuz
  exec 9>&-
}

# ---------------------------------------------------------------- accelerator
# /dev/kvm can exist without being able to run a stock kernel (e.g. PVM-based nested
# KVM, module kvm_pvm, only runs PVM-enabled guests: the Debian kernel hangs at boot),
# so in auto mode KVM is used only after a probe boot succeeded once (result cached).
pick_accel() {
  case $ACCEL in kvm|tcg) ACCEL_USED=$ACCEL; return ;; esac
  ACCEL_USED=tcg
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 0
  [ -d /sys/module/kvm_pvm ] && return 0          # known: PVM cannot boot a stock kernel
  local probe=$IMG/kvm-probe
  if [ ! -f "$probe" ]; then
    local t=$IMG/kvm-probe.log
    timeout -k 5 30 qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
      -machine pc -accel kvm -cpu host -m 512 -smp 1 -kernel "$KERNEL" -initrd "$IMG/initrd.gz" \
      -append "$KAPPEND" -serial file:"$t" </dev/null >/dev/null 2>&1 || true
    if grep -q 'vivid-vm-init: no xfer share' "$t" 2>/dev/null; then echo kvm > "$probe"; else echo tcg > "$probe"; fi
    rm -f "$t"
  fi
  ACCEL_USED=$(cat "$probe")
}

ensure_deps
ensure_image
pick_accel
cpu=${VIVID_VM_CPU:-$([ "$ACCEL_USED" = kvm ] && echo host || echo max)}
accel_opt=$ACCEL_USED; [ "$ACCEL_USED" = tcg ] && accel_opt=tcg,thread=multi

# ---------------------------------------------------------------- the command
if [ -z "$vivid_opts" ] && [ "$devices" -gt 0 ]; then
  nt='' ni='' it='' nr=''
  for ((i = 0; i < devices; i++)); do
    nt+=${nt:+,}0x1; ni+=${ni:+,}1; it+=${it:+,}0; nr+=${nr:+,}$i
  done
  # node_types=0x1: video-capture node only; one input of type 0 (webcam)
  vivid_opts="n_devs=$devices node_types=$nt num_inputs=$ni input_types=$it vid_cap_nr=$nr"
elif [[ " $vivid_opts" =~ \ n_devs=([0-9]+) ]]; then devices=${BASH_REMATCH[1]}
elif [ -n "$vivid_opts" ]; then devices=1
fi

# the command, as a bash script run inside the chroot (host root at the same paths)
write_command() {  # $1 = the script to write; the rest = the command
  local file=$1
  shift
  {
    echo '#!/bin/bash'
    export -p | grep -vE '^declare -x (BASHOPTS|SHELLOPTS|BASH_[A-Z_]*|EUID|UID|PPID|SHLVL|OLDPWD|VIVID_VM_SESSION|_)(=|$)' || true
    echo "export VIVID_VM=1 VIVID_VM_DEVICES=$devices VIVID_VM_MODDIR=/run/vivid-vm"
    printf 'export VIVID_VM_VIVID_OPTS=%q\n' "$vivid_opts"
    echo "umask $(umask)"
    printf 'cd -- %q || exit 126\n' "$PWD"
    printf 'exec'; printf ' %q' "$@"; printf '\n'
  } > "$file"
}

p9ro=; [ "$RO" = 1 ] && p9ro=,ro
# The guest's mounts for a command: the host root (9p) with the guest's own /proc, /sys and
# /dev, and a fresh /run (where the modules are reachable for modprobe -d).
guest_mounts=$(cat <<EOF
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=$P9CACHE$p9ro hostroot /host; then
  echo 125 > /xfer/rc; exit
fi
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts devpts /host/dev/pts
ln -sf /proc/self/fd /host/dev/fd; ln -sf fd/0 /host/dev/stdin; ln -sf fd/1 /host/dev/stdout; ln -sf fd/2 /host/dev/stderr
fresh_run() {
  umount -l /host/run/vivid-vm/lib /host/run /host/dev/shm 2>/dev/null
  mount -t tmpfs tmpfs /host/dev/shm
  mount -t tmpfs -o mode=755 tmpfs /host/run
  mkdir -p /host/run/vivid-vm/lib /host/run/lock && mount --bind /lib /host/run/vivid-vm/lib
}
fresh_run
EOF
)

# shellcheck disable=SC2054  # commas are qemu option syntax
qemu_args() {  # $1 = the folder shared as xfer (its stage2.sh runs at boot)
  local run=$1
  qemu=(
    -nodefaults -no-user-config -display none -no-reboot
    -machine pc -accel "$accel_opt" -cpu "$cpu" -m "$MEM" -smp "$SMP"
    -kernel "$KERNEL" -initrd "$IMG/initrd.gz" -append "$KAPPEND"
    -chardev file,id=con,path="$run/console.log" -serial chardev:con
    -virtfs local,path="$run",mount_tag=xfer,security_model=none
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap${p9ro:+,readonly=on}"
    -device virtio-serial-pci
    -chardev file,id=out,path="$run/out" -device virtserialport,chardev=out,name=out
    -chardev file,id=err,path="$run/err" -device virtserialport,chardev=err,name=err
  )
}

[ -n "${VIVID_VM_SESSION:-}" ] && { source "$(dirname "$0")/vivid-vm-session.sh"; run_in_session "$@"; }

# ---------------------------------------------------------------- per-run files
run=$(mktemp -d "$CACHE/run.XXXXXX")
qpid=
cleanup() {
  [ -n "$qpid" ] && kill -TERM "$qpid" 2>/dev/null || true
  rm -rf "$run"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM HUP
write_command "$run/cmd.sh" "$@"

cat > "$run/stage2.sh" <<EOF
# runs in the initramfs (busybox sh, pid != 1)
hostname vivid-vm
$guest_mounts
out=/dev/null; err=/dev/null
for p in /sys/class/virtio-ports/*; do
  case \$(cat \$p/name) in out) out=/dev/\${p##*/} ;; err) err=/dev/\${p##*/} ;; esac
done
if [ -n "$vivid_opts" ]; then
  modprobe vivid $vivid_opts || echo "vivid-vm: modprobe vivid $vivid_opts failed" > \$err
fi
echo "vivid-vm: command starts at uptime \$(cut -d' ' -f1 /proc/uptime)s"
chroot /host /bin/bash $(printf %q "$run/cmd.sh") < /dev/null > \$out 2> \$err
rc=\$?
echo \$rc > /xfer/rc
echo "vivid-vm: command exited with \$rc at uptime \$(cut -d' ' -f1 /proc/uptime)s"
kill -9 -1 2>/dev/null; sleep 0.2   # leftovers of the command
umount /host/run/vivid-vm/lib /host/run /host/dev/shm /host/dev/pts /host/dev /host/sys /host/proc 2>/dev/null
sync; umount /host 2>/dev/null
EOF

mkfifo "$run/out" "$run/err"
cat "$run/out" & cout=$!
cat "$run/err" >&2 & cerr=$!

qemu_args "$run"
t0=$(now)
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 "${qemu[@]}" </dev/null >"$run/qemu.log" 2>&1 &
qpid=$!
set +e
wait "$qpid"; qrc=$?
set -e
qpid=
t1=$(now)
# make sure the stream copiers see EOF even if qemu died before opening the fifos
for f in out err; do exec {fd}<>"$run/$f"; exec {fd}>&-; done
wait "$cout" "$cerr" 2>/dev/null || true

if [ "$verbose" = 1 ]; then
  log "---- guest console ($ACCEL_USED, cpu=$cpu, ${MEM}MiB, smp=$SMP, $(basename "$KERNEL")) ----"
  tr -d '\r' < "$run/console.log" >&2 || true
  log "$(awk -v a="$t0" -v b="$t1" -v acc="$ACCEL_USED" 'BEGIN{printf "vm wall time %.1fs (accel=%s)", b-a, acc}')"
fi
if [ -s "$run/rc" ]; then
  exit "$(cat "$run/rc")"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
  log "timed out after ${TIMEOUT}s (VIVID_VM_TIMEOUT); qemu killed"; rc=124
else
  log "VM ended without an exit code (qemu rc=$qrc)"; rc=125
fi
{ tail -n 20 "$run/qemu.log"; tr -d '\r' < "$run/console.log" | tail -n 30; } >&2 2>/dev/null || true
exit $rc
