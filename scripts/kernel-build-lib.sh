# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # repo, work, final, obj: the caller's
#
# What the scripts that build a kernel series from Debian's source share
# (scripts/debug-kernel.sh: debug-6.12; scripts/distro-kernel.sh: fedora,
# ubuntu), sourced after scripts/lib.sh with these set:
#   repo CACHE     the tree and the cache
#   SERIES         the series built ($CACHE/kernels/SERIES, its layout:
#                  scripts/kernels.sh)
#   work final     $CACHE/SERIES (source, object tree, logs) and
#                  $CACHE/kernels/SERIES
#   JOBS NICE      make -jJOBS under nice -n NICE
#
#   stock_version BASE      Debian's source version of the stock series
#                           BASE, read from its stamp (fetching it first)
#   need_tools              flex, bison, bc, gawk (Ubuntu's BUILTIN_MODULE_RANGES), dpkg-source, curl,
#                           libssl-dev, libelf-dev (installed as root,
#                           else die)
#   source_version BASE     the version of Debian's source to build for
#                           the stock series BASE: its own if the archive
#                           serves that source, else the newest of the
#                           same upstream release (BASE.N) it serves
#   fetch_source VERSION    Debian's linux VERSION (bookworm-backports or
#                           sid) unpacked in $work/src/linux-UPSTREAM:
#                           sets srcdir
#   set_options OPT...      scripts/config OPT... on $obj/.config, then
#                           make olddefconfig
#   trim_modules            make localmodconfig with an empty module list:
#                           every =m option goes (the guests of vm-run.sh
#                           never load a module of the image: kernels.sh
#                           deletes them), which is most of a distribution
#                           kernel's build
#   still_set OPT...        those of OPT... still set in $obj/.config
#                           (selected by others)
#   check_options OPT...    every -e OPT is =y and every -d OPT unset in
#                           $obj/.config (Kconfig silently drops what a
#                           dependency forbids), else die
#   build_kernel            nice make bzImage modules into $obj, log in
#                           $work/build.log; sets build_secs
#   install_series          $obj installed as $final, in the layout of
#                           scripts/kernels.sh (below)
#   write_figures SOURCE    $final/build-figures: SOURCE (where the
#                           source came from), the release, build time
#                           and sizes
#   figures                 print $final/build-figures
#   build_series CMD VER WANT SOURCE
#                           the rest of `build` or `config` once the stamp
#                           WANT is known: nothing if $final/stamp is WANT
#                           (build), else fetch linux VER's source and
#                           write the .config (the caller's configure());
#                           for build, compile, install (then the caller's
#                           post_install, if it has one), write the
#                           figures (SOURCE) and the stamp
# and GUEST_TRIM, the options of what the guests do without (below).
#
# The layout installed (as scripts/kernels.sh's stock series):
#   $final/root/            boot/{vmlinuz,System.map,config}-KVER,
#                           lib/modules/KVER/modules.{order,builtin,
#                           builtin.modinfo}, usr/src/linux-headers-KVER
#                           (the kernel's install-extmod-build)
#   $final/{kver,kdir,vmlinux,stamp,build-figures}

# GUEST_TRIM: what a QEMU guest of vm-run.sh does without (no network, no
# block device, no firmware, no graphics, no LSM but lockdown, no TPM),
# built-in in the distributions' configurations, so localmodconfig keeps
# it.  Disabled where nothing selects it (still_set reports what is).
# X86_SGX stays: it is the smallest of what selects MMU_NOTIFIER, which
# codectl needs.  The guests need no socket (busybox, dash, kmod, perf,
# trace-cmd, bpftrace and the tests run without one).
# shellcheck disable=SC2034 # the sourcing scripts' list
GUEST_TRIM=(
	NET BLOCK VIRTIO_MENU VIRTIO FUSE_FS VIRTIO_FS FS_VERITY FS_ENCRYPTION
	SECURITY_IPE SECURITY_LANDLOCK SECURITY_LOADPIN SECURITY_SAFESETID
	TCG_TPM HW_RANDOM DMADEVICES EDAC CPU_FREQ NVMEM NEW_LEDS MMC MEMSTICK
	VFIO IOMMU_SUPPORT STAGING X86_PLATFORM_DEVICES CHROME_PLATFORMS
	SURFACE_PLATFORMS MAILBOX RAS LIBNVDIMM DAX GPIOLIB REGULATOR POWERCAP
	ZSWAP ZSMALLOC ZRAM KSM ACCESSIBILITY AUXDISPLAY RTC_CLASS
	XEN EFI IPV6 NETFILTER XFRM WIRELESS NET_SCHED NETLABEL ISDN NETDEVICES
	SECURITY_SELINUX SECURITY_APPARMOR SECURITY_TOMOYO IMA EVM INTEGRITY
	FB USB_SUPPORT SPI I2C AGP PINCTRL MD HWMON THERMAL WATCHDOG
	INPUT_MOUSE INPUT_JOYSTICK INPUT_TOUCHSCREEN INPUT_TABLET INPUT_MISC
	INTEL_IOMMU AMD_IOMMU X86_MCE ACPI_APEI PCI_IOV
	KEXEC CRASH_DUMP HIBERNATION SUSPEND MEMORY_HOTPLUG DAMON LIVEPATCH
)

