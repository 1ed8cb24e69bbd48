# The mrmon kernel module (kmod/), built out of tree with Kbuild against the
# headers of the guest kernel (tests/guest/fetch-kernel.sh installs them).
# Not part of `all`: `make kmod`, and check-guest builds it.
# GUEST_KERNEL picks the guest kernel: 6.1 (the default), 6.1-rt, 6.12 or
# 6.12-rt.  The default keeps the unsuffixed paths (build/guest-cache,
# $(BUILD)/kmod, $(BUILD)/guest); any other kernel has its own cache
# (build/guest-cache/KERNEL), module ($(BUILD)/kmod-KERNEL) and guest
# output ($(BUILD)/guest-KERNEL), so several kernels coexist.
# GUEST_KERNEL=debug-6.12 is built here (mk/guest-debug.mk); its cache
# names its build tree in kdir, used instead of /usr/src/linux-headers-*.
# KDIR=/path/to/kernel/build overrides the headers (e.g. a newer kernel).
GUEST_KERNEL ?= 6.1
GUEST_KSUFFIX := $(if $(filter 6.1,$(GUEST_KERNEL)),,-$(GUEST_KERNEL))
GUEST_CACHE_ROOT ?= build/guest-cache
GUEST_CACHE ?= $(GUEST_CACHE_ROOT)$(if $(GUEST_KSUFFIX),/$(GUEST_KERNEL))
KMOD_OUT    := $(BUILD)/kmod$(GUEST_KSUFFIX)
KMOD_KO     := $(KMOD_OUT)/mrmon.ko
KMOD_SRC    := $(wildcard kmod/*.c kmod/*.h kmod/probes/*.c) kmod/Kbuild kmod/probe.sh \
               include/uapi/linux/mrmon.h

.PHONY: kmod guest-kernel
kmod: $(KMOD_KO)
guest-kernel: $(GUEST_CACHE)/kver

$(GUEST_CACHE)/kver: tests/guest/fetch-kernel.sh
	bash tests/guest/fetch-kernel.sh $(GUEST_CACHE) $(GUEST_KERNEL)

$(KMOD_KO): $(KMOD_SRC) $(if $(KDIR),,$(GUEST_CACHE)/kver)
	@rm -rf $(KMOD_OUT) && mkdir -p $(KMOD_OUT)/include/uapi/linux
	cp kmod/Kbuild kmod/*.c kmod/*.h $(KMOD_OUT)/
	cp include/uapi/linux/mrmon.h $(KMOD_OUT)/include/uapi/linux/
	kdir=$${KDIR:-$$(cat $(GUEST_CACHE)/kdir 2>/dev/null || echo /usr/src/linux-headers-$$(cat $(GUEST_CACHE)/kver))}; \
	sh kmod/probe.sh $$kdir kmod $(KMOD_OUT) && \
	MAKEFLAGS= $(MAKE) -C $$kdir M=$(abspath $(KMOD_OUT)) modules

# What each compile probe resolves to on 6.1 and 6.12, against
# kmod/probes/expected.txt, and the module built with those answers, W=1
# and sparse (kmod/probe-check.sh; host only, about a minute).  Not in
# CHECK_SUITES: check-kmod-lint runs it, so CI builds each kernel once.
.PHONY: check-kmod-probes
check-kmod-probes:
	@bash kmod/probe-check.sh --results $(RESULTS) --work $(abspath $(BUILD))/kmod-probes
