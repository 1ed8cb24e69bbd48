# The ibverbs backend (lib/backend/verbs.c) and its end-to-end check over
# Soft-RoCE in the QEMU guest (tools/mrc-rdma, tests/guest/suites/40-rdma.sh).
# Built with libibverbs's headers when pkg-config finds them; `make VERBS=`
# builds without, and a verbs cache then reports -ENOTSUP.  libmrcache does
# not link libibverbs: the backend loads libibverbs.so.1 when a verbs cache
# is created (lib/common/dl.h).  The tests and tools that call verbs themselves
# link it.
VERBS ?= $(shell pkg-config --exists libibverbs 2>/dev/null && echo yes)

ifeq ($(VERBS),yes)
VERBS_LIBS := $(shell pkg-config --libs libibverbs)
LIB_CFLAGS += -DMRC_HAVE_VERBS $(shell pkg-config --cflags libibverbs)
$(BUILD)/tests/test-verbs-%: LIB_LIBS += $(VERBS_LIBS)
TOOL_LIBS_mrc-rdma += $(VERBS_LIBS)
endif

# Soft-RoCE in the guest: rxe over lo (modprobe resolves the rest, but the
# crc32 implementation rxe asks for by name is only a soft dependency).
GUEST_MODULES += crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe

# The full churn count and the figures (docs/rdma.md), about 15 minutes of
# TCG: the guest with tests/guest/rdma/long.sh as its only suite.  Logs in
# $(BUILD)/guest-rdma-long/res/rdma/.
.PHONY: check-rdma-long
check-rdma-long:
	$(MAKE) --no-print-directory check-guest GUEST_OUT=$(BUILD)/guest-rdma-long \
	  GUEST_SUITES="$(abspath tests/guest/rdma/long.sh)" GUEST_TIMEOUT=3600 \
	  RESULTS=$(abspath $(BUILD))/rdma-long-results.txt
