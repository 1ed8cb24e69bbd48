# kdreg2 (HPE's HewlettPackard/shs-kdreg2) as a peer of mrmon in the guest
# benchmarks: `make guest-bench KDREG2_SRC=DIR` or `make bench-guest
# KDREG2_SRC=DIR`, DIR a checkout of it.  Its sources stay in DIR: they are
# copied to $(BUILD)/kdreg2/src and built there out of tree against the
# guest kernel's headers (KDIR as for kmod, mk/kmod.mk); bench-kdreg2
# (tests/guest/kdreg2/) includes its public header from DIR/include.
# Without KDREG2_SRC the directory is removed and the guest suite
# (tests/guest/kdreg2/suite.sh) reports the peer skipped, with the reason.
KDREG2_OUT := $(BUILD)/kdreg2

.PHONY: kdreg2-peer
guest-bench bench-guest: kdreg2-peer

ifeq ($(KDREG2_SRC),)
kdreg2-peer:
	@rm -rf $(KDREG2_OUT)
else
kdreg2-peer: $(KDREG2_OUT)/kdreg2.ko $(KDREG2_OUT)/bench-kdreg2

$(KDREG2_OUT)/kdreg2.ko: | $(if $(KDIR),,guest-kernel)
	@rm -rf $(KDREG2_OUT)/src && mkdir -p $(KDREG2_OUT)
	cp -r $(KDREG2_SRC) $(KDREG2_OUT)/src
	git -C $(KDREG2_SRC) rev-parse HEAD >$(KDREG2_OUT)/commit 2>/dev/null || echo unknown >$(KDREG2_OUT)/commit
	kdir=$${KDIR:-$$(cat $(GUEST_CACHE)/kdir 2>/dev/null || echo /usr/src/linux-headers-$$(cat $(GUEST_CACHE)/kver))}; \
	MAKEFLAGS= $(MAKE) -C $(KDREG2_OUT)/src KDIR=$$kdir modules
	cp $(KDREG2_OUT)/src/kdreg2.ko $@

$(KDREG2_OUT)/bench-kdreg2: tests/guest/kdreg2/bench-kdreg2.c $(wildcard tests/guest/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/util -Itests/guest -I$(abspath $(KDREG2_SRC))/include $(CFLAGS) \
	  -o $@ $< $(LDFLAGS) -luring -pthread
endif
