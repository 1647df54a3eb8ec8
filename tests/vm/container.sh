# SPDX-License-Identifier: GPL-2.0
#
# A container for the on-demand tests (tests/vm/ondemand.sh,
# tests/vm/arm64-ondemand.sh; sourced): Debian 13's python3.13 from its
# image (/container: /tests/container.tar, scripts/stage-container.sh),
# under overlayfs as container runtimes mount an image, in mount and pid
# namespaces of its own under chroot.  The caller has $tmp, $secs and
# shared DATA COMM EXE (its samples of COMM into $total, $complete,
# $notcode, $curve...).

# container_image: the image unpacked into /container and overlayfs in
# the kernel (the series' overlay.ko, /tests/overlay.ko, loaded if it
# has none built in); false when either is missing (a kernel built
# without modules: the caller says so).
container_image() {
	[ -s /tests/container.tar ] && mkdir -p /container &&
		tar -xf /tests/container.tar -C /container &&
		{ grep -qw overlay /proc/filesystems ||
		  { [ -e /tests/overlay.ko ] && insmod /tests/overlay.ko; }; }
}

ctr_load='import sys, time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def mid(n):
    return leaf(n) + leaf(n // 2)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    mid(2000)'
# container N SECONDS: container N started, to run SECONDS; $cpid: its
# python3.13 as the system sees it, $cunshare: unshare, its parent
container() {
	c=$tmp/ctr$1
	cpid=
	mkdir -p "$c/upper" "$c/work" "$c/root"
	mount -t overlay overlay \
		-o "lowerdir=/container,upperdir=$c/upper,workdir=$c/work" "$c/root" ||
		return 1
	unshare -m -p -f chroot "$c/root" \
		/usr/bin/python3.13 -I -S -c "$ctr_load" "$2" >/dev/null 2>"$c.err" &
	cunshare=$!
	# Its child (unshare -f), once it runs python3.13 (chroot execs it).
	i=0
	while [ -z "$cpid" ] && [ $i -lt 300 ]; do
		p=
		read -r p _ 2>/dev/null <"/proc/$cunshare/task/$cunshare/children"
		[ -z "$p" ] || [ "$(readlink "/proc/$p/exe" 2>/dev/null)" != "$c/root/usr/bin/python3.13" ] ||
			cpid=$p
		[ -n "$cpid" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$cpid" ] && return 0
	echo "# container $1: no python3.13 (unshare $cunshare, child ${p:-none}: $(readlink "/proc/$p/exe" 2>&1))"
	sed 's/^/# container: /' "$c.err"
	return 1
}
container_stop() {
	kill -KILL "$cpid" 2>/dev/null
	wait "$cunshare" 2>/dev/null
	umount "$c/root"
}
# container_profile N DATA: container N's first profile, perf record -a
# from before its start, shared (COMM python3.13) into $total etc.
container_profile() {
	rm -f "$2"
	perf record -q -a -g -e cpu-clock:u -F 499 -k monotonic -o "$2" -- sleep $((secs * 3)) >/dev/null 2>&1 &
	prec=$!
	i=0
	while [ ! -s "$2" ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	sleep 2
	# Long enough for the caller's wait for its import and its warm
	# profile; container_stop ends it.
	container "$1" 900 || return 1
	wait $prec
	shared "$2" python3.13 "*/usr/bin/python3.13"
}
