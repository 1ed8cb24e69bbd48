#!/usr/bin/env bash
# The cache fuzzer with monitor none.
exec bash "$(dirname "$0")/fuzz.sh" none
