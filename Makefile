# SPDX-License-Identifier: GPL-2.0
#
# wpstat: two commands do everything on a fresh Debian 12 machine (as root):
#   make demo    install what is missing, build, boot 6.12, run a workload,
#                print the counters
#   make check   install, build for every supported kernel, run all tests
#                in a guest of each, end with "N passed, N failed, N skipped"
#
# Other targets: setup, build, module, userspace, selftests, checkpatch,
# vm (shell-less guest command: make vm CMD='...' [KVER=...]), clean.

SHELL := /bin/bash
KVERS ?= $(shell scripts/kernels.sh installed 2>/dev/null)

all: build

setup:
	scripts/setup.sh

build: module userspace selftests

module:
	@test -n "$(KVERS)" || { echo "no supported kernel installed: run make setup" >&2; exit 1; }
	@for k in $(KVERS); do $(MAKE) -s -C kmod KVER=$$k || exit 1; done

userspace:
	$(MAKE) -C userspace

selftests: userspace
	$(MAKE) -C selftests

checkpatch:
	perl build/linux-src/scripts/checkpatch.pl --no-tree -f kmod/*.c kmod/*.h

# setup runs first and the rest in a fresh make, so that KVERS sees the
# kernels setup just installed.
check: setup
	@$(MAKE) --no-print-directory build
	@scripts/check.sh

demo: setup
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh

vm: build
	scripts/vm-run.sh $(if $(KVER),--kver $(KVER)) -- bash -c '$(CMD)'

clean:
	rm -rf build/kmod build/bin build/selftests results

.PHONY: all setup build module userspace selftests checkpatch check demo vm clean
