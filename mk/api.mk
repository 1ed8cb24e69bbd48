# The public API's own checks (docs/api.md).

# tests/test-abi-old-header is built against 0.1.0's public header
# (tests/abi/) and linked against the shared library, as a program built
# before the ABI grew would be: it must still run.
ABI_OLD_TEST := $(BUILD)/tests/test-abi-old-header
$(ABI_OLD_TEST): tests/test-abi-old-header.c tests/abi/mrcache-0.1.h $(BUILD)/libmrcache.so.$(SOVERSION)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -lmrcache \
	  $(LDFLAGS) -ldl

# The tests of mrcache-info run the tool they find here.
$(BUILD)/tests/test-mrcache-info $(BUILD)/tests/test-mrcache-info-module: \
  CPPFLAGS += -DMRC_TOOLDIR='"$(abspath $(BUILD))/tools"'

# tests/test-man-pages reads the header, the tools and man/ in the tree.
$(BUILD)/tests/test-man-pages: CPPFLAGS += -DMRC_SRCDIR='"$(CURDIR)"'
