# mrc-bench: the benchmark tool's flags, `make bench` and the smoke suite.
#
# UCX's ucs_rcache is a peer only when libucx-dev's headers are installed
# (the tool dlopen()s libucs in the UCX peer's own process, see
# tools/mrc-bench/peer_ucx.c); without them the peer reports itself
# unavailable and everything still builds.
ifneq ($(shell pkg-config --exists ucx-ucs 2>/dev/null && echo yes),)
TOOL_CFLAGS_mrc-bench := -DMRC_BENCH_UCX $(shell pkg-config --cflags ucx-ucs)
endif
TOOL_LIBS_mrc-bench := -ldl -lm

.PHONY: check-bench bench-guest
BENCH_ROUNDS ?= 9
BENCH_ARGS ?=

# Reproduces docs/benchmarks.md's figures: the full run as docs/bench-results.md,
# docs/bench.json and docs/bench-*.svg (about 15 minutes on 2 busy cores).
bench: $(BUILD)/tools/mrc-bench
	$(BUILD)/tools/mrc-bench --rounds $(BENCH_ROUNDS) --json docs/bench.json \
	  --svg docs --markdown docs/bench-results.md $(BENCH_ARGS) | tee $(BUILD)/bench.txt

# A few seconds: every workload once, tiny sizes, every peer that starts.
CHECK_SUITES += check-bench
check-bench: $(BUILD)/tools/mrc-bench
	@bash tools/mrc-bench/smoke.sh $(BUILD)/tools/mrc-bench $(RESULTS)

# The guest run (QEMU TCG, tests/guest/run.sh with this suite only): the
# kernel monitor's targets.  Not part of `bench` (it needs the guest kernel
# and mrmon built): `make bench-guest`, then its table is in
# $(BUILD)/guest-bench/res/bench/ and copied to docs/bench-guest.*.
BENCH_GUEST_OUT := $(BUILD)/guest-bench
bench-guest: $(BUILD)/tools/mrc-bench kmod
	@bash tests/guest/run.sh --cache $(GUEST_CACHE) --out $(BENCH_GUEST_OUT) \
	  --build $(BUILD) --kernel $(GUEST_KERNEL) --kmod $(KMOD_OUT) \
	  --results $(BENCH_GUEST_OUT)/results.txt \
	  --suites "$(abspath tools/mrc-bench/guest-bench.sh tests/guest/kdreg2/suite.sh)" \
	  --mem 2G --timeout 1800 --clock tsc
	cp $(BENCH_GUEST_OUT)/res/bench/bench-guest*.json \
	   $(BENCH_GUEST_OUT)/res/bench/bench-guest.txt docs/
