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

# The module's sources (not the objects an out-of-tree build leaves in
# src/), copied to $1.
copy_sources() {
	mkdir -p "$1"
	(cd "$TOP" && find Kbuild Kconfig src include -type f \( -name '*.rs' -o \
		-name '*.[ch]' -o -name Kbuild -o -name Kconfig \) -print0 |
		cpio -pdmu0 --quiet "$1")
}

# Put the module into the kernel source tree $1 as drivers/unwind_deferred
# (CONFIG_UNWIND_DEFERRED_RS), replacing an earlier copy.
intree_module() {
	local ksrc=$1
	rm -rf "$ksrc/drivers/unwind_deferred"
	copy_sources "$ksrc/drivers/unwind_deferred"
	grep -q 'unwind_deferred/' "$ksrc/drivers/Makefile" ||
		echo 'obj-$(CONFIG_UNWIND_DEFERRED_RS)	+= unwind_deferred/' >>"$ksrc/drivers/Makefile"
	grep -q 'drivers/unwind_deferred/Kconfig' "$ksrc/drivers/Kconfig" ||
		sed -i '$i source "drivers/unwind_deferred/Kconfig"' "$ksrc/drivers/Kconfig"
}

# The host's Debian mirror, from its deb822 or one-line apt sources.
debian_mirror() {
	local f u
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
		 /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }
			 /^deb / { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; break } }' "$f" |
		    grep -E '/debian/?$' | head -1)
		[ -n "$u" ] && { echo "${u%/}"; return; }
	done
}
