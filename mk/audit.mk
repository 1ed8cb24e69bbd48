# mrc-audit (tools/mrc-audit, docs/audit.md): the front end is an ordinary
# tool (tools/mrc-audit/main.c); the interposition library it preloads,
# $(BUILD)/libmrc-audit.so, is built here from tools/mrc-audit/preload/ with
# libibverbs's headers (it does not link libibverbs: it finds the real calls
# with dlvsym(RTLD_NEXT)).  Without the headers (or with `make VERBS=`) only
# the front end is built, and it says it cannot find the library.
VERBS ?= $(shell pkg-config --exists libibverbs 2>/dev/null && echo yes)
AUDIT_SO      := $(BUILD)/libmrc-audit.so
AUDIT_SRC     := $(sort $(wildcard tools/mrc-audit/preload/*.c))
AUDIT_HDR     := $(wildcard tools/mrc-audit/preload/*.h)
# Where the front end looks for the library last (after MRC_AUDIT_LIB and
# the places beside itself).
TOOL_CFLAGS_mrc-audit += -DMRC_AUDIT_LIBDIR='"$(libdir)"'

ifeq ($(VERBS),yes)
TOOLS_EXTRA   += $(AUDIT_SO)
INSTALL_DSOS  += $(AUDIT_SO)

# No sanitizer: it is loaded into programs built without one.
$(AUDIT_SO): $(AUDIT_SRC) $(AUDIT_HDR) tools/mrc-audit/preload/libmrc-audit.map
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(filter-out -fsanitize=%,$(CFLAGS)) -fvisibility=hidden -shared \
	  -Wl,-soname,libmrc-audit.so -Wl,--version-script=tools/mrc-audit/preload/libmrc-audit.map \
	  $(filter-out -fsanitize=%,$(LDFLAGS)) -o $@ $(AUDIT_SRC) -ldl
endif
