# Fault-injection tests that redirect the library's allocations (ld --wrap).
FAULT_WRAP := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc \
              -Wl,--wrap=aligned_alloc -Wl,--wrap=free
$(BUILD)/tests/test-fault-alloc: LDFLAGS += $(FAULT_WRAP)
