#!/bin/sh
# /init of the guest initramfs (busybox).  Mounts the host's root
# read-only over 9p at /host and the results share over the host's
# results directory inside it, so freshly built programs and libraries run
# from their host paths; loads the modules; runs tests/guest/guest.sh in
# that root; saves the kernel log; powers off.  Settings come from
# guest.env in the results share (written by tests/guest/run.sh).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# (virtio_pci is built into 6.12: only what is packed here is a module.)
for m in virtio_pci 9pnet_virtio 9p; do
	[ -d "/sys/module/$m" ] || modprobe "$m" || echo "guest-init: modprobe $m failed"
done
mkdir -p /results /host
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o "$opts" results /results || { echo "guest-init: no results share"; poweroff -f; }
. /results/guest.env
mkdir -p /hostro
mount -t 9p -o "$opts,ro,cache=loose" hostroot /hostro || { echo "guest-init: no host root"; poweroff -f; }
mount --bind /hostro /host
mount -t tmpfs tmp /host/tmp
# Trees under the host's /tmp are hidden by the guest's own /tmp: bind
# them back from the untouched view of the host root.
for d in "$GUEST_SRC" "$GUEST_BUILD" "$GUEST_CACHE" "$GUEST_RESDIR"; do
	case "$d" in
	/tmp/*) mkdir -p "/host$d" && mount --bind "/hostro$d" "/host$d" ;;
	esac
done
mount --move /results "/host$GUEST_RESDIR"
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/shm /host/dev/pts
mount -t tmpfs shm /host/dev/shm
mount -t tmpfs run /host/run
mount -t tmpfs modules /host/lib/modules
mkdir -p "/host/lib/modules/$GUEST_KVER"
mount --bind "/host$GUEST_CACHE/img/lib/modules/$GUEST_KVER" "/host/lib/modules/$GUEST_KVER"
# $GUEST_BUILD/kmod is where tests find the module: make it this kernel's.
if [ "$GUEST_KMOD" != "$GUEST_BUILD/kmod" ]; then
	mount --bind "/host$GUEST_KMOD" "/host$GUEST_BUILD/kmod"
fi
echo "guest-init: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpus"
chroot /host /bin/bash "$GUEST_SRC/tests/guest/guest.sh" "$GUEST_RESDIR/guest.env"
echo $? >"/host$GUEST_RESDIR/guest.rc"
dmesg >"/host$GUEST_RESDIR/dmesg.txt"
sync
poweroff -f
