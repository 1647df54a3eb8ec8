# SPDX-License-Identifier: GPL-2.0
#
# codectl: the kernel module, libcodectl, the tools and their tests.
#
#   make [all]            module + lib + tools for the running kernel
#   make module KVER=...  the module for another installed kernel
#                         (or KDIR=/path/to/kernel/build)
#   make lib | tools
#   make check-unit       host unit tests
#   make check            unit tests + guest suites on every stock kernel
#                         + DKMS install tests (needs scripts/setup.sh);
#                         7.2 only when its toolchain is built, else it
#                         says that 7.2 was skipped; and the module
#                         compiled, sparse-clean, for 5.10, 7.3, 6.12-rt,
#                         7.3-rt and 7.3-arm64 (skipped, saying so,
#                         without their roots: make toolchain-7.3-arm64
#                         toolchain-5.10)
#   make check-vm SERIES="6.1"   only the guest suite of some kernels
#   make check-arm64      the arm64 stages on all three arm64 kernels
#                         (6.1-arm64, 6.12-arm64, 7.2-arm64; the longer
#                         target: check runs 6.12-arm64 only)
#   make check-kernels    every stage on the kernels make check only
#                         compiles for: 5.10, 7.3, 6.12-rt, 7.3-rt and
#                         7.3-arm64 (scripts/kernels.sh list compile;
#                         the longer target, not in CI)
#   make check-debug      the guest suite and tracer tests on Debian's 6.12
#                         built with lockdep, KASAN, KFENCE, UBSAN, kmemleak,
#                         and on its PREEMPT_RT flavour built so with
#                         PROVE_RAW_LOCK_NESTING (debug-6.12, debug-6.12-rt;
#                         scripts/debug-kernel.sh builds each first if it is
#                         not cached; long, not part of check, see README)
#   make check-distros    every stage on Fedora's and Ubuntu's configurations
#                         built from Debian's source (scripts/distro-kernel.sh
#                         builds them first if they are not cached; long),
#                         and the guest suite and tracers under
#                         module.sig_enforce=1 lockdown=integrity (and
#                         confidentiality, reported); not part of check
#   make toolchain-7.2    the sid root with gcc-16 that 7.2 modules are
#                         built with (scripts/sid-root.sh; as root)
#   make toolchain-7.2-arm64   the same with gcc-16-aarch64-linux-gnu added
#   make toolchain-SERIES the root of any other kernel's release the host
#                         cannot build for: 7.3, 7.3-rt (trixie, gcc-14),
#                         7.3-arm64 (and gcc-14-aarch64-linux-gnu), 5.10
#                         (bullseye, gcc-10)
#   make sparse           the module under sparse, for every stock kernel
#   make demo             the demo (boots a stock kernel under QEMU)
#   make check-demo       the demo, then its flame graphs compared in
#                         headless Chromium (tests/demo/check.sh; not part
#                         of check)
#   make bench-decoder    SFrame lookups/s, ours (indexed decoder, flat table)
#                         vs libsframe (a benchmark)
#   make bench-unwind     per-frame cost of the SFrame walk vs the FP walk in
#                         the kernel, in guests (SERIES="6.1 6.12"; a benchmark;
#                         also an arm64 series: SERIES="6.12-arm64")
#   make bench-profile    perf record -g at 1000 Hz of a build without
#                         frame pointers with codectl's hooks off and on,
#                         with --call-graph dwarf, and of a frame-pointer
#                         build (on 7.2 also sid's perf, fp,defer):
#                         complete stacks, bytes per sample, samples lost,
#                         slowdown against the build without frame
#                         pointers unprofiled, the hook's time per sample
#                         (a benchmark, in a guest; SERIES="6.12" by
#                         default, PROFILE_ROUNDS=20000)
#   make bench-fork       a fork+exec shell loop under perf record -a -g,
#                         without codectl, with it, with libc imported
#                         (a benchmark, in a guest; SERIES="6.12")
#   make soak-fuzz        the ioctl fuzzer SOAK_RUNS times (default 20) with
#                         fresh seeds on each kernel (SERIES; not a timed
#                         test: about 1 minute per run under TCG)
#   make bench-memory     bytes of SFrame (own or synthesised), of the flat
#                         table the module builds, and of .eh_frame +
#                         .eh_frame_hdr, for libc, python3.11, libstdc++
#   make bench-large      an object whose synthesised section is larger than
#                         sframe_flat_max (libLLVM-14): lookups/s decoded
#                         in place vs its flat table, and their bytes
#   make bench-synth      SFrame synthesised from .eh_frame for Debian's libc,
#                         libstdc++, ld.so (SYNTH_OBJS=...): coverage, size,
#                         time (codectl synth -n 9; a benchmark)
#   make install          lib, headers, tools, man pages under $(PREFIX)
#   make install-system   udev rule, modprobe.d example, modules-load.d
#                         entry, the codectl-import and codectl-daemon
#                         systemd units
#                         under $(DESTDIR)/ (for packagers; the module
#                         itself is installed by dkms)
#   make packages         .debs (debian/) and RPMs (packaging/rpm/) into
#                         $(PKGDIR), from the tracked files, lintian and
#                         rpmlint included (scripts/pkg-build.sh)
#   make check-packages   the .debs installed, upgraded and purged with apt
#                         in scratch roots with 6.1 and 7.2 headers, the
#                         dkms-built module loaded in a guest
#                         (scripts/pkg-test.sh; PKG_SERIES="6.1 7.2")

