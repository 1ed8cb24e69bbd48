# mrcache - GNU make build.  `make`, `make check`, `make install`.
# Sanitizer builds: `make check-host SAN=asan` / `SAN=tsan` (own build dir).
# Component fragments live in mk/*.mk; each owns its targets and may add to
# LIB_CFLAGS, LIB_LIBS, CHECK_SUITES, TOOLS_EXTRA and CLEAN_EXTRA.

# The fragments' rules come before `all:`; a bare `make` must still build.
.DEFAULT_GOAL := all

prefix      ?= /usr/local
libdir      ?= $(prefix)/lib
includedir  ?= $(prefix)/include
bindir      ?= $(prefix)/bin
pkgconfigdir ?= $(libdir)/pkgconfig
cmakedir    ?= $(libdir)/cmake/mrcache
datarootdir ?= $(prefix)/share
mandir      ?= $(datarootdir)/man
docdir      ?= $(datarootdir)/doc/mrcache
DESTDIR     ?=
# $(call prefix_rel,DIR): DIR relative to $(prefix), empty when outside it.
prefix_rel   = $(patsubst $(prefix)/%,%,$(filter $(prefix)/%,$1))

CC          ?= cc
SAN         ?=
WERROR      ?=
# The one place the version is written: include/mrcache.h's MRCACHE_VERSION*
# macros must say the same (tests/test-version.c asks `make print-version`).
VERSION     := 0.2.0
SOVERSION   := 0
# What an installed library's file name carries after .so.$(SOVERSION):
# libmrcache.so.0.2.0 for VERSION 0.2.0.
SO_MINOR    := $(patsubst $(SOVERSION).%,%,$(VERSION))

ifeq ($(SAN),)
BUILD       ?= build
else
BUILD       ?= build-$(SAN)
endif

WARN        := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
               -Wno-unused-parameter
ifneq ($(WERROR),)
WARN        += -Werror
endif
SANFLAGS_asan := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SANFLAGS_tsan := -fsanitize=thread -fno-omit-frame-pointer
SANFLAGS    := $(SANFLAGS_$(SAN))
OPT         ?= -O2
CPPFLAGS    += -Iinclude -Ilib -D_GNU_SOURCE
CFLAGS      ?= $(OPT) -g
CFLAGS      += -std=gnu11 -pthread -fPIC $(WARN) $(SANFLAGS)
LDFLAGS     += -pthread $(SANFLAGS)

LIB_CFLAGS  :=
LIB_LIBS    := -luring
CHECK_SUITES := check-host
TOOLS_EXTRA :=
CLEAN_EXTRA :=
# What `make install` puts down, by kind (docs/install.md); mk/*.mk fragments
# add their own files.  `make uninstall` removes the same lists, so the two
# cannot drift apart.
INSTALL_SOLIBS   :=	# NAME.so.$(SOVERSION), each with its NAME.so link
INSTALL_DSOS     :=	# unversioned shared objects (LD_PRELOAD libraries)
INSTALL_ARCHIVES :=
INSTALL_HEADERS  :=	# into $(includedir)/mrcache/
INSTALL_PCS      :=	# NAME.pc.in, made into $(pkgconfigdir)/NAME.pc
INSTALL_BINS     :=

# One folder per layer (docs/architecture.md): lib/cache, lib/monitor (bpf in
# its own folder), lib/backend, lib/common.
LIB_SRC     := $(sort $(wildcard lib/*/*.c lib/*/*/*.c))
LIB_HDR     := $(sort $(wildcard lib/*/*.h lib/*/*/*.h))

