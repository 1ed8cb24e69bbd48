# Installing the module the way clusters do (docs/install.md): the DKMS
# source tree, the udev rule and the modules-load.d entry.
#   make install-dkms [DESTDIR=...]     then: dkms install mrmon/$(VERSION)
# check-dkms builds that tree with dkms itself, in a scratch tree, against
# every kernel's headers installed here (scripts/dkms-check.sh), or those
# DKMS_KERNELS names (a glob after linux-headers-; .ci/run: no RT flavours).
dkmsdir        ?= /usr/src
udevrulesdir   ?= /usr/lib/udev/rules.d
modulesloaddir ?= /usr/lib/modules-load.d
DKMS_SRC       := $(DESTDIR)$(dkmsdir)/mrmon-$(VERSION)
CHECK_SUITES   += check-dkms
DKMS_KERNELS   ?= *-amd64

.PHONY: install-dkms uninstall-dkms check-dkms
install-dkms:
	install -d $(DKMS_SRC)/probes $(DKMS_SRC)/include/uapi/linux
	install -m 644 kmod/Kbuild kmod/Makefile kmod/*.c kmod/*.h $(DKMS_SRC)/
	install -m 755 kmod/probe.sh $(DKMS_SRC)/
	install -m 644 kmod/probes/*.c $(DKMS_SRC)/probes/
	install -m 644 include/uapi/linux/mrmon.h $(DKMS_SRC)/include/uapi/linux/
	sed 's/@VERSION@/$(VERSION)/g' kmod/dkms.conf.in >$(DKMS_SRC)/dkms.conf
	install -D -m 644 kmod/60-mrmon.rules $(DESTDIR)$(udevrulesdir)/60-mrmon.rules
	install -D -m 644 kmod/mrmon.modules-load.conf $(DESTDIR)$(modulesloaddir)/mrmon.conf

uninstall-dkms:
	rm -rf $(DKMS_SRC)
	rm -f $(DESTDIR)$(udevrulesdir)/60-mrmon.rules $(DESTDIR)$(modulesloaddir)/mrmon.conf

check-dkms:
	@bash scripts/dkms-check.sh --results $(RESULTS) --work $(abspath $(BUILD))/dkms --version $(VERSION) \
	  --kernels '$(DKMS_KERNELS)'
