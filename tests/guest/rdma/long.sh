#!/usr/bin/env bash
# The full count of docs/rdma.md: 10,000 churn iterations per monitor,
# 1,000 for the negative control, then `mrc-rdma bench`.  Run by
# `make check-rdma-long` as the guest's only suite.
exec bash "$GUEST_SRC/tests/guest/rdma/suite.sh" 10000 1000 --rounds 5
