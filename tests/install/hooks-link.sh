#!/usr/bin/env bash
# A program that calls no libc function of libmrcache-hooks' itself, linked
# as `pkg-config --libs mrcache-hooks` says, keeps the hooks monitor under
# -Wl,--as-needed (shared) and takes every interposer (static, with
# --static; the monitor then refuses to start, for glibc's free()).
# Control: the bare -lmrcache-hooks -lmrcache under --as-needed loses it,
# and the program sees that.
. "$(dirname "$0")/lib.sh"
root=$scratch/root
install_tree "$root" prefix=/usr libdir=/usr/lib/$ma
lib=$root/usr/lib/$ma
pc() { PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@"; }

cat >"$scratch/prog.c" <<'EOC'
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
static int reg(void *arg, void *addr, size_t len, unsigned access, void **h, uint64_t *key)
{
	*h = addr;
	*key = 0;
	return 0;
}
static int dereg(void *arg, void *h) { return 0; }
static const struct mrcache_backend_ops ops = { .reg = reg, .dereg = dereg };
int main(void)
{
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	mrcache_config_init(&cfg);
	cfg.ops = &ops;
	cfg.monitor = MRCACHE_MONITOR_HOOKS;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	rc = mrcache_create(&cfg, &c);
	printf("hooks monitor: %s\n", rc ? strerror(-rc) : "running");
	return rc ? 1 : mrcache_destroy(c) != 0;
}
EOC
bad=0
build_run() {	# NAME FLAGS...: build, then run; the run's exit status
	local name=$1
	shift
	cc -o "$scratch/$name" "$scratch/prog.c" $(pc --cflags mrcache) "$@" \
		>"$scratch/$name.log" 2>&1 || { cat "$scratch/$name.log"; echo "$name: link failed"; return 2; }
	env -u LD_PRELOAD LD_LIBRARY_PATH=$lib "$scratch/$name"
}

build_run shared -Wl,--as-needed $(pc --libs mrcache-hooks) || { echo "shared link with mrcache-hooks.pc lost the hooks"; bad=1; }
readelf -d "$scratch/shared" | grep -q 'NEEDED.*libmrcache-hooks' || { echo "no DT_NEEDED libmrcache-hooks"; bad=1; }

if build_run as-needed-bare -Wl,--as-needed -L"$lib" -lmrcache-hooks -lmrcache; then
	echo "control: the bare link line kept the hooks under --as-needed"; bad=1
fi

# Static: -static links the archives only.  Every interposer is taken, but
# glibc's free() wins over libmrcache-hooks' weak one, so the monitor
# refuses to start (test-hooks-static); its reason, "free() is glibc's
# own", comes only after munmap() was seen to reach the interposers.
build_run static -static $(pc --static --libs mrcache-hooks) >"$scratch/static.out" 2>&1
rc=$?
cat "$scratch/static.out"
if [ $rc -eq 2 ]; then echo "static link with pkg-config --static --libs mrcache-hooks failed"; bad=1
elif [ $rc -eq 0 ]; then echo "the hooks monitor started in a fully static program"; bad=1
elif ! grep -q "free() is glibc's own" "$scratch/static.out"; then
	echo "static link lost the hooks"; bad=1
fi
[ $bad -eq 0 ] || fail "hooks link"
echo PASS
