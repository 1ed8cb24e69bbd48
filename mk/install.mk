# check-install: what a user of the installed library meets (tests/install/):
# make install's layout and make uninstall, the hooks' link lines
# (pkg-config, --as-needed, static), examples/ built with pkg-config and
# with CMake against fresh installs, and the README's walkthrough as
# written.  Each test installs into its own $(BUILD)/install-check/NAME.
INSTALL_TESTS := $(filter-out tests/install/lib.sh,$(sort $(wildcard tests/install/*.sh)))
CHECK_SUITES  += check-install

.PHONY: check-install
check-install: all
	@MRC_TEST_BUILD=$(abspath $(BUILD)) bash tests/run.sh --suite install \
	  --results $(RESULTS) --timeout 300 $(INSTALL_TESTS)
