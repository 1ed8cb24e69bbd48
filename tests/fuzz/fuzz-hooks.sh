#!/usr/bin/env bash
# The cache fuzzer with monitor hooks.
exec bash "$(dirname "$0")/fuzz.sh" hooks
