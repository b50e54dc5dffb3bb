# Entry points (each target is one script; the scripts are the reference).
.PHONY: test fuzz test-cluster demo

# Every test: setup, Swift tests, constant-time check, fuzz smoke, interop, the cluster test.
test:
	scripts/test

# Every fuzz target for FUZZ_SECONDS seconds (default 60): make fuzz FUZZ_SECONDS=600
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz $(FUZZ_SECONDS)

# 3 duo node processes behind nginx, 200 sessions from 32 clients, one process killed; sessions/s
# with 1, 2, 3 processes (docs/cluster.md).
test-cluster:
	scripts/test-cluster

# The demo: duo and trio over WebSocket against embedded nodes, then in-process protocol runs.
demo:
	scripts/demo
