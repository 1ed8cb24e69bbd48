# The invalidation protocol's Spin model (model/, docs/protocol.md).
# check-model: the model's references to the code (code-refs and its
# negative control), its safety and liveness, every mutant and tolerated
# variant, one PASS/FAIL line each (suite "model").  Needs spin
# (scripts/deps.sh) and cc.
# `make check-model MODEL_ONLY="code-refs safety mutant-reg-before-watch"` runs a few.
MODEL_ONLY ?=
CHECK_SUITES += check-model

.PHONY: check-model
check-model:
	@bash model/verify.sh --results $(RESULTS) --work $(abspath $(BUILD))/model $(MODEL_ONLY)
