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

BENCH_ROUNDS ?= 7
BENCH_ARGS ?=

# Reproduces docs/benchmarks.md: the full run, its JSON and its plots.
bench: $(BUILD)/tools/mrc-bench
	$(BUILD)/tools/mrc-bench --rounds $(BENCH_ROUNDS) --json docs/bench.json \
	  --svg docs $(BENCH_ARGS) | tee $(BUILD)/bench.txt

# A few seconds: every workload once, tiny sizes, every peer that starts.
CHECK_SUITES += check-bench
check-bench: $(BUILD)/tools/mrc-bench
	@bash tools/mrc-bench/smoke.sh $(BUILD)/tools/mrc-bench $(RESULTS)
