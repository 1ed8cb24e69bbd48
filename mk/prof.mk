# mrc-prof (tools/mrc-prof): symbolization needs elfutils' libdw.
# Its suite, check-prof, traces real programs and two helpers (tests/prof/).
TOOL_LIBS_mrc-prof := -ldw -lelf -lm

PROF_HELPERS := $(BUILD)/tests/prof/vm-workload $(BUILD)/tests/prof/io-mix \
  $(BUILD)/tests/prof/lib-workload $(BUILD)/tests/prof/app-frames \
  $(BUILD)/tests/prof/small-io $(BUILD)/tests/prof/bpf-io $(BUILD)/tests/prof/uring-io
PROF_TESTS := $(sort $(wildcard tests/prof/*.sh))
PROF_TESTS := $(filter-out tests/prof/lib.sh,$(PROF_TESTS))
TOOLS_EXTRA += $(PROF_HELPERS) $(BUILD)/tools/mrc-prof-filter-cost
CHECK_SUITES += check-prof

# Built like a user's program: no sanitizer, symbols kept for call sites.
$(BUILD)/tests/prof/%: tests/prof/%.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -O1 -g -pthread $(WARN) -o $@ $<

# lib-workload asks for the hooks monitor: libmrcache-hooks linked whole, as
# the tools link it (without it the monitor cannot start and libmrcache.sh
# skips).
$(BUILD)/tests/prof/lib-workload $(BUILD)/tests/prof/bpf-io $(BUILD)/tests/prof/uring-io: \
  $(BUILD)/tests/prof/%: \
  tests/prof/%.c $(BUILD)/libmrcache.a $(HOOKS_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(if $(filter %/lib-workload,$@),$(HOOKS_LINK)) \
	  $(BUILD)/libmrcache.a $(LDFLAGS) $(LIB_LIBS)

# Benchmark for tools/mrc-prof/overhead.sh: the filter's cost per syscall.
$(BUILD)/tools/mrc-prof-filter-cost: tools/mrc-prof/bench/filter-cost.c tools/mrc-prof/seccomp.c \
  tools/mrc-prof/seccomp.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itools/mrc-prof $(CFLAGS) -o $@ $(filter %.c,$^) $(LDFLAGS)

.PHONY: check-prof
check-prof: $(BUILD)/tools/mrc-prof $(PROF_HELPERS)
	@MRC_TEST_BUILD=$(abspath $(BUILD)) bash tests/run.sh --suite prof \
	  --results $(RESULTS) --timeout 120 $(PROF_TESTS)
