#!/usr/bin/env bash
# The installed valgrind suppression file ($(datarootdir)/mrcache/valgrind/
# mrcache.supp) silences libbpf's loader: a program on the bpf monitor
# (create, get, munmap, progress, destroy) runs under memcheck with no
# error left.  Control: the same run without the file reports thousands,
# so the file, not luck, made the difference.  Skips without valgrind or
# when the bpf monitor cannot start here.
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || skip "no valgrind (apt-get install valgrind)"
prefix=$scratch/prefix
install_tree "" prefix="$prefix"
supp=$prefix/share/mrcache/valgrind/mrcache.supp
[ -f "$supp" ] || fail "not installed: $supp"

cat >"$scratch/prog.c" <<'EOC'
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
static int reg(void *arg, void *addr, size_t len, unsigned access, void **h, uint64_t *key)
{
	*h = addr;
	*key = 1;
	return 0;
}
static int dereg(void *arg, void *h) { return 0; }
static const struct mrcache_backend_ops ops = { .reg = reg, .dereg = dereg };
int main(void)
{
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r;
	char *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	mrcache_config_init(&cfg);
	cfg.ops = &ops;
	cfg.monitor = MRCACHE_MONITOR_BPF;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	if (mrcache_create(&cfg, &c))
		return 77;
	if (mrcache_get(c, p, 4096, 0, &r) || mrcache_put(c, r))
		return 1;
	munmap(p, 1 << 16);
	mrcache_progress(c);
	return mrcache_destroy(c) ? 1 : 0;
}
EOC
gcc -g -I"$prefix/include" -o "$scratch/prog" "$scratch/prog.c" -L"$prefix/lib" -lmrcache \
	-Wl,-rpath,"$prefix/lib" || fail "does not build"
"$scratch/prog"
case $? in 0) ;; 77) skip "the bpf monitor does not start here" ;; *) fail "the program fails" ;; esac

vg() { valgrind --error-exitcode=3 --error-limit=no "$@" "$scratch/prog" 2>&1 | tail -1; }
with=$(vg --suppressions="$supp")
without=$(vg)
echo "with the file:    $with"
echo "without (control): $without"
[[ $with =~ "ERROR SUMMARY: 0 errors" ]] || fail "errors left with $supp"
[[ $without =~ "ERROR SUMMARY: 0 errors" ]] && fail "control: no errors without the file"
echo PASS