-include $(sort $(wildcard mk/*.mk))

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_SO      := $(BUILD)/libmrcache.so.$(SOVERSION)
LIB_A       := $(BUILD)/libmrcache.a

# The hooks monitor's interposed libc calls: a library of their own, so
# that linking libmrcache does not replace munmap/free for the whole
# program (that breaks other hook owners, such as UCX's).
HOOKS_SRC   := $(sort $(wildcard hooks/*.c))
HOOKS_OBJ   := $(HOOKS_SRC:%.c=$(BUILD)/%.o)
HOOKS_SO    := $(BUILD)/libmrcache-hooks.so.$(SOVERSION)
HOOKS_A     := $(BUILD)/libmrcache-hooks.a
# A static link must take every interposer, wanted or not yet referenced.
HOOKS_LINK  := -Wl,--whole-archive $(HOOKS_A) -Wl,--no-whole-archive

TESTUTIL_SRC := $(sort $(wildcard tests/util/*.c))
TESTUTIL_OBJ := $(TESTUTIL_SRC:%.c=$(BUILD)/%.o)
TEST_SRC    := $(sort $(wildcard tests/test-*.c))
TEST_BIN    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

TOOL_DIRS   := $(sort $(dir $(wildcard tools/*/main.c)))
TOOL_NAMES  := $(patsubst tools/%/,%,$(TOOL_DIRS))
TOOL_BIN    := $(TOOL_NAMES:%=$(BUILD)/tools/%)
# test-tools-help runs every tool (the ones built) with --help.
$(BUILD)/tests/test-tools-help: CPPFLAGS += -DMRC_TOOL_NAMES='"$(TOOL_NAMES)"'
# Tests that read the source tree (the docs, the sources) find it here.
$(BUILD)/tests/test-env-documented $(BUILD)/tests/test-version: CPPFLAGS += -DMRC_SRCDIR='"$(CURDIR)"'

.PHONY: all lib tests tools check check-host install installable uninstall clean deps demo bench print-version
all: lib tests tools $(TOOLS_EXTRA)
lib: $(LIB_SO) $(LIB_A) $(HOOKS_SO) $(HOOKS_A) $(BUILD)/mrcache.pc
tests: $(TEST_BIN)
tools: $(TOOL_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LIB_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_SO): $(LIB_OBJ) lib/libmrcache.map
	$(CC) -shared -Wl,-soname,libmrcache.so.$(SOVERSION) \
	  -Wl,--version-script=lib/libmrcache.map $(LDFLAGS) -o $@ $(LIB_OBJ) $(LIB_LIBS)
	ln -sf libmrcache.so.$(SOVERSION) $(BUILD)/libmrcache.so

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(HOOKS_SO): $(HOOKS_OBJ) hooks/libmrcache-hooks.map $(LIB_SO)
	$(CC) -shared -Wl,-soname,libmrcache-hooks.so.$(SOVERSION) \
	  -Wl,--version-script=hooks/libmrcache-hooks.map $(LDFLAGS) -o $@ $(HOOKS_OBJ) \
	  -L$(BUILD) -lmrcache -ldl
	ln -sf libmrcache-hooks.so.$(SOVERSION) $(BUILD)/libmrcache-hooks.so

