# The QEMU guest harness (tests/guest/README.md): `make check-guest`, on
# another kernel `make check-guest GUEST_KERNEL=6.12` (mk/kmod.mk).
# Other fragments extend it with
#   GUEST_MODULES += rdma_rxe ib_uverbs    modules modprobe'd in the guest
#   GUEST_DEPS    += $(BUILD)/...          host files the suites need built
# and add their own suite scripts as tests/guest/suites/NN-name.sh.
GUEST_OUT      = $(BUILD)/guest$(GUEST_KSUFFIX)
GUEST_MODULES ?=
GUEST_DEPS    ?=
GUEST_MEM     ?= 1G
GUEST_TIMEOUT ?= 900
# Each test program's limit inside the guest (slower kernels raise it).
GUEST_TEST_TIMEOUT ?= 300
# More kernel parameters for the guest (the debug kernel's, mk/guest-debug.mk).
GUEST_CMDLINE ?=
# NAME=VALUE words exported to the guest's tests.
GUEST_ENV ?=
GUEST_SUITES   = $(sort $(wildcard tests/guest/suites/*.sh))
GUEST_TEST_SRC := $(sort $(wildcard tests/guest/test-*.c))
GUEST_TEST_BIN := $(GUEST_TEST_SRC:tests/guest/%.c=$(BUILD)/guest-tests/%)
GUEST_BENCH_BIN := $(patsubst tests/guest/%.c,$(BUILD)/guest-tests/%,$(wildcard tests/guest/bench-*.c))
CHECK_SUITES  += check-guest

.PHONY: check-guest guest-tests guest-bench guest-soak
guest-tests: $(GUEST_TEST_BIN) $(GUEST_BENCH_BIN)

# (LIB_A and TESTUTIL_OBJ are defined after the fragments: spell them out.)
$(BUILD)/guest-tests/%: tests/guest/%.c $(wildcard tests/guest/*.h) \
  $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/util/*.c)) $(BUILD)/libmrcache-hooks.a $(BUILD)/libmrcache.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/util -Itests/guest $(CFLAGS) $(LIB_CFLAGS) -o $@ $< \
	  $(TESTUTIL_OBJ) $(HOOKS_LINK) $(LIB_A) $(LDFLAGS) $(LIB_LIBS) -ldl

check-guest: lib tests tools guest-tests kmod $(GUEST_DEPS)
	@bash tests/guest/run.sh --cache $(GUEST_CACHE) --out $(GUEST_OUT) --build $(BUILD) \
	  --kernel $(GUEST_KERNEL) --kmod $(KMOD_OUT) \
	  --results $(RESULTS) --modules "$(GUEST_MODULES)" --suites "$(abspath $(GUEST_SUITES))" \
	  --mem $(GUEST_MEM) --timeout $(GUEST_TIMEOUT) --test-timeout $(GUEST_TEST_TIMEOUT) \
	  --cmdline "$(GUEST_CMDLINE)" --env "$(GUEST_ENV)"

# The module's suite on Debian's 6.12, and of the library's suite the
# kernel-monitor and stale-scenario tests (.ci/run runs it after the full
# 6.1 guest; about 1 minute).  The rest of the library suite is the
# same user-space code over the same module as in the 6.1 guest; and
# test-kernel-eintr (2 minutes under emulation) checks the library's retry,
# which no kernel version changes.
GUEST_6_12_SUITES := tests/guest/suites/10-mrmon.sh tests/guest/suites/50-library.sh
GUEST_6_12_ENV    := GUEST_LIB_TESTS=kernel,guarantee,stale-threads GUEST_LIB_SKIP=kernel-eintr
.PHONY: check-guest-6.12
check-guest-6.12:
	@$(MAKE) --no-print-directory check-guest GUEST_KERNEL=6.12 GUEST_SUITES="$(GUEST_6_12_SUITES)" \
	  GUEST_ENV="$(GUEST_ENV) $(GUEST_6_12_ENV)"

# The module's figures (docs/mrmon.md): one guest run of bench-mrmon and
# the spurious-invalidation count; output in $(GUEST_OUT)/res/logs/.
guest-bench: guest-tests kmod
	@bash tests/guest/run.sh --cache $(GUEST_CACHE) --out $(GUEST_OUT) --build $(BUILD) \
	  --kernel $(GUEST_KERNEL) --kmod $(KMOD_OUT) \
	  --results $(GUEST_OUT)/bench-results.txt --suites "$(abspath tests/guest/bench.sh)" \
	  --modules "$(GUEST_MODULES)" \
	  --mem $(GUEST_MEM) --timeout $(GUEST_TIMEOUT) --clock tsc

# The stress and leak tests at full size (10^5 each), about 6 minutes.
guest-soak: guest-tests kmod
	@bash tests/guest/run.sh --cache $(GUEST_CACHE) --out $(GUEST_OUT) --build $(BUILD) \
	  --kernel $(GUEST_KERNEL) --kmod $(KMOD_OUT) \
	  --results $(GUEST_OUT)/soak-results.txt --suites "$(abspath tests/guest/soak.sh)" \
	  --mem $(GUEST_MEM) --timeout $(GUEST_TIMEOUT)

# The kernel-log check's filter of expected reports, and its control, on the
# host (tests/guest/kernel-reports-test.sh; a second).
CHECK_SUITES += check-kernel-reports
.PHONY: check-kernel-reports
check-kernel-reports:
	@out=$$(bash tests/guest/kernel-reports-test.sh); rc=$$?; \
	  printf '%s\n' "$$out" >>$(RESULTS); printf '%s\n' "$$out" | grep -v '^PASS'; exit $$rc
