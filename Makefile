# SPDX-License-Identifier: GPL-2.0
#
# wpstat: two commands do everything on a fresh Debian 12 machine (as root):
#   make demo    install what is missing, build, boot 6.12, run a workload,
#                print the counters
#   make check   install, build for every supported kernel, run the tests
#                in a guest of the newest 6.12 (all but the long ones) and
#                the kernel-facing ones in a guest of each other kernel (two
#                guests at once), end with "N passed, N failed, N skipped";
#                nothing fails for its time, only for a wrong result or a
#                hang (10 minutes of silence)
#   make check-kernels  every suite on every kernel, the long ones
#                (experiment's sweep, longrun, timing reruns) included
#   make stress  the same for the long forms of the reliability suites
#                (WPSTAT_STRESS=1; SUITES=... to choose others)
#   make check-debug  the module suites on a KASAN/lockdep/kmemleak 6.12
#   make check-zfs  the ZFS suites on each kernel make setup-zfs built
#                Debian's ZFS for (not part of check: the build takes
#                ~7.5 min a kernel)
#   make check-scale  the module in guests of 2, 32 and 64 vCPUs: memory
#                per CPU, and a 30-minute broker soak (about an hour)
#   make check-flavours  the interface and prediction suites on Debian's
#                6.12 cloud and rt kernels (installed by this target only)
#   make deb     the Debian packages, wpstat-dkms and wpstat (build/deb);
#                make repo: an apt repository of them (build/repo)
#   make check-packages  the package test on every suite: apt install,
#                boot, load, upgrade, purge
#
# Other targets: setup, build, module, userspace, selftests, checkpatch,
# bench (cost per event on every kernel, writes docs/results/benchmarks.md),
# experiment (docs/results/experiment.md), predictions
# (docs/results/predictions.md from a check run's results), vm (a command in a guest:
# make vm CMD='...' [KVER=...]), install,
# uninstall ([DESTDIR=...] [PREFIX=/usr/local]), clean.  The packages (make
# deb) build the module for every kernel through DKMS instead.

SHELL := /bin/bash
# The host-installed kernels (bookworm 6.1 and 6.12): install, uninstall,
# DKMS and packaging work on these.
KVERS ?= $(shell scripts/vm/kernels.sh installed 2>/dev/null)
# Those and the extra kernels setup stages under build/kernels (bullseye
# 5.10, trixie 6.12, sid's newest), built in their suites' chroots.
KVERS_ALL ?= $(shell scripts/vm/kernels.sh all 2>/dev/null)
# What `make module` builds for: every kernel (make check boots them all).
MODULE_KVERS ?= $(KVERS_ALL)

all: build

setup:
	scripts/setup.sh

# make check boots 6.12 and 5.10 only: no trixie or sid chroot.
setup-check:
	scripts/setup.sh --check

# What only the long forms use besides (JDK, Maven, bpftrace, matplotlib).
setup-long:
	scripts/setup.sh --long

build: module userspace selftests

# scripts/vm/kbuild.sh builds on the host or in the kernel's chroot.
module:
	@test -n "$(MODULE_KVERS)" || { echo "no supported kernel installed: run make setup" >&2; exit 1; }
	+@for k in $(MODULE_KVERS); do scripts/vm/kbuild.sh $$k || { echo "module: build for $$k failed" >&2; exit 1; }; done

userspace:
	$(MAKE) -C userspace

selftests: userspace
	$(MAKE) -C selftests

