# The Debian packages (debian/, docs/install.md): check-deb builds them with
# dpkg-buildpackage in a copy of the tree under $(BUILD)/deb, runs lintian
# and checks what each package holds (scripts/deb-check.sh).  About 4.5
# minutes (2 of CPU), so not part of `make check`: .ci/run runs it.
.PHONY: check-deb
check-deb:
	@bash scripts/deb-check.sh --results $(RESULTS) --work $(abspath $(BUILD))/deb
