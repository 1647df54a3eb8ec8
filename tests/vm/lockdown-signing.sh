# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In a guest booted with module.sig_enforce=1 and lockdown=MODE, on a
# kernel that trusts the test key (scripts/distro-kernel.sh): the kernel
# is locked down as asked, and only the module signed by a trusted key
# loads, as on a machine with Secure Boot and an enrolled MOK; codectl
# status names the mode; raised to confidentiality, status says tracefs
# is refused, and it is.
#
#   sh lockdown-signing.sh MODE SIGNED UNSIGNED OTHER
#     SIGNED    codectl.ko signed with the test key
#     UNSIGNED  codectl.ko as built
#     OTHER     codectl.ko signed with a key the kernel does not trust
# Ends with "N passed, N failed".

. "$(dirname "$0")/tap.sh"

mode=$1 signed=$2 unsigned=$3 other=$4

mkdir -p /sys/kernel/security
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
lock=$(cat /sys/kernel/security/lockdown 2>/dev/null)
echo "# lockdown: $lock"
check "lockdown is [$mode]" "it reads '$lock'" \
	sh -c "grep -q '\\[$mode\\]' /sys/kernel/security/lockdown"
enforce=$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)
check "module signatures enforced" "sig_enforce is '$enforce'" test "$enforce" = Y

# refused PATH: insmod fails, and the kernel says why.
refused() {
	if insmod "$1" 2>/tmp/insmod.err; then
		rmmod codectl
		return 1
	fi
	sed 's/^/# insmod: /' /tmp/insmod.err
	! grep -q '^codectl ' /proc/modules
}
check "an unsigned codectl.ko is refused" "it loaded" refused "$unsigned"
check "a codectl.ko signed by an untrusted key is refused" "it loaded" refused "$other"
check "codectl.ko signed with the test key loads" "insmod failed" insmod "$signed"
check "/dev/codectl answers" "codectl version failed" \
	sh -c 'codectl version | grep -q "^abi_version"'
codectl status >/tmp/status 2>&1
sed 's/^/# /' /tmp/status
check "codectl status names lockdown=$mode" "no lockdown line" \
	grep -q "^  lockdown   $mode" /tmp/status

# Raised to confidentiality (which a running kernel allows, and never
# lowers): codectl stays, status says what the mode refuses, and tracefs
# is refused as it says.
if [ "$mode" = integrity ]; then
	echo confidentiality >/sys/kernel/security/lockdown
	check "lockdown raised to [confidentiality]" "it reads '$(cat /sys/kernel/security/lockdown)'" \
		grep -q '\[confidentiality\]' /sys/kernel/security/lockdown
	codectl status >/tmp/status 2>&1
	sed 's/^/# /' /tmp/status
	check "codectl status names lockdown=confidentiality and tracefs" "no such line" \
		grep -q "^  lockdown   confidentiality: tracefs is refused" /tmp/status
	check "/dev/codectl answers under confidentiality" "codectl version failed" \
		sh -c 'codectl version | grep -q "^abi_version"'
	# Its files refuse to open (the directory still lists).
	mkdir -p /tmp/tracefs
	: >/tmp/tracing_on
	if mount -t tracefs nodev /tmp/tracefs 2>/tmp/mount.err; then
		cat /tmp/tracefs/tracing_on >/tmp/tracing_on 2>&1
		umount /tmp/tracefs
	fi
	sed 's/^/# tracing_on: /' /tmp/tracing_on /tmp/mount.err
	dmesg | grep -i "restricted" | tail -n 3 | sed 's/^/# dmesg: /'
	check "tracefs refused under confidentiality (as status says)" "tracing_on read" \
		sh -c '! grep -qx "[01]" /tmp/tracing_on'
fi
check "rmmod codectl" "rmmod failed" rmmod codectl

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
