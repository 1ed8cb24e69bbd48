#!/usr/bin/env bash
# The cache fuzzer with monitor uffd.
exec bash "$(dirname "$0")/fuzz.sh" uffd
