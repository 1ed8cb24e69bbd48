# hooks monitor: libmrcache's own free/munmap/... run before a sanitizer's
# runtime is initialised (its interceptors resolve symbols with dlsym, which
# frees through them), so they must not carry that sanitizer's checks.
# What they call once a cache exists (hooks_fanout.c) stays instrumented,
# so TSan sees its synchronisation.
HOOKS_NOSAN_OBJ := $(BUILD)/hooks/malloc.o $(BUILD)/hooks/intercept.o $(BUILD)/hooks/file.o
$(HOOKS_NOSAN_OBJ): CFLAGS += $(if $(SAN),-fno-sanitize=all)

# test-hooks-as-needed runs one program linked against the shared libraries
# three ways: as the README once said (-lmrcache-hooks before -lmrcache)
# under --as-needed, which drops libmrcache-hooks from a program that calls
# none of its functions; with the link line the README and mrcache-hooks.pc
# give now; and without libmrcache-hooks at all.
HOOKS_LINK_PROGS := $(addprefix $(BUILD)/tests/hooks-link-,as-needed fixed none)
HOOKS_LINK_FLAGS_as-needed := -Wl,--as-needed -lmrcache-hooks -lmrcache
HOOKS_LINK_FLAGS_fixed := -Wl,--as-needed -Wl,--push-state,--no-as-needed \
	-lmrcache-hooks -Wl,--pop-state -lmrcache
HOOKS_LINK_FLAGS_none := -lmrcache
# (This file is read before the Makefile names LIB_SO and HOOKS_SO.)
$(HOOKS_LINK_PROGS): $(BUILD)/tests/hooks-link-%: tests/hooks-link-prog.c \
		$(BUILD)/libmrcache.so.$(SOVERSION) $(BUILD)/libmrcache-hooks.so.$(SOVERSION)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD) \
	  -Wl,-rpath,$(abspath $(BUILD)) $(HOOKS_LINK_FLAGS_$*) $(LDFLAGS) -ldl
$(BUILD)/tests/test-hooks-as-needed $(BUILD)/tests/test-monitor-auto-uffd \
	$(BUILD)/tests/test-uffd-fork-child: $(HOOKS_LINK_PROGS)

# test-hooks-static runs a fully static program with the hooks monitor,
# which must refuse to start.  A sanitizer's runtime cannot link -static:
# there the program is not built and the test skips.  Nor can a system
# without libc.a or liburing.a (Fedora installs neither by default): the
# build goes on without it, and the test skips saying so.
HOOKS_STATIC_PROG := $(if $(SAN),,$(BUILD)/tests/hooks-static-prog)
$(BUILD)/tests/hooks-static-prog: tests/hooks-static-prog.c \
		$(BUILD)/libmrcache.a $(BUILD)/libmrcache-hooks.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -static -o $@ $< \
	  -Wl,--whole-archive $(BUILD)/libmrcache-hooks.a -Wl,--no-whole-archive \
	  $(BUILD)/libmrcache.a $(LDFLAGS) $(LIB_LIBS) || \
	  { rm -f $@; echo "$@: cannot link -static here: test-hooks-static skips"; }
$(BUILD)/tests/test-hooks-static: $(HOOKS_STATIC_PROG)

# test-uffd-file-gaps runs test-guarantee-file built without
# libmrcache-hooks: the uffd monitor alone, and what the kernel never
# tells it.
$(BUILD)/tests/nohooks-guarantee-file: tests/test-guarantee-file.c \
		$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/util/*.c)) $(BUILD)/libmrcache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/util $(CFLAGS) $(LIB_CFLAGS) -o $@ $< \
	  $(TESTUTIL_OBJ) $(LIB_A) $(LDFLAGS) $(LIB_LIBS) -ldl
$(BUILD)/tests/test-uffd-file-gaps: $(BUILD)/tests/nohooks-guarantee-file

# test-uffd-thread-gaps runs test-stale-threads built without
# libmrcache-hooks: uffd alone, another thread's unmap seen late.
$(BUILD)/tests/nohooks-stale-threads: tests/test-stale-threads.c \
		$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/util/*.c)) $(BUILD)/libmrcache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/util $(CFLAGS) $(LIB_CFLAGS) -o $@ $< \
	  $(TESTUTIL_OBJ) $(LIB_A) $(LDFLAGS) $(LIB_LIBS) -ldl
$(BUILD)/tests/test-uffd-thread-gaps: $(BUILD)/tests/nohooks-stale-threads $(HOOKS_LINK_PROGS)
