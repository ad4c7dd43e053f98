# SPDX-License-Identifier: GPL-2.0
# Shared settings for the unwind-rs scripts.  Source it, do not run it.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${UNWIND_RS_CACHE:-/var/cache/unwind-rs}
BINDGEN_VERSION=0.69.5
RUSTC_WEB_VERSION=1.96.0+dfsg1-1~deb12u2
LINUX_SOURCE_PKG=linux-source-6.12
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export PATH="$CACHE/tools/bin:$PATH"
# The kernel's config fragments beyond scripts/kernel.config: the debug
# kernel's unless UNWIND_RS_CONFIG_EXTRA names others (scripts/kasan.config).
DEBUG_CONFIG=$TOP/scripts/debug.config
UNWIND_RS_CONFIG_EXTRA=${UNWIND_RS_CONFIG_EXTRA:-$DEBUG_CONFIG}

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

# with_lock NAME CMD...: CMD holding $CACHE/NAME.lock, so that a build that
# tests/run --all started in the background and the same build asked for
# in the foreground never run at once: the second waits, then finds the
# first's result in the cache.
with_lock() {
	local name=$1
	shift
	mkdir -p "$CACHE" || die "cannot create cache directory $CACHE"
	(
		flock 9 || die "cannot lock $CACHE/$name.lock"
		"$@"
	) 9>"$CACHE/$name.lock"
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
# src/), NUL-separated, relative to $TOP; copy_sources copies them to $1.
module_sources() {
	(cd "$TOP" && find Kbuild Kconfig src include -type f \( -name '*.rs' -o \
		-name '*.[ch]' -o -name Kbuild -o -name Kconfig \) -print0)
}
copy_sources() {
	mkdir -p "$1"
	module_sources | (cd "$TOP" && cpio -pdmu0 --quiet "$1")
}

# A key of the module's sources (names and contents).
module_key() {
	module_sources | sort -z | (cd "$TOP" && xargs -0 sha256sum) | sha256sum | cut -c1-16
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

# A Debian SUITE system with PACKAGES (and SUITE-backports' for a
# package named pkg/SUITE-backports) for make_disk, built once with
# mmdebstrap into $CACHE/NAME-<key>/root (the key from the suite and the
# packages), the guest's hostname unwind-NAME: prints the directory.
debian_root() {
	local name=$1 suite=$2 packages=$3 key dir m
	key=$(echo "$suite $packages" | sha256sum | cut -c1-16)
	dir=$CACHE/$name-$key
	if [ ! -f "$dir/.done" ]; then
		command -v mmdebstrap >/dev/null || die "mmdebstrap missing: run scripts/setup"
		m=$(debian_mirror)
		[ -n "$m" ] || die "no Debian mirror in the host's apt sources"
		rm -rf "$dir"
		mkdir -p "$dir"
		note "building a $suite system with $packages (mmdebstrap, a few minutes)"
		mmdebstrap --variant=apt --components=main --include="${packages// /,}" \
			"$suite" "$dir/root" "deb $m $suite main" "deb $m $suite-backports main" \
			>"$dir/mmdebstrap.log" 2>&1 ||
			{ tail -20 "$dir/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
		echo "unwind-$name" >"$dir/root/etc/hostname"
		echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$dir/root/etc/fstab"
		touch "$dir/.done"
	fi
	echo "$dir"
}

# Make the trixie system ROOT (a copy: it goes) into the ext4 image DISK,
# booting into one oneshot systemd service NAME that runs COMMAND on the
# serial console's behalf (no getty there: its vhangup() would cut the
# service's output off); the kernel and initramfs to boot it with are
# ROOT's /boot/vmlinuz-RELEASE and initrd.img-RELEASE, copied beside DISK.
make_disk() {
	local root=$1 disk=$2 name=$3 command=$4 release=$5
	cat >"$root/etc/systemd/system/$name.service" <<UNIT
[Unit]
Description=unwind-rs: $name
After=multi-user.target systemd-modules-load.service

[Service]
Type=oneshot
ExecStart=$command

[Install]
WantedBy=multi-user.target
UNIT
	chroot "$root" sh -c "systemctl enable $name.service &&
		systemctl mask serial-getty@ttyS0.service" >/dev/null 2>&1 ||
		die "cannot enable $name.service"
	cp "$root/boot/vmlinuz-$release" "$root/boot/initrd.img-$release" "$(dirname "$disk")/"
	rm -f "$disk"
	mke2fs -q -t ext4 -L root -d "$root" "$disk" 4G || die "mke2fs -d failed"
	rm -rf "$root"
}

# Boot DISK (made by make_disk with RELEASE) until it powers off, at most
# TIMEOUT seconds; its serial console goes to LOG.  Returns QEMU's status.
boot_disk() {
	local disk=$1 release=$2 log=$3 timeout=$4 dir accel=tcg cpu=max
	dir=$(dirname "$disk")
	[ "$(cat "$CACHE/kvm-probe" 2>/dev/null)" = kvm ] && { accel=kvm; cpu=host; }
	note "booting $disk ($accel) with $release, log in $log"
	timeout --foreground -k 5 "$timeout" qemu-system-x86_64 \
		-accel $accel -cpu $cpu -smp 2 -m "${UNWIND_RS_MEM:-1G}" -nographic -no-reboot -serial mon:stdio \
		-kernel "$dir/vmlinuz-$release" -initrd "$dir/initrd.img-$release" \
		-drive file="$disk",format=raw,if=virtio \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 no5lvl loglevel=4 systemd.show_status=0" \
		</dev/null >"$log" 2>&1
}
