# mrc-audit (tools/mrc-audit, docs/audit.md): the front end is an ordinary
# tool (tools/mrc-audit/main.c); the interposition library it preloads,
# $(BUILD)/libmrc-audit.so, is built here from tools/mrc-audit/preload/ with
# libibverbs's headers (it does not link libibverbs: it finds the real calls
# with dlvsym(RTLD_NEXT)).  Without the headers (or with `make VERBS=`) only
# the front end is built, and it says it cannot find the library.
# The guest suite tests/guest/suites/45-audit.sh runs tests/guest/audit/
# under it over Soft-RoCE.
VERBS ?= $(shell pkg-config --exists libibverbs 2>/dev/null && echo yes)
AUDIT_SO      := $(BUILD)/libmrc-audit.so
# tools/common/json.c: the JSON string writer mrc-bench uses too.
AUDIT_SRC     := $(sort $(wildcard tools/mrc-audit/preload/*.c)) tools/common/json.c
AUDIT_HDR     := $(wildcard tools/mrc-audit/preload/*.h)
AUDIT_TESTS   := $(patsubst tests/guest/audit/%.c,$(BUILD)/audit/%,$(wildcard tests/guest/audit/*.c))
# Where the front end looks for the library last (after MRC_AUDIT_LIB and
# the places beside itself).
TOOL_CFLAGS_mrc-audit += -DMRC_AUDIT_LIBDIR='"$(libdir)"'

ifeq ($(VERBS),yes)
TOOLS_EXTRA   += $(AUDIT_SO) $(AUDIT_TESTS)
GUEST_DEPS    += $(AUDIT_SO) $(AUDIT_TESTS) $(BUILD)/tools/mrc-audit
INSTALL_DSOS  += $(AUDIT_SO)

# No sanitizer: it is loaded into programs built without one.
$(AUDIT_SO): $(AUDIT_SRC) $(AUDIT_HDR) tools/mrc-audit/preload/libmrc-audit.map
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itools/common $(filter-out -fsanitize=%,$(CFLAGS)) -fvisibility=hidden -shared \
	  -Wl,-soname,libmrc-audit.so -Wl,--version-script=tools/mrc-audit/preload/libmrc-audit.map \
	  $(filter-out -fsanitize=%,$(LDFLAGS)) -o $@ $(AUDIT_SRC) -ldl

# The guest's verbs program: an ordinary verbs program (the loopback pair
# of tools/mrc-rdma), which knows nothing of the audit.
$(BUILD)/audit/%: tests/guest/audit/%.c tools/mrc-rdma/loop.c tools/mrc-rdma/loop.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DMRC_HAVE_VERBS -Itools/mrc-rdma $(CFLAGS) -o $@ $< tools/mrc-rdma/loop.c \
	  $(LDFLAGS) $(VERBS_LIBS)
endif

# The hot path's cost per SGE, without a device (docs/audit.md "Overhead").
ifeq ($(VERBS),yes)
TOOLS_EXTRA += $(BUILD)/tools/mrc-audit-check-cost
GUEST_DEPS  += $(BUILD)/tools/mrc-audit-check-cost
$(BUILD)/tools/mrc-audit-check-cost: tools/mrc-audit/bench/check-cost.c $(filter-out %/verbs.c,$(AUDIT_SRC)) $(AUDIT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itools/mrc-audit/preload -Itools/common $(filter-out -fsanitize=%,$(CFLAGS)) -o $@ \
	  $(filter %.c,$^) $(filter-out -fsanitize=%,$(LDFLAGS)) -ldl

# The witness on its own (tests/test-audit-witness.c runs it).
TOOLS_EXTRA += $(BUILD)/tools/mrc-audit-witness-check
$(BUILD)/tools/mrc-audit-witness-check: tools/mrc-audit/bench/witness-check.c $(filter-out %/verbs.c,$(AUDIT_SRC)) $(AUDIT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itools/mrc-audit/preload -Itools/common $(filter-out -fsanitize=%,$(CFLAGS)) -o $@ \
	  $(filter %.c,$^) $(filter-out -fsanitize=%,$(LDFLAGS)) -ldl
$(BUILD)/tests/test-audit-witness: $(BUILD)/tools/mrc-audit-witness-check
endif
