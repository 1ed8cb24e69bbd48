#!/usr/bin/env bash
# Host side of the guest harness: build an initramfs, boot a Debian kernel
# (6.1 unless --kernel says otherwise) in QEMU (TCG), run
# tests/guest/guest.sh inside, then add the guest's result lines and a
# kernel-log verdict to the results file.
#   run.sh --cache DIR --out DIR --build DIR --results FILE
#          [--kernel 6.1|6.1-rt|6.12|6.12-rt|debug-6.12] [--kmod DIR (BUILD/kmod)]
#          [--modules "m1 m2"] [--suites "a.sh b.sh"] [--mem 1G] [--timeout S] [--test-timeout S]
#          [--cmdline "kernel parameters"] [--env "NAME=VALUE ..."]
#          [--smp N (2)] [--net "QEMU NETDEV ARGS" (none: -nic none)]
#          [--clock hpet|tsc (hpet)]
#          [--label NAME] [--expect-reports "NAME1 NAME2"]
# Result lines name the kernel: "guest/NAME" on the default 6.1,
# "guest-KERNEL/NAME" on any other, "guest-LABEL/NAME" with --label (the
# suites write "guest..."; the prefix is added here, so one results file
# holds several kernels and module builds).
# Fails on any failed test, a missing guest verdict, or a report in the
# guest's kernel log (tests/guest/kernel-reports.sh: WARNING/BUG/Oops,
# lockdep, KASAN, KCSAN, UBSAN, the lockup and hung-task detectors, RCU
# stalls; an OOM kill's report only where a test brackets it as expected).
# --expect-reports is the control of that check (tests/guest/control/):
# the suite brackets each deliberate report with a kmsg line
# "mrcache-control: begin NAME", and each NAME's section of the log alone
# must make the check fail ("PASS .../control-NAME-caught").
set -u
cache= out= build= results= modules= suites= mem=1G timeout_s=600 kernel=6.1 kmod=
test_timeout=300 cmdline= env= smp=2 net="-nic none" label= expect= clock=hpet
while [ $# -gt 0 ]; do
	case "$1" in
	--cache) cache=$2 ;; --out) out=$2 ;; --build) build=$2 ;;
	--kernel) kernel=$2 ;; --kmod) kmod=$2 ;;
	--results) results=$2 ;; --modules) modules=$2 ;; --suites) suites=$2 ;;
	--mem) mem=$2 ;; --timeout) timeout_s=$2 ;;
	--test-timeout) test_timeout=$2 ;;	# each test program's limit in the suites
	--cmdline) cmdline=$2 ;;	# more kernel parameters
	--env) env=$2 ;;	# "NAME=VALUE ...": exported to the suites
	--label) label=$2 ;; --expect-reports) expect=$2 ;;
	--smp) smp=$2 ;; --net) net=$2 ;;	# tests/cluster/run.sh: two linked guests
	--clock) clock=$2 ;;	# the guest's clock source, see below
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=$(realpath -m "$cache") out=$(realpath -m "$out") build=$(realpath -m "$build")
kmod=$(realpath -m "${kmod:-$build/kmod}")
suite=guest
[ "$kernel" = 6.1 ] || suite=guest-$kernel
[ -z "$label" ] || suite=guest-$label
mkdir -p "$(dirname "$results")"

fail_setup() {
	echo "FAIL $suite/setup: $*"
	echo "FAIL $suite/setup" >>"$results"
	exit 1
}
# "guest/NAME" -> "$suite/NAME", "guest-bpf-zap/NAME" -> "$suite-bpf-zap/NAME".
tag_kernel() {
	if [ "$suite" = guest ]; then cat; else sed -E "s#^(PASS|FAIL|SKIP) guest([-/])#\1 $suite\2#"; fi
}

bash "$src/tests/guest/fetch-kernel.sh" "$cache" "$kernel" || fail_setup "cannot fetch the guest kernel"
kver=$(cat "$cache/kver")
img=$cache/img
[ -f "$kmod/mrmon.ko" ] || fail_setup "$kmod/mrmon.ko not built"
vermagic=$(modinfo -F vermagic "$kmod/mrmon.ko")
[ "${vermagic%% *}" = "$kver" ] || fail_setup "$kmod/mrmon.ko is built for ${vermagic%% *}, not $kver"
# Inside the guest the module of the running kernel is bound over
# $build/kmod, where tests (test-mrmon-signal-setup) reload it from.
mkdir -p "$build/kmod"

# The initramfs: busybox, /init, and what mounting 9p needs.
rm -rf "$out/initrd" "$out/res"
mkdir -p "$out/initrd"/{bin,proc,sys,dev,lib/modules/"$kver"} "$out/res"
cp /bin/busybox "$out/initrd/bin/busybox"
ln -s busybox "$out/initrd/bin/sh"
file "$out/initrd/bin/busybox" | grep -q 'statically linked' || fail_setup "busybox is not static (install busybox-static)"
install -m 755 "$src/tests/guest/init.sh" "$out/initrd/init"
for m in virtio_pci 9pnet_virtio 9p; do
	for f in $(modprobe -d "$img" -S "$kver" --show-depends "$m" | awk '/^insmod/ {print $2}'); do
		rel=${f#"$img"/lib/modules/"$kver"/}
		dst=$out/initrd/lib/modules/$kver/${rel%.ko*}.ko
		mkdir -p "$(dirname "$dst")"
		# 6.12's modules are .ko.xz: busybox insmod reads plain ELF only.
		case $f in
		*.ko.xz) xz -dc "$f" >"$dst" ;;
		*.ko.zst) zstd -qdc "$f" >"$dst" ;;
		*) cp "$f" "$dst" ;;
		esac
	done
