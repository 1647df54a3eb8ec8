# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In a guest booted with module.sig_enforce=1 and lockdown=MODE, on a
# kernel that trusts the test key (scripts/distro-kernel.sh): the kernel
# is locked down as asked, and only the module signed by a trusted key
# loads, as on a machine with Secure Boot and an enrolled MOK.
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
check "rmmod codectl" "rmmod failed" rmmod codectl

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
