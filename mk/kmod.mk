# The mrmon kernel module (kmod/), built out of tree with Kbuild against the
# headers of the guest kernel (tests/guest/fetch-kernel.sh installs them).
# Not part of `all`: `make kmod`, and check-guest builds it.
# GUEST_KERNEL picks the guest kernel: 6.1 (the default), 6.1-rt, 6.12 or
# 6.12-rt.  The default keeps the unsuffixed paths (build/guest-cache,
# $(BUILD)/kmod, $(BUILD)/guest); any other kernel has its own cache
# (build/guest-cache/KERNEL), module ($(BUILD)/kmod-KERNEL) and guest
# output ($(BUILD)/guest-KERNEL), so several kernels coexist.
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
	kdir=$${KDIR:-/usr/src/linux-headers-$$(cat $(GUEST_CACHE)/kver)}; \
	sh kmod/probe.sh $$kdir kmod $(KMOD_OUT) && \
	MAKEFLAGS= $(MAKE) -C $$kdir M=$(abspath $(KMOD_OUT)) modules
