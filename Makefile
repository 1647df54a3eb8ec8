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
#                         + DKMS install tests (needs scripts/setup.sh)
#   make check-vm SERIES="6.1"   only the guest suite of some kernels
#   make sparse           the module under sparse, for every stock kernel
#   make demo             the demo (boots a stock kernel under QEMU)
#   make bench-decoder    SFrame lookups/s, ours vs libsframe (a benchmark)
#   make bench-unwind     per-frame cost of the SFrame walk vs the FP walk in
#                         the kernel, in guests (SERIES="6.1 6.12"; a benchmark)
#   make install          lib, headers, tools under $(PREFIX)

KVER   ?= $(shell uname -r)
KDIR   ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
SERIES ?= 6.1 6.12

.PHONY: all module clean-module lib tools check check-unit check-vm \
	sparse demo bench-decoder bench-unwind install clean

all: module lib tools

module:
	@test -d "$(KDIR)" || { echo "codectl: no kernel build tree at $(KDIR);" \
		"install linux-headers-$(KVER) or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Not kbuild's "clean": for external modules it deletes build products
# (*.o, *.ko, modules.order ...) anywhere under M=, .cache/ included.
clean-module:
	rm -f module/*.o module/*.ko module/*.mod module/*.mod.c \
		module/.*.cmd module/modules.order Module.symvers \
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

sparse:
	@for s in $(SERIES); do \
		echo "sparse: $$s"; \
		scripts/build-module.sh $$s C=2 W=1 >/dev/null || exit 1; \
	done

demo:
	scripts/demo.sh

bench-decoder:
	$(MAKE) -C tests/sframe/bench bench

bench-unwind:
	$(MAKE) -C tests/vm/unwind bench SERIES="$(SERIES)"

install: lib tools
	$(MAKE) -C lib install PREFIX=$(PREFIX)
	$(MAKE) -C tools install PREFIX=$(PREFIX)

clean:
	-$(MAKE) -C lib clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/vm clean
	$(MAKE) clean-module
