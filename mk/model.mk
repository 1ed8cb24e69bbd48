# The invalidation protocol's Spin model (model/, docs/protocol.md).
# check-model: the model's safety and liveness, and every mutant, one
# PASS/FAIL line each (suite "model").  Needs spin (scripts/deps.sh) and cc.
# `make check-model MODEL_ONLY="safety mutant-reg-before-watch"` runs a few.
MODEL_ONLY ?=
CHECK_SUITES += check-model

.PHONY: check-model
check-model:
	@bash model/verify.sh --results $(RESULTS) --work $(abspath $(BUILD))/model $(MODEL_ONLY)
