# checkpatch --strict and sparse/W=1 on kmod/ and the uapi header
# (scripts/kmod-lint.sh), one result line each, with controls.
CHECK_SUITES += check-kmod-lint

.PHONY: check-kmod-lint
check-kmod-lint:
	@bash scripts/kmod-lint.sh --results $(RESULTS) --work $(abspath $(BUILD))/kmod-lint
