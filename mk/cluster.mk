# Two RDMA nodes and an MPI job across them (docs/mpi.md,
# tests/guest/README.md "Cluster"): `make check-cluster` boots two guests
# of the guest harness joined by one link (tests/cluster/run.sh), each with
# its own rxe device, and runs fi_pingpong and Open MPI (mtl ofi over
# verbs;ofi_rxm) between them, with libmrcache-fabric serving libfabric's
# MR cache.  Needs libfabric-dev and Open MPI's mpicc (libopenmpi-dev).
CLUSTER_MPICC ?= $(shell command -v mpicc.openmpi 2>/dev/null)
# As in mk/fabric.mk, which make reads after this file.
FABRIC ?= $(shell pkg-config --exists libfabric 2>/dev/null && echo yes)
CLUSTER_OUT  ?= $(BUILD)/cluster
CLUSTER_TIMEOUT ?= 2400
CLUSTER_ITERS ?= 12
CLUSTER_CHURN := $(CLUSTER_OUT)/mpi-churn
# `make check-cluster CLUSTER_SUBSET=audit`: only the jobs under mrc-audit
# (tests/cluster/node0.sh, docs/audit.md "Two nodes"), which the full run
# (all) includes; CI's stage (check-cluster-ci) leaves them out.
CLUSTER_SUBSET ?= all
# mk/audit.mk (read before this file) builds the audit library with verbs.
CLUSTER_AUDIT := $(if $(filter yes,$(VERBS)),$(AUDIT_SO))
# CI's stage (`make check-cluster-ci`): both nodes, fi_pingpong without and
# with the preload, the churn under mrmon (with and without --raw) and the
# memhooks control that must see stale data (tests/cluster/node0.sh).
# Its own output folder, so a full run's logs stay; the guests' limit
# (each) is sized for a loaded host, the stage takes 2 to 4 minutes.
CLUSTER_CI_OUT ?= $(BUILD)/cluster-ci
CLUSTER_CI_TIMEOUT ?= 900
# The guest modules of mk/verbs.mk and mk/fabric.mk, and the NIC.
CLUSTER_MODULES := crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe \
	configfs ib_cm iw_cm rdma_cm rdma_ucm virtio_net

.PHONY: check-cluster check-cluster-ci
ifeq ($(FABRIC)$(if $(CLUSTER_MPICC),+mpicc),yes+mpicc)
TOOLS_EXTRA += $(CLUSTER_CHURN)

$(CLUSTER_CHURN): tests/cluster/mpi-churn.c
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(CLUSTER_MPICC) $(CFLAGS) -o $@ $< $(LDFLAGS)

check-cluster: kmod $(BUILD)/libmrcache-fabric-preload.so $(CLUSTER_CHURN) $(CLUSTER_AUDIT)
	@bash tests/cluster/run.sh --cache $(GUEST_CACHE) --out $(CLUSTER_OUT) --build $(BUILD) \
	  --kmod $(KMOD_OUT) --results $(RESULTS) --modules "$(CLUSTER_MODULES)" \
	  --mem $(GUEST_MEM) --timeout $(CLUSTER_TIMEOUT) --iters $(CLUSTER_ITERS) \
	  --subset $(CLUSTER_SUBSET)

# node0.sh runs the churn program built for check-cluster.
check-cluster-ci: kmod $(BUILD)/libmrcache-fabric-preload.so $(CLUSTER_CHURN)
	@bash tests/cluster/run.sh --cache $(GUEST_CACHE) --out $(CLUSTER_CI_OUT) --build $(BUILD) \
	  --kmod $(KMOD_OUT) --results $(RESULTS) --modules "$(CLUSTER_MODULES)" \
	  --mem $(GUEST_MEM) --timeout $(CLUSTER_CI_TIMEOUT) --iters $(CLUSTER_ITERS) --subset ci
else
check-cluster check-cluster-ci:
	@echo "SKIP cluster/setup: needs libfabric-dev and mpicc.openmpi (libopenmpi-dev)"
	@echo "SKIP cluster/setup" >>$(RESULTS)
endif