done
depmod -b "$out/initrd" "$kver" 2>/dev/null
(cd "$out/initrd" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.cpio.gz"

cat >"$out/res/guest.env" <<ENV
GUEST_RESDIR=$out/res
GUEST_CACHE=$cache
GUEST_KVER=$kver
GUEST_KERNEL=$kernel
GUEST_KMOD=$kmod
GUEST_SRC=$src
GUEST_BUILD=$build
GUEST_MODULES="$modules"
GUEST_SUITES="$suites"
GUEST_TEST_TIMEOUT=$test_timeout
GUEST_ENV="$env"
ENV

# --clock hpet (tests): tsc=unstable.  6.1 finds the vCPUs' TSCs
# unsynchronized at boot and never uses them for sched_clock; 6.12 does,
# until its clocksource watchdog gives up on the TSC of a loaded TCG host
# mid-run, and the static-key patch that follows (text_poke_bp) crashed the
# guest with "Oops: int3" in sched_clock_cpu.  Unstable from the start, no
# patch happens.  The price: the clock source is the HPET, and every
# clock_gettime() is a system call and an emulated MMIO read (1.1-1.3 us
# here, against 77 ns with the TSC).
# --clock tsc (benchmarks): tsc=reliable, which skips the boot-time sync
# check and the watchdog, so the TSC is the clock source and the vDSO reads
# it as on real hardware.  Under TCG the guest's TSC is the host's, so it
# does not go backwards (200,000 reads each way, docs/benchmarks.md
# "The guest's clock").  A benchmark that times a path which reads the
# clock then measures that path, not the emulated HPET.
case "$clock" in
hpet) tsc=tsc=unstable ;;
tsc) tsc=tsc=reliable ;;
*) echo "run.sh: --clock must be hpet or tsc, not '$clock'" >&2; exit 2 ;;
esac
rm -f "$out/console.log" "$out/qemu.log"
echo "guest: booting $kver (TCG, $mem), console log $out/console.log"
start=$(date +%s)
timeout -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -m "$mem" -smp "$smp" \
	-nographic -no-reboot $net -monitor none -serial "file:$out/console.log" \
	-kernel "$img/boot/vmlinuz-$kver" -initrd "$out/initrd.cpio.gz" \
	-append "console=ttyS0 quiet panic=-1 oops=panic=0 $tsc${cmdline:+ $cmdline}" \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$out/res,mount_tag=results,security_model=none" \
	</dev/null >"$out/qemu.log" 2>&1
qrc=$?
echo "guest: qemu exited $qrc after $(( $(date +%s) - start ))s"
# The guest's own test report, from its console.
grep -aE '^(PASS|FAIL|SKIP|guest|== |    \|)' "$out/console.log" | tr -d '\r' | tag_kernel

status=0
if [ -s "$out/res/results.txt" ]; then
	tag_kernel <"$out/res/results.txt" >>"$results"
	grep -q '^FAIL ' "$out/res/results.txt" && status=1
fi
if [ -f "$out/res/guest.rc" ] && [ "$(cat "$out/res/guest.rc")" != 0 ] && ! grep -q '^FAIL ' "$out/res/results.txt" 2>/dev/null; then
	echo "FAIL $suite/run: the guest script exited $(cat "$out/res/guest.rc")"
	echo "FAIL $suite/run" >>"$results"
	status=1
fi
if [ ! -f "$out/res/guest.rc" ]; then
	echo "FAIL $suite/boot: no verdict from the guest (qemu rc $qrc); console tail:"
	tail -n 40 "$out/console.log" | sed 's/^/    | /'
	echo "FAIL $suite/boot" >>"$results"
	status=1
fi
# The guest kernel's own verdict on what the tests did to it: the lines of
# every report the kernel's checkers print, minus the ones a test brackets
# as expected (an OOM kill's stack: tests/guest/kernel-reports.sh says
# which and how; kernel-reports-test.sh is its control).
kernel_reports() { bash "$src/tests/guest/kernel-reports.sh" "$@"; }
if [ -n "$expect" ]; then
	for name in $expect; do
		if [ -f "$out/res/dmesg.txt" ] &&
			awk -v n="$name" '/mrcache-control: begin / { on = ($NF == n) } on' "$out/res/dmesg.txt" | kernel_reports -q; then
			echo "PASS $suite/control-$name-caught" >>"$results"
		else
			echo "FAIL $suite/control-$name-caught: no report after 'mrcache-control: begin $name'"
			echo "FAIL $suite/control-$name-caught" >>"$results"
			status=1
		fi
	done
elif [ -f "$out/res/dmesg.txt" ] && ! kernel_reports -q "$out/res/dmesg.txt" "$out/console.log"; then
	echo "PASS $suite/kernel-log" >>"$results"
else
	echo "FAIL $suite/kernel-log:"
	kernel_reports -A12 "$out/res/dmesg.txt" "$out/console.log" 2>/dev/null | head -60 | sed 's/^/    | /'
	echo "FAIL $suite/kernel-log" >>"$results"
	status=1
fi
if [ -f "$out/res/results.txt" ]; then
	p=$(grep -c '^PASS ' "$out/res/results.txt"); f=$(grep -c '^FAIL ' "$out/res/results.txt"); s=$(grep -c '^SKIP ' "$out/res/results.txt")
	echo "guest: $p passed, $f failed, $s skipped"
fi
exit $status