checkpatch:
	perl build/linux-src/scripts/checkpatch.pl --no-tree -f kmod/*.c kmod/*.h uapi/*.def kmod/bench/*.c

# setup runs first and the rest in a fresh make, so that KVERS sees the
# kernels setup just installed.
check: setup-check
	@$(MAKE) --no-print-directory build
	@scripts/check/check.sh

# Every suite on every kernel (make check: 6.12 in two guests and 5.10's
# kernel-facing suites), the long ones make check leaves out too
# (scripts/check/guest-check.sh), one guest per kernel.
check-kernels: setup-long
	@$(MAKE) --no-print-directory build
	@WPSTAT_CHECK_FULL=all scripts/check/check.sh

# Like check, with WPSTAT_STRESS=1: 50 load/unload cycles under load,
# 100,000 control writes, longer thread and truncate races (the stress set
# of selftests/suites.txt).
stress: setup
	@$(MAKE) --no-print-directory build
	@WPSTAT_STRESS=1 SUITES="$${SUITES:-$$(scripts/check/suites.sh list stress)}" \
		scripts/check/check.sh

# The module suites on a debug 6.12 kernel (KASAN, lockdep, kmemleak),
# built once from linux-source into build/debug-kernel (~25 min), then
# hours a run on 2 cores (docs/long-forms.md: split it with SUITES=); not
# part of check.
check-debug: setup
	@$(MAKE) --no-print-directory build
	@scripts/check/check-debug.sh

# The module on many CPUs: wpstat_broker's memory test in guests of 2, 32
# and 64 vCPUs of 6.12 and 7.2 (at most 64 KiB per added CPU, written to
# docs/results/scale.md), and its 30-minute broker soak in the largest
# 6.12 one; about an hour on 2 cores.  Not part of check.
check-scale: setup
	@$(MAKE) --no-print-directory build
	@scripts/check/check-scale.sh

# The interface and prediction suites on the newest 6.12 cloud and rt
# kernels, which plain setup does not install; not part of check.
check-flavours:
	@scripts/setup.sh --flavours
	@$(MAKE) --no-print-directory build KVERS="$$(echo $$(scripts/vm/kernels.sh flavours))"
	@scripts/check/check-flavours.sh

# Debian's ZFS (zfs-dkms, zfsutils-linux from contrib) built for each kernel
# with its own suite's version, cached outside the clone (~7.5 min a
# kernel; scripts/zfs/setup-zfs.sh); never part of setup or check.
setup-zfs: setup
	@scripts/zfs/setup-zfs.sh

# The ZFS suites on every kernel setup-zfs built for (make check runs them
# on 6.12 when its build is cached, and skips them, saying so, when not).
check-zfs: setup-zfs
	@$(MAKE) --no-print-directory build
	@scripts/zfs/check-zfs.sh

# Debian packages from this checkout (dpkg-buildpackage -us -uc -b, then
# lintian): wpstat-dkms (the module's sources, built by DKMS) and wpstat
# (the tools), into build/deb.  make repo: a flat apt repository of them in
# build/repo (REPO_KEY=<gpg key> signs it).  See README, "Install".
deb:
	@scripts/pkg/deb.sh

repo: deb
	@scripts/pkg/repo.sh $(if $(REPO_KEY),--key $(REPO_KEY))

# The package test on every suite wpstat supports (bullseye, bookworm,
# trixie, sid), one after another: install, boot, load, the demo counts, a
# later kernel, upgrade, the bad cases, purge (make check runs bookworm's).
# PKG_SUITES= picks suites.
check-packages: setup
	@scripts/pkg/test.sh --out $(CURDIR)/results/packages $(or $(PKG_SUITES),bullseye bookworm trixie sid)

# Quiet: the set-up's and the build's output go to results/demo/*.log.
demo:
	@mkdir -p results/demo
	@echo "demo: setting up and building (logs: results/demo/setup.log, build.log)..."
	@scripts/setup.sh --demo >results/demo/setup.log 2>&1 || { tail -n 20 results/demo/setup.log; exit 1; }
	@$(MAKE) --no-print-directory module userspace MODULE_KVERS="$$(scripts/vm/kernels.sh installed | grep '^6\.12\.' | tail -n 1)" \
		>results/demo/build.log 2>&1 || { tail -n 20 results/demo/build.log; exit 1; }
	@scripts/demo/demo.sh

# The README's session, rerun in a 6.12 guest and written into README.md.
readme-session: setup
	@$(MAKE) --no-print-directory build
	@scripts/demo/session.sh

# The cost per event against a floor and bpftrace, and each attachment
# mechanism's (wpmech.ko), on every kernel (KVERS=... to choose), one guest
# per core at a time, 5 rounds, 21 (6.12) to 25 (5.10) minutes a kernel; writes
# results/bench/ and docs/results/benchmarks.md (docs/benchmarks.md: the method).
bench: setup-long
	@$(MAKE) --no-print-directory build
	@scripts/bench/bench.sh

PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
# systemd reads units from /usr/local/lib/systemd/system too.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=
MODDIR = $(DESTDIR)/lib/modules/$(1)/extra

# The module into /lib/modules/<kernel>/extra through kbuild, for every
# built kernel, then depmod (a DESTDIR staging tree is left for the
# packager's depmod); the tools and man pages under $(PREFIX).
# Debian's headers carry no signing key: the module is installed unsigned
# (CONFIG_MODULE_SIG_ALL= skips sign-file); use DKMS to sign with a MOK.
install: build
	@for k in $(KVERS); do \
		$(MAKE) -s -C /lib/modules/$$k/build M=$(CURDIR)/build/kmod/$$k \
			INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra \
			CONFIG_MODULE_SIG_ALL= modules_install 2>&1 | \
			grep -v "missing 'System.map'"; \
		test -e $(call MODDIR,$$k)/wpstat.ko* || exit 1; \
		if [ -z "$(DESTDIR)" ]; then depmod -a $$k || exit 1; fi; \
	done
	install -D -m 0755 build/bin/wpstat $(DESTDIR)$(PREFIX)/sbin/wpstat
	install -D -m 0755 build/bin/wpload $(DESTDIR)$(PREFIX)/bin/wpload
	install -D -m 0644 docs/man/wpstat.8 $(DESTDIR)$(PREFIX)/share/man/man8/wpstat.8
	install -D -m 0644 docs/man/wpload.1 $(DESTDIR)$(PREFIX)/share/man/man1/wpload.1
	@# Boot-time loading and the exporter service: installed, all off.
	@# A configuration file someone already edited is kept.
	@for f in modules-load.d modprobe.d; do \
		d=$(DESTDIR)$(SYSCONFDIR)/$$f/wpstat.conf; \
		[ -e $$d ] || install -D -m 0644 packaging/$${f%.d}.conf $$d || exit 1; \
	done
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|' packaging/wpstat-export.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/wpstat-export.service

uninstall:
	@for k in $(KVERS); do \
		rm -f $(call MODDIR,$$k)/wpstat.ko*; \
		if [ -z "$(DESTDIR)" ]; then depmod -a $$k; fi; \
	done
	rm -f $(DESTDIR)$(PREFIX)/sbin/wpstat $(DESTDIR)$(PREFIX)/bin/wpload \
		$(DESTDIR)$(PREFIX)/share/man/man8/wpstat.8 \
		$(DESTDIR)$(PREFIX)/share/man/man1/wpload.1 \
		$(DESTDIR)$(SYSCONFDIR)/modules-load.d/wpstat.conf \
		$(DESTDIR)$(SYSCONFDIR)/modprobe.d/wpstat.conf \
		$(DESTDIR)$(SYSTEMDUNITDIR)/wpstat-export.service

# The MappedByteBuffer-versus-FileChannel experiment (docs/experiment.md):
# regenerates docs/results/experiment.md, its charts and data.  KVER= picks one kernel (default:
# every installed one); EXPERIMENT_ARGS= adds options (--resume,
# --report-only, --method original, --size 512M, --units "...", --parts
# "ram slow strategies rocketmq java": see scripts/experiment/experiment.sh
# and scripts/experiment/guest-experiment.sh).
experiment: setup-long
	@$(MAKE) --no-print-directory build
	@scripts/experiment/experiment.sh $(if $(KVER),--kver $(KVER)) $(EXPERIMENT_ARGS)

# The clients suite: real mmap writers under wpstat.  LMDB (a kselftest)
# also runs in check; the Java drivers of Chronicle Queue and RocketMQ's
# store (selftests/clients/*.bats) run here only, on every kernel, with
# their results in results/clients.  SUITES= narrows it.
clients-build:
	$(MAKE) -C selftests/clients java

clients: setup-long
	@$(MAKE) --no-print-directory build clients-build
	@WPSTAT_CHECK_HOST=0 WPSTAT_CHECK_OUT=$${WPSTAT_CHECK_OUT:-$(CURDIR)/results/clients} \
		SUITES="$${SUITES:-$$(scripts/check/suites.sh list clients)}" \
		scripts/check/check.sh

# docs/results/predictions.md from a `make check` run's TAP files
# (results/check; RESULTS= another run's directory), on the host.
predictions:
	@scripts/check/predictions-report.py $(or $(RESULTS),results/check) >docs/results/predictions.md.tmp && \
		mv docs/results/predictions.md.tmp docs/results/predictions.md && echo "wrote docs/results/predictions.md" || \
		{ rm -f docs/results/predictions.md.tmp; exit 1; }

# Each client under `wpstat run` in a 6.12 guest (KVER= another kernel):
# rewrites docs/results/clients-runs.md.
clients-runs: setup-long
	@$(MAKE) --no-print-directory build clients-build
	@scripts/clients/runs.sh $(if $(KVER),--kver $(KVER))

vm: build
	scripts/vm/vm-run.sh $(if $(KVER),--kver $(KVER)) -- bash -c '$(CMD)'

clean:
	rm -rf build/kmod build/bin build/lib build/selftests results

.PHONY: all setup setup-long setup-check build module userspace selftests checkpatch check check-kernels stress check-debug check-scale check-flavours setup-zfs check-zfs clients clients-build clients-runs \
	deb repo check-packages \
	demo readme-session bench experiment predictions vm \
	install uninstall clean
