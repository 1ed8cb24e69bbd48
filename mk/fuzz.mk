# libFuzzer harness of the library (tests/fuzz/): `make fuzz` builds it,
# `make check-fuzz` (part of `make check`) runs each configuration for
# FUZZ_TIME seconds over the corpus kept in tests/fuzz/corpus/, plus the
# negative control that must find a stale registration.
FUZZ_CC     ?= clang
FUZZ_TIME   ?= 15
FUZZ_OUT    := $(BUILD)/fuzz
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -D_GNU_SOURCE \
               -Iinclude -Ilib -Itests/util
CHECK_SUITES += check-fuzz
CLEAN_EXTRA  += $(FUZZ_OUT)

.PHONY: fuzz check-fuzz
fuzz: $(FUZZ_OUT)/fuzz-cache

# The library is rebuilt from source with the fuzzer's instrumentation.
$(FUZZ_OUT)/fuzz-cache: tests/fuzz/fuzz-cache.c tests/util/testbackend.c $(LIB_SRC) $(LIB_HDR) $(wildcard hooks/*.c) $(BPF_SKEL)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(LIB_CFLAGS) -o $@ tests/fuzz/fuzz-cache.c \
	  tests/util/testbackend.c $(LIB_SRC) $(wildcard hooks/*.c) $(LIB_LIBS) -ldl -pthread

check-fuzz: $(FUZZ_OUT)/fuzz-cache
	@FUZZ=$(abspath $(FUZZ_OUT)/fuzz-cache) FUZZ_TIME=$(FUZZ_TIME) \
	  MRC_TEST_LOGDIR=$(abspath $(BUILD))/logs/fuzz \
	  bash tests/run.sh --suite fuzz --results $(RESULTS) --timeout 120 \
	  tests/fuzz/fuzz-none.sh tests/fuzz/fuzz-hooks.sh tests/fuzz/fuzz-uffd.sh \
	  tests/fuzz/fuzz-negative.sh
