# SPDX-License-Identifier: GPL-2.0
# Shared settings for the unwind-rs scripts.  Source it, do not run it.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${UNWIND_RS_CACHE:-/var/cache/unwind-rs}
BINDGEN_VERSION=0.69.5
RUSTC_WEB_VERSION=1.96.0+dfsg1-1~deb12u2
LINUX_SOURCE_PKG=linux-source-6.12
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export PATH="$CACHE/tools/bin:$PATH"

die() {
	echo "unwind-rs: error: $*" >&2
	exit 1
}

note() {
	echo "unwind-rs: $*" >&2
}

kmake_args() {
	echo "LLVM=-19 RUSTC=/usr/bin/rustc BINDGEN=$CACHE/tools/bin/bindgen"
}

# Hash of everything that goes into the kernel build.
kernel_key() {
	{
		cat "$TOP"/patches/*.patch "$TOP/scripts/kernel.config" \
			"$TOP/scripts/build-kernel" ${UNWIND_RS_CONFIG_EXTRA:-}
		dpkg-query -W "$LINUX_SOURCE_PKG" rustc-web clang-19 lld-19 2>/dev/null
		"$CACHE/tools/bin/bindgen" --version 2>/dev/null
	} | sha256sum | cut -c1-16
}

kernel_dir() {
	echo "$CACHE/kernel-$(kernel_key)"
}
