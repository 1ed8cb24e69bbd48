# hooks monitor: libmrcache's own free/munmap/... run before a sanitizer's
# runtime is initialised (its interceptors resolve symbols with dlsym, which
# frees through them), so they must not carry that sanitizer's checks.
# What they call once a cache exists (hooks_fanout.c) stays instrumented,
# so TSan sees its synchronisation.
HOOKS_NOSAN_OBJ := $(BUILD)/hooks/malloc.o $(BUILD)/hooks/intercept.o
$(HOOKS_NOSAN_OBJ): CFLAGS += $(if $(SAN),-fno-sanitize=all)
