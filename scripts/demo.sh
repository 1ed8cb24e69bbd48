#!/usr/bin/env bash
# Quick start, command 1: install what is needed, build, and show the
# stale-registration hazard and its fix (tools/mrc-demo).
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -s -j"$(nproc)" all
exec make -s demo