$(HOOKS_A): $(HOOKS_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# Made again at install time too, so a prefix given only to `make install`
# is the one recorded.
# libdir and includedir in ${prefix} terms when under it, so that
# `pkg-config --define-variable=prefix=DIR/usr` reads a DESTDIR tree.
pc_path = $(if $(call prefix_rel,$1),$${prefix}/$(call prefix_rel,$1),$1)
PC_SED = sed -e 's|@prefix@|$(prefix)|' -e 's|@libdir@|$(call pc_path,$(libdir))|' \
	    -e 's|@includedir@|$(call pc_path,$(includedir))|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS@|$(LIB_LIBS)|'

$(BUILD)/mrcache.pc: mrcache.pc.in Makefile
	@mkdir -p $(BUILD)
	$(PC_SED) mrcache.pc.in > $@

# Tests and tools link the hooks library too, so that every monitor runs.
$(BUILD)/tests/%: tests/%.c $(TESTUTIL_OBJ) $(HOOKS_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/util $(CFLAGS) $(LIB_CFLAGS) -o $@ $< $(TESTUTIL_OBJ) $(HOOKS_LINK) $(LIB_A) $(LDFLAGS) $(LIB_LIBS) -ldl

# tools/common/: what several tools share (the SVG writer, units).
TOOL_COMMON := $(wildcard tools/common/*.c tools/common/*.h)
.SECONDEXPANSION:
$(BUILD)/tools/%: $$(wildcard tools/%/*.c) $$(wildcard tools/%/*.h) $(TOOL_COMMON) $(HOOKS_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itools/$* -Itools/common $(CFLAGS) $(LIB_CFLAGS) $(TOOL_CFLAGS_$*) -o $@ \
	  $(filter %.c,$^) $(HOOKS_LINK) $(LIB_A) $(LDFLAGS) $(LIB_LIBS) $(TOOL_LIBS_$*) -ldl

deps:
	@bash scripts/deps.sh

print-version:
	@echo $(VERSION)

# The README's first command: the stale-registration hazard, then the fix.
demo: all
	$(BUILD)/tools/mrc-demo

# The README's second command: every suite, one summary line at the end.
# Each suite's wall time goes to $(BUILD)/timings.txt (TIMINGS=), printed
# before the summary: where the run's time goes (README.md, Tests).
TIMINGS ?= $(abspath $(BUILD))/timings.txt
check:
	@rm -f $(BUILD)/results.txt $(TIMINGS)
	@$(MAKE) --no-print-directory all
	@status=0; for s in $(CHECK_SUITES); do \
	  t0=$$(date +%s); \
	  $(MAKE) --no-print-directory $$s RESULTS=$(abspath $(BUILD))/results.txt || status=1; \
	  echo "$$s $$(( $$(date +%s) - t0 ))" >>$(TIMINGS); \
	done; bash tests/timings.sh $(TIMINGS); bash tests/summary.sh $(BUILD)/results.txt && exit $$status

RESULTS ?= $(abspath $(BUILD))/results.txt
TEST_TIMEOUT ?= 300
check-host: $(if $(SAN),,lib) tests tools
	@MRC_TEST_BUILD=$(abspath $(BUILD)) bash tests/run.sh --suite host$(SAN:%=-%) \
	  --results $(RESULTS) --timeout $(TEST_TIMEOUT) $(TEST_BIN)

# The installed files (docs/install.md).  The module's uapi header goes to
# $(includedir)/mrcache/mrmon.h, not $(includedir)/linux/, which belongs to
# the kernel's headers (linux-libc-dev).
INSTALL_SOLIBS   += $(LIB_SO) $(HOOKS_SO)
INSTALL_ARCHIVES += $(LIB_A) $(HOOKS_A)
INSTALL_HEADERS  += include/uapi/linux/mrmon.h
INSTALL_PCS      += mrcache.pc.in mrcache-hooks.pc.in
INSTALL_BINS     += $(TOOL_BIN)
INSTALL_MANS     := $(sort $(wildcard man/*.[137]))
# The licenses, and the documents the manual pages point to.
INSTALL_DOCS     := $(sort $(wildcard LICENSE*)) docs/mrc-prof.md docs/benchmarks.md
# valgrind's suppressions for the bpf monitor's loader (mrcache(7)).
INSTALL_SUPP     := valgrind/mrcache.supp
suppdir          ?= $(datarootdir)/mrcache/valgrind
CMAKE_FILES      := mrcache-config.cmake mrcache-config-version.cmake

# The CMake files find the rest relative to themselves, so a tree installed
# with DESTDIR, or moved, still works (CMAKE_PREFIX_PATH=DIR/usr): DIR
# becomes $${_mrcache_prefix}/DIR when it lies under $(prefix).
cmake_path  = $(if $(call prefix_rel,$1),$${_mrcache_prefix}/$(call prefix_rel,$1),$1)
cmake_up    = $(subst $(empty) ,/,$(foreach c,$(subst /, ,$(call prefix_rel,$(cmakedir))),..))
CMAKE_SED = sed -e 's|@PREFIX@|$(if $(call prefix_rel,$(cmakedir)),$${CMAKE_CURRENT_LIST_DIR}/$(cmake_up),$(prefix))|' \
	    -e 's|@LIBDIR@|$(call cmake_path,$(libdir))|' \
	    -e 's|@INCLUDEDIR@|$(call cmake_path,$(includedir))|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@VERSION_MAJOR@|$(firstword $(subst ., ,$(VERSION)))|' \
	    -e 's|@SOVERSION@|$(SOVERSION)|' -e 's|@LIBS@|$(LIB_LIBS)|'

# Everything `make install` copies, built (debian/rules builds this).
installable: lib tools $(INSTALL_SOLIBS) $(INSTALL_DSOS) $(INSTALL_ARCHIVES) $(INSTALL_BINS)

# NAME.so.$(VERSION) is the file, NAME.so.$(SOVERSION) (the soname) and
# NAME.so (the link editor's) the links, as liburing and rdma-core install.
define install_solib
	install -m 755 $1 $(DESTDIR)$(libdir)/$(notdir $1).$(SO_MINOR)
	ln -sf $(notdir $1).$(SO_MINOR) $(DESTDIR)$(libdir)/$(notdir $1)
	ln -sf $(notdir $1) $(DESTDIR)$(libdir)/$(notdir $(1:.$(SOVERSION)=))

endef
define install_each
	$(if $2,install -m $1 $2 $3)

endef
define made_from
	$1 $2 > $3

endef

install: installable
	install -d $(DESTDIR)$(libdir) $(DESTDIR)$(includedir)/mrcache $(DESTDIR)$(pkgconfigdir) \
	  $(DESTDIR)$(cmakedir) $(DESTDIR)$(bindir) $(DESTDIR)$(docdir) $(DESTDIR)$(suppdir) \
	  $(addprefix $(DESTDIR)$(mandir)/man,$(sort $(subst .,,$(suffix $(INSTALL_MANS)))))
	$(foreach f,$(INSTALL_SOLIBS),$(call install_solib,$f))
	$(call install_each,755,$(INSTALL_DSOS),$(DESTDIR)$(libdir)/)
	$(call install_each,644,$(INSTALL_ARCHIVES),$(DESTDIR)$(libdir)/)
	install -m 644 include/mrcache.h $(DESTDIR)$(includedir)/mrcache.h
	$(call install_each,644,$(INSTALL_HEADERS),$(DESTDIR)$(includedir)/mrcache/)
	$(foreach f,$(INSTALL_PCS),$(call made_from,$(PC_SED),$f,$(DESTDIR)$(pkgconfigdir)/$(basename $f)))
	$(foreach f,$(CMAKE_FILES),$(call made_from,$(CMAKE_SED),cmake/$f.in,$(DESTDIR)$(cmakedir)/$f))
	$(call install_each,755,$(INSTALL_BINS),$(DESTDIR)$(bindir)/)
	$(foreach f,$(INSTALL_MANS),$(call install_each,644,$f,$(DESTDIR)$(mandir)/man$(subst .,,$(suffix $f))/))
	$(call install_each,644,$(INSTALL_DOCS),$(DESTDIR)$(docdir)/)
	$(call install_each,644,$(INSTALL_SUPP),$(DESTDIR)$(suppdir)/)

# Also the uapi header's old place, $(includedir)/linux/mrmon.h (0.1.0).
uninstall:
	rm -f $(foreach f,$(INSTALL_SOLIBS),$(DESTDIR)$(libdir)/$(notdir $f) \
	    $(DESTDIR)$(libdir)/$(notdir $f).$(SO_MINOR) \
	    $(DESTDIR)$(libdir)/$(notdir $(f:.$(SOVERSION)=))) \
	  $(addprefix $(DESTDIR)$(libdir)/,$(notdir $(INSTALL_DSOS) $(INSTALL_ARCHIVES))) \
	  $(DESTDIR)$(includedir)/mrcache.h $(DESTDIR)$(includedir)/linux/mrmon.h \
	  $(addprefix $(DESTDIR)$(includedir)/mrcache/,$(notdir $(INSTALL_HEADERS))) \
	  $(addprefix $(DESTDIR)$(pkgconfigdir)/,$(basename $(INSTALL_PCS))) \
	  $(addprefix $(DESTDIR)$(cmakedir)/,$(CMAKE_FILES)) \
	  $(addprefix $(DESTDIR)$(bindir)/,$(notdir $(INSTALL_BINS))) \
	  $(foreach f,$(INSTALL_MANS),$(DESTDIR)$(mandir)/man$(subst .,,$(suffix $f))/$(notdir $f)) \
	  $(addprefix $(DESTDIR)$(docdir)/,$(notdir $(INSTALL_DOCS))) \
	  $(addprefix $(DESTDIR)$(suppdir)/,$(notdir $(INSTALL_SUPP)))
	rmdir $(DESTDIR)$(includedir)/mrcache $(DESTDIR)$(cmakedir) $(DESTDIR)$(docdir) \
	  $(DESTDIR)$(suppdir) $(DESTDIR)$(datarootdir)/mrcache 2>/dev/null || true

clean:
	rm -rf build build-asan build-tsan $(CLEAN_EXTRA)

-include $(LIB_OBJ:.o=.d) $(HOOKS_OBJ:.o=.d) $(TESTUTIL_OBJ:.o=.d)
