#!/usr/bin/env bash
# Negative control: with the stand-in monitor switched off, the fuzzer must
# catch a get returning a registration of pages that changed.
MRCACHE_FUZZ_BREAK=1 exec bash "$(dirname "$0")/fuzz.sh" none crash
