#!/usr/bin/env bash
# The guest side of the kernel-log check's control (run.sh
# --expect-reports "lockdep kasan"): load each control module, its
# section of the kernel log opened by "mrcache-control: begin NAME".  The
# modules are built into $GUEST_BUILD/guest-control by mk/guest-debug.mk.
set -u
for name in lockdep kasan; do
	echo "mrcache-control: begin $name" >/dev/kmsg
	ko=$GUEST_BUILD/guest-control/mrcache_control_$name.ko
	if insmod "$ko" && rmmod "mrcache_control_$name"; then
		echo "PASS guest/control-$name-load" >>"$GUEST_RESULTS"
	else
		echo "FAIL guest/control-$name-load" >>"$GUEST_RESULTS"
	fi
done
echo "mrcache-control: end" >/dev/kmsg
