#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build, and run every test
# suite (host, QEMU guest with the kernel module, Spin model, tools).  Extra
# arguments go to make (CI passes WERROR=1).
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -s -j"$(nproc)" all "$@"
exec make check "$@"