KVER   ?= $(shell uname -r)
KDIR   ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
# Empty: scripts/check.sh's default (6.1 6.12, and 7.2 if its toolchain is
# built).  Naming 7.2 makes a missing toolchain a failure.
SERIES ?=
UDEVRULESDIR ?= /usr/lib/udev/rules.d
SYSTEMDUNITDIR ?= /usr/lib/systemd/system
PKGDIR ?= $(CURDIR)/build/packages
PKG_SERIES ?= 6.1 7.2

# The kernel options codectl needs: BUILD_EXCLUSIVE_CONFIG of dkms.conf;
# the oldest kernel it supports: BUILD_EXCLUSIVE_KERNEL_MIN.
NEEDS := $(shell sed -n 's/^BUILD_EXCLUSIVE_CONFIG="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)
KERNEL_MIN := $(shell sed -n 's/^BUILD_EXCLUSIVE_KERNEL_MIN="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)

.PHONY: all module clean-module lib tools check check-unit check-vm check-debug check-distros check-arm64 check-kernels \
	sparse demo check-demo bench-decoder bench-unwind bench-profile bench-fork soak-fuzz bench-memory bench-large bench-synth \
	install install-system packages check-packages clean

all: module lib tools

module:
	@test -d "$(KDIR)" || { echo "codectl: no kernel build tree at $(KDIR);" \
		"install linux-headers-$(KVER) or pass KDIR=" >&2; exit 1; }
	@rel=$$(cat $(KDIR)/include/config/kernel.release 2>/dev/null); \
	test -z "$$rel" || \
	test "$$(printf '%s\n' $(KERNEL_MIN) "$$rel" | sort -V | head -n 1)" = $(KERNEL_MIN) || { \
		echo "codectl: the kernel at $(KDIR) is $$rel, older than $(KERNEL_MIN)," \
			"the oldest codectl supports (see BUILD_EXCLUSIVE_KERNEL_MIN in dkms.conf)" >&2; exit 1; }
	@conf=$(KDIR)/include/config/auto.conf; test ! -r $$conf || \
	for c in $(NEEDS); do grep -q "^$$c=[ym]" $$conf || { \
		echo "codectl: the kernel at $(KDIR) has no $$c, which codectl" \
			"needs (see BUILD_EXCLUSIVE_CONFIG in dkms.conf)" >&2; exit 1; }; done
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Not kbuild's "clean": for external modules it deletes build products
# (*.o, *.ko, modules.order ...) anywhere under M=, .cache/ included.
clean-module:
	rm -f module/*.o module/*.ko module/*.mod module/*.mod.c \
		module/.*.cmd module/modules.order Module.symvers \
		shared/*.o shared/.*.cmd \
		modules.order .*.cmd

lib:
	$(MAKE) -C lib

tools: lib
	$(MAKE) -C tools

check-unit:
	$(MAKE) -C tests/unit check

check:
	scripts/check.sh $(SERIES)

check-vm:
	scripts/check.sh --vm-only $(SERIES)

check-debug:
	scripts/check.sh --debug

check-distros:
	scripts/check.sh --distros

check-arm64: toolchain-7.2-arm64
	scripts/check.sh 6.1-arm64 6.12-arm64 7.2-arm64

# The compile-only kernels (their roots: trixie's for 7.3, 7.3-rt and
# 7.3-arm64, bullseye's for 5.10), and the stages make check leaves out
# for CI's time: the on-demand stages of 6.1 and 6.12, 6.1's tracers and
# runtimes (6.12-arm64's DKMS and on-demand stages: make check-arm64;
# 7.3-arm64's are here).
check-kernels: toolchain-7.3-arm64 toolchain-5.10
	scripts/check.sh $$(scripts/kernels.sh list compile)
	CODECTL_STAGES="build tracers ondemand runtimes" scripts/check.sh 6.1
	CODECTL_STAGES="build ondemand" scripts/check.sh 6.12

toolchain-%:
	scripts/sid-root.sh build $*

sparse:
	@for s in $(or $(SERIES),6.1 6.12 7.2); do \
		if [ -z "$(SERIES)" ] && [ $$s = 7.2 ] && \
		   ! scripts/build-module.sh --toolchain $$s >/dev/null 2>&1; then \
			echo "sparse: 7.2 SKIPPED: no gcc-16 toolchain (make toolchain-7.2)"; \
			continue; \
		fi; \
		echo "sparse: $$s"; \
		scripts/build-module.sh $$s C=2 W=1 >/dev/null || exit 1; \
	done

demo:
	scripts/demo.sh

check-demo:
	tests/demo/check.sh

bench-decoder:
	$(MAKE) -C tests/sframe/bench bench

bench-unwind:
	$(MAKE) -C tests/vm/unwind bench SERIES="$(SERIES)"

bench-profile: lib
	$(MAKE) -C tests/vm/unwind bench-profile SERIES="$(SERIES)" \
		PROFILE_ROUNDS="$(PROFILE_ROUNDS)"

bench-fork: lib tools
	$(MAKE) -C tests/vm/unwind bench-fork SERIES="$(SERIES)"

soak-fuzz:
	SERIES="$(SERIES)" tests/vm/fuzz-soak.sh $(SOAK_RUNS)

bench-memory: lib
	$(MAKE) -C tests/sframe/bench memory

bench-large: lib tools
	$(MAKE) -C tests/sframe/bench large

SYNTH_OBJS ?= $(foreach l,libc.so.6 libstdc++.so.6 ld-linux-x86-64.so.2,\
		$(realpath /lib/x86_64-linux-gnu/$(l)))
bench-synth: lib tools
	@dpkg-query -W -f='# $${Package} $${Version}\n' libc6 libstdc++6 2>/dev/null || true
	tools/codectl synth -n 9 $(SYNTH_OBJS)

install: lib tools
	$(MAKE) -C lib install PREFIX=$(PREFIX)
	$(MAKE) -C tools install PREFIX=$(PREFIX)
	$(MAKE) -C man install PREFIX=$(PREFIX)

# The module sets its node's mode itself (0666, devtmpfs); the udev rule
# says so again for systems whose rules would change it.  modules-load.d
# loads it at boot; the modprobe.d file lists the parameters, commented.
install-system:
	install -D -m 644 packaging/60-codectl.rules $(DESTDIR)$(UDEVRULESDIR)/60-codectl.rules
	install -D -m 644 packaging/modprobe.conf $(DESTDIR)/etc/modprobe.d/codectl.conf
	install -D -m 644 packaging/modules-load.conf $(DESTDIR)/etc/modules-load.d/codectl.conf
	install -D -m 644 packaging/codectl-import.service $(DESTDIR)$(SYSTEMDUNITDIR)/codectl-import.service
	install -D -m 644 packaging/codectl-import.path $(DESTDIR)$(SYSTEMDUNITDIR)/codectl-import.path
	install -D -m 644 packaging/codectl-daemon.service $(DESTDIR)$(SYSTEMDUNITDIR)/codectl-daemon.service

packages:
	scripts/pkg-build.sh $(PKGDIR)

check-packages:
	scripts/pkg-test.sh $(PKG_SERIES)

clean:
	-$(MAKE) -C lib clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/vm clean
	$(MAKE) clean-module
