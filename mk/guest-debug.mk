# The guest harness on kernels CI does not boot (docs/mrmon.md "Debug kernel",
# tests/guest/README.md "Kernels").  None is part of `make check`.
#   make guest-debug-kernel   build the debug kernel (long, once: docs/mrmon.md)
#   make check-guest-debug    the module and kernel-monitor suites on it,
#                             then the control of its kernel-log check
#   make check-guest-rt       the same suites on 6.1-rt and 6.12-rt
#   make check-dkms-guest     the module `dkms build` made, in the 6.1 guest
GUEST_CACHE_ROOT ?= build/guest-cache
DEBUG_KERNEL  := debug-6.12
DEBUG_CACHE   := $(GUEST_CACHE_ROOT)/$(DEBUG_KERNEL)
DEBUG_KMOD    := $(BUILD)/kmod-$(DEBUG_KERNEL)
CONTROL_OUT   := $(BUILD)/guest-control
CONTROL_KO    := $(CONTROL_OUT)/mrcache_control_lockdep.ko
# No GUEST_MODULES: the debug kernel has no Soft-RoCE (its config says why).
GUEST_DEBUG_SUITES  := tests/guest/suites/10-mrmon.sh tests/guest/suites/50-library.sh
# KASAN and lockdep make the guest several times slower than Debian's kernel.
GUEST_DEBUG_TIMEOUT ?= 5400
GUEST_DEBUG_TEST_TIMEOUT ?= 1800
# no5lvl: with QEMU's -cpu max the guest runs 5-level page tables, and this
# kernel's KASAN then reports a wild-memory-access in do_raw_spin_lock from
# an interrupt during identify_cpu at 0.003 s, before any of our code
# (docs/mrmon.md "Debug kernel").  kasan_multi_shot: KASAN prints only its
# first report otherwise, and each control section needs its own.
GUEST_DEBUG_CMDLINE ?= no5lvl kasan_multi_shot
# Timing bounds of the module's tests, times this (test-mrmon-overlap's
# MADV_DONTNEED over 65,536 watches took 0.47-0.68 s here, 0.06 s on 6.1).
GUEST_DEBUG_ENV ?= MRMON_TIME_SCALE=8
GUEST_DEBUG_MEM     ?= 2G

.PHONY: guest-debug-kernel check-guest-debug check-guest-debug-control check-guest-rt check-dkms-guest
guest-debug-kernel: $(DEBUG_CACHE)/kver

# fetch-kernel.sh hands debug-6.12 to scripts/debug-kernel.sh, which keeps
# a cache whose key (the fragment's hash) matches.  With
# GUEST_KERNEL=debug-6.12 mk/kmod.mk has this recipe already.
$(DEBUG_CACHE)/kver: tests/guest/debug-kernel.config scripts/debug-kernel.sh
ifneq ($(GUEST_KERNEL),$(DEBUG_KERNEL))
	bash tests/guest/fetch-kernel.sh $(DEBUG_CACHE) $(DEBUG_KERNEL)
endif

check-guest-debug:
	@status=0; \
	$(MAKE) --no-print-directory check-guest GUEST_KERNEL=$(DEBUG_KERNEL) GUEST_MODULES= \
	  GUEST_SUITES="$(GUEST_DEBUG_SUITES)" GUEST_MEM=$(GUEST_DEBUG_MEM) \
	  GUEST_TIMEOUT=$(GUEST_DEBUG_TIMEOUT) GUEST_TEST_TIMEOUT=$(GUEST_DEBUG_TEST_TIMEOUT) \
	  GUEST_CMDLINE="$(GUEST_DEBUG_CMDLINE)" GUEST_ENV="$(GUEST_DEBUG_ENV)" || status=1; \
	$(MAKE) --no-print-directory check-guest-debug-control || status=1; \
	exit $$status

# The control: two test-only modules (tests/guest/control/) that make
# lockdep and KASAN report; each report must fail the kernel-log check.
$(CONTROL_KO): $(wildcard tests/guest/control/*.c) tests/guest/control/Kbuild $(DEBUG_CACHE)/kver
	@rm -rf $(CONTROL_OUT) && mkdir -p $(CONTROL_OUT)
	cp tests/guest/control/Kbuild tests/guest/control/*.c $(CONTROL_OUT)/
	MAKEFLAGS= $(MAKE) -C $$(cat $(DEBUG_CACHE)/kdir) M=$(abspath $(CONTROL_OUT)) modules

check-guest-debug-control: $(CONTROL_KO)
	@$(MAKE) --no-print-directory kmod GUEST_KERNEL=$(DEBUG_KERNEL)
	@bash tests/guest/run.sh --cache $(DEBUG_CACHE) --out $(BUILD)/guest-$(DEBUG_KERNEL)-control \
	  --build $(BUILD) --kernel $(DEBUG_KERNEL) --kmod $(DEBUG_KMOD) --results $(RESULTS) \
	  --suites "$(abspath tests/guest/control/suite.sh)" --expect-reports "lockdep kasan" \
	  --mem $(GUEST_DEBUG_MEM) --timeout 900 --cmdline "$(GUEST_DEBUG_CMDLINE)"

# PREEMPT_RT: the module's suite (fuzzer and stress tests included) and the
# kernel-monitor library suite on both RT kernels.
check-guest-rt:
	@status=0; for k in 6.1-rt 6.12-rt; do \
	  $(MAKE) --no-print-directory check-guest GUEST_KERNEL=$$k GUEST_TIMEOUT=2400 \
	    GUEST_TEST_TIMEOUT=900 GUEST_SUITES="$(GUEST_6_12_SUITES)" || status=1; \
	done; exit $$status

# The module DKMS built (scripts/dkms-check.sh keeps one per kernel in
# $(BUILD)/dkms/modules/KVER/) instead of $(BUILD)/kmod's, in the default
# guest; results as guest-dkms/NAME.
check-dkms-guest: tests tools guest-tests $(GUEST_CACHE_ROOT)/kver
	@ko=$(abspath $(BUILD))/dkms/modules/$$(cat $(GUEST_CACHE_ROOT)/kver); \
	[ -f $$ko/mrmon.ko ] || $(MAKE) --no-print-directory check-dkms; \
	bash tests/guest/run.sh --cache $(GUEST_CACHE_ROOT) --out $(BUILD)/guest-dkms --build $(BUILD) \
	  --kernel 6.1 --kmod $$ko --label dkms --results $(RESULTS) \
	  --suites "$(abspath tests/guest/suites/10-mrmon.sh)" \
	  --mem $(GUEST_MEM) --timeout $(GUEST_TIMEOUT)
