# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of unwind_deferred.ko.  KDIR defaults to the kernel
# that scripts/setup built and cached.

KDIR ?= $(shell scripts/kernel-dir 2>/dev/null)
ifeq ($(KDIR),)
$(error no kernel build: run scripts/setup, or pass KDIR=/path/to/kernel/build)
endif
LLVM ?= -19
RUSTC ?= /usr/bin/rustc
BINDGEN ?= $(or $(wildcard $(UNWIND_RS_CACHE)/tools/bin/bindgen),/var/cache/unwind-rs/tools/bin/bindgen)
K = LLVM=$(LLVM) RUSTC=$(RUSTC) BINDGEN=$(BINDGEN)

all: modules

modules clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(K) $@

rustfmt:
	rustfmt --edition 2021 --config-path $(KDIR)/source/.rustfmt.toml $(RUSTFMT_FLAGS) $$(find src -name "*.rs")

.PHONY: all modules clean rustfmt
