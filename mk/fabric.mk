# libfabric's MR cache served by mrmon (fabric/, docs/libfabric.md):
# $(BUILD)/libmrcache-fabric.so implements libfabric's fid_mem_monitor
# (fabric/mrmon_fi.h); $(BUILD)/libmrcache-fabric-preload.so imports it into
# an unmodified program (LD_PRELOAD).  Built when pkg-config finds libfabric
# (Debian: libfabric-dev); `make FABRIC=` builds without it.  The guest
# suite tests/guest/suites/70-fabric.sh runs the programs of
# tests/guest/fabric/ with the verbs provider over Soft-RoCE.
FABRIC ?= $(shell pkg-config --exists libfabric 2>/dev/null && echo yes)

FABRIC_SO    := $(BUILD)/libmrcache-fabric.so.$(SOVERSION)
FABRIC_PRELOAD := $(BUILD)/libmrcache-fabric-preload.so
FABRIC_TESTS := $(patsubst tests/guest/fabric/%.c,$(BUILD)/fabric/%,$(wildcard tests/guest/fabric/*.c))

ifeq ($(FABRIC),yes)
FABRIC_CFLAGS := $(shell pkg-config --cflags libfabric)
FABRIC_LIBS   := $(shell pkg-config --libs libfabric)
TOOLS_EXTRA   += $(FABRIC_SO) $(FABRIC_PRELOAD) $(FABRIC_TESTS)
GUEST_DEPS    += $(FABRIC_SO) $(FABRIC_PRELOAD) $(FABRIC_TESTS)
# libfabric's verbs provider connects through rdma_cm (besides rxe's
# modules), over rxe on a dummy netdev (it skips loopback interfaces).
GUEST_MODULES += configfs ib_cm iw_cm rdma_cm rdma_ucm dummy
# make install (the Makefile's INSTALL_* lists, docs/install.md).
INSTALL_SOLIBS  += $(FABRIC_SO)
INSTALL_DSOS    += $(FABRIC_PRELOAD)
INSTALL_HEADERS += fabric/mrmon_fi.h
INSTALL_PCS     += mrcache-fabric.pc.in

$(FABRIC_SO): fabric/mrmon_fi_monitor.c fabric/mrmon_fi.h fabric/libmrcache-fabric.map
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ifabric $(CFLAGS) $(FABRIC_CFLAGS) -shared \
	  -Wl,-soname,libmrcache-fabric.so.$(SOVERSION) -Wl,--version-script=fabric/libmrcache-fabric.map \
	  $(LDFLAGS) -o $@ $< $(FABRIC_LIBS)
	ln -sf libmrcache-fabric.so.$(SOVERSION) $(BUILD)/libmrcache-fabric.so

$(FABRIC_PRELOAD): fabric/mrmon_fi_preload.c fabric/mrmon_fi.h $(FABRIC_SO)
	$(CC) $(CPPFLAGS) -Ifabric $(CFLAGS) $(FABRIC_CFLAGS) -shared \
	  -Wl,-soname,libmrcache-fabric-preload.so $(LDFLAGS) -o $@ $< \
	  -L$(BUILD) -Wl,-rpath,'$$ORIGIN' -lmrcache-fabric $(FABRIC_LIBS)

# fabric-churn is an ordinary libfabric program: only fabric-import links
# the monitor library.
FABRIC_LINK_fabric-import := -L$(BUILD) -Wl,-rpath,'$$ORIGIN/..' -lmrcache-fabric

$(BUILD)/fabric/%: tests/guest/fabric/%.c $(FABRIC_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ifabric $(CFLAGS) $(FABRIC_CFLAGS) -o $@ $< \
	  $(LDFLAGS) $(FABRIC_LINK_$*) $(FABRIC_LIBS)
else
$(info fabric: no libfabric (pkg-config libfabric failed, or FABRIC= given): libmrcache-fabric.so and its guest tests are not built)
endif
