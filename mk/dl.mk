# Optional dependencies loaded at run time (lib/common/dl.h): libmrcache links
# libdl instead of libibverbs and libbpf.  The tests that link programs the
# way a user would find the source tree's header here.
LIB_LIBS += -ldl
$(BUILD)/tests/test-pkgconfig-link: CPPFLAGS += -DMRC_SRCDIR='"$(CURDIR)"'