stock_version() {
	local stamp=$CACHE/kernels/$1/stamp
	[ -f "$stamp" ] || "$repo/scripts/kernels.sh" fetch "$1" >&2
	grep -oE 'linux-image-(rt-)?amd64=[^ ]*' "$stamp" | cut -d= -f2
}

need_tools() {
	local t missing=()
	for t in flex bison bc gawk dpkg-source curl; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	[ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
	[ -e /usr/include/gelf.h ] || missing+=(libelf-dev)
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing ${missing[*]}: apt-get install flex bison bc gawk dpkg-dev curl libssl-dev libelf-dev"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		flex bison bc gawk dpkg-dev curl libssl-dev libelf-dev
}

# need_deb_src VERSION: the deb-src entry, unless apt knows the source of
# linux VERSION.  bookworm-backports has the 6.12 sources, sid those of 7.2.
need_deb_src() {
	local list=/etc/apt/sources.list.d/codectl-src.sources
	# (showsrc takes no =VERSION; grep reads it all: grep -q would end
	# apt-cache by SIGPIPE, a failure under pipefail.)
	apt-cache showsrc linux 2>/dev/null | grep -x "Version: $1" >/dev/null && return 0
	[ "$(id -u)" = 0 ] || die "no deb-src for linux $1: run as root once (adds $list)"
	cat >"$list" <<-'SRC'
	Types: deb-src
	URIs: http://deb.debian.org/debian
	Suites: bookworm-backports sid
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	SRC
	apt-get update -q >&2
}

# served VERSION: true if the archive serves every file of Debian's linux
# VERSION source (HEAD requests).  Its index may list what its pool no
# longer has: sid's 7.2.13-1, the stock 7.2's version, is listed, and its
# files are gone (404); 7.2.8-1's are there.
served() {
	local u uris
	uris=$(apt-get source --print-uris -q "linux=$1" 2>/dev/null | sed -n "s/^'\(http[^']*\)'.*/\1/p")
	[ -n "$uris" ] || return 1
	for u in $uris; do
		curl -sfI -o /dev/null "$u" || return 1
	done
}

source_version() {
	local want v
	want=$(stock_version "$1")
	[ -n "$want" ] || die "no version in $CACHE/kernels/$1/stamp"
	need_deb_src "$want"
	for v in "$want" $(apt-cache showsrc linux | sed -n "s/^Version: \($1\.[0-9]*-.*\)/\1/p" | sort -urV); do
		dpkg --compare-versions "$v" le "$want" || continue
		if served "$v"; then
			[ "$v" = "$want" ] || say "the archive serves no source of linux $want: using $v" >&2
			echo "$v"
			return 0
		fi
	done
	die "the archive serves no source of linux $1 (at most $want)"
}

fetch_source() {
	local ver=$1 up=${1%%-*}
	srcdir=$work/src/linux-$up
	[ -f "$srcdir/.codectl-unpacked" ] && return 0
	need_deb_src "$ver"
	mkdir -p "$work/src"
	rm -rf "$srcdir"
	# As root, apt would drop to user _apt, who cannot write here.
	(cd "$work/src" &&
		apt-get source -q --download-only -o APT::Sandbox::User="$(id -un)" "linux=$ver" &&
		dpkg-source -x "linux_${ver#*:}.dsc" "linux-$up")
	touch "$srcdir/.codectl-unpacked"
}

set_options() {
	"$srcdir/scripts/config" --file "$obj/.config" "$@"
	make -s -C "$srcdir" O="$obj" olddefconfig >/dev/null
}

trim_modules() {
	local empty=$work/lsmod-empty
	echo "Module                  Size  Used by" >"$empty"
	# localmodconfig asks nothing for options it leaves alone (yes
	# ends by SIGPIPE: not a failure).
	{ yes '' || true; } | make -s -C "$srcdir" O="$obj" LSMOD="$empty" localmodconfig >/dev/null 2>&1 ||
		die "localmodconfig failed"
}

still_set() {
	local t
	for t in "$@"; do
		! grep -q "^CONFIG_$t=" "$obj/.config" || echo "$t"
	done
}

check_options() {
	local bad=()
	while [ $# -gt 0 ]; do
		case $1 in
		-e) grep -qx "CONFIG_$2=y" "$obj/.config" || bad+=("$2=y") ;;
		-d) ! grep -q "^CONFIG_$2=" "$obj/.config" || bad+=("$2=n") ;;
		--set-val | --set-str) shift ;;
		esac
		shift 2
	done
	[ ${#bad[@]} -eq 0 ] || die "config: not as asked: ${bad[*]}"
}

build_kernel() {
	local start
	say "building $SERIES: nice -n $NICE make -j$JOBS, log $work/build.log (long: see README)"
	start=$(date +%s)
	# With the scheduler's autogroups (sched_autogroup_enabled, on in
	# Debian's kernels) a process's nice value counts only within its
	# session's group, and each group gets an equal share: a build
	# started in a session of its own (setsid, a second terminal) took
	# as much CPU as a guest's, under nice -n 19 (guests of the tests
	# took 8 times as long to synthesise python3.11).  So make runs in
	# a session (a group) of its own, the group's nice value set where
	# the kernel has one.
	setsid -w sh -c 'echo "$1" 2>/dev/null >/proc/self/autogroup; shift; exec "$@"' \
		sh "$NICE" nice -n "$NICE" make -s -C "$srcdir" O="$obj" -j"$JOBS" bzImage modules \
		>"$work/build.log" 2>&1 </dev/null ||
		{ tail -n 40 "$work/build.log" >&2; die "build failed, see $work/build.log"; }
	build_secs=$(($(date +%s) - start))
}

# install_series: the layout above, in $final.new, then renamed into place.
install_series() {
	local kver dir root hdr f
	kver=$(cat "$obj/include/config/kernel.release")
	dir=$final.new
	root=$dir/root
	rm -rf "$dir"
	mkdir -p "$root/boot" "$root/lib/modules/$kver" "$root/usr/src"
	cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$kver"
	cp "$obj/System.map" "$root/boot/System.map-$kver"
	cp "$obj/.config" "$root/boot/config-$kver"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		cp "$obj/$f" "$root/lib/modules/$kver/$f"
	done
	hdr=$root/usr/src/linux-headers-$kver
	(cd "$obj" && srctree=$srcdir SRCARCH=x86 CC=gcc HOSTCC=gcc MAKE=make \
		sh "$srcdir/scripts/package/install-extmod-build" "$hdr")
	cp "$obj/.config" "$hdr/.config"
	ln -s "../../../usr/src/linux-headers-$kver" "$root/lib/modules/$kver/build"
	cp "$obj/vmlinux" "$dir/vmlinux"
	strip --strip-debug "$dir/vmlinux" 2>/dev/null || true
	echo "$kver" >"$dir/kver"
	ln -sfn "root/usr/src/linux-headers-$kver" "$dir/kdir"
	rm -rf "$final.old"
	[ ! -e "$final" ] || mv "$final" "$final.old"
	mv "$dir" "$final"
	rm -rf "$final.old"
}

figures() {
	local f=$final/build-figures
	[ ! -f "$f" ] || cat "$f"
}

write_figures() {
	local kver
	kver=$(cat "$final/kver")
	{
		echo "source: $1"
		echo "kernel release: $kver"
		echo "build: $build_secs s (nice -n $NICE make -j$JOBS on $(nproc) CPUs), $(date -u +%FT%TZ)"
		echo "bzImage: $(du -h "$final/root/boot/vmlinuz-$kver" | cut -f1)"
		echo "vmlinux (stripped): $(du -h "$final/vmlinux" | cut -f1)"
		echo "headers tree: $(du -sh "$final/root/usr/src" | cut -f1)"
		echo "object tree: $(du -sh "$obj" | cut -f1), source: $(du -sh "$srcdir" | cut -f1)"
	} >"$final/build-figures"
}

build_series() {
	local cmd=$1 ver=$2 want=$3 source=$4
	if [ "$cmd" = build ] && [ -f "$final/stamp" ] && [ "$(cat "$final/stamp")" = "$want" ]; then
		say "$SERIES up to date (linux $ver, $(cat "$final/kver"))"
		figures
		return 0
	fi
	need_tools
	fetch_source "$ver"
	obj=$work/obj
	configure
	say "config written: $obj/.config"
	[ "$cmd" = build ] || return 0
	build_kernel
	install_series
	! declare -F post_install >/dev/null || post_install
	write_figures "$source"
	echo "$want" >"$final/stamp"
	say "$SERIES installed in $final"
	figures
}
