#!/usr/bin/env bash
# Soft-RoCE end to end (tests/guest/rdma/suite.sh) at the size CI affords:
# 2,000 churn iterations per monitor, 400 for the negative control (about
# two minutes under TCG).  `make check-rdma-long` runs 10,000 per monitor
# and the figures of docs/rdma.md.
exec bash "$GUEST_SRC/tests/guest/rdma/suite.sh" 2000 400
