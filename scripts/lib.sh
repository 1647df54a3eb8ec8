# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers the host scripts source (bash):  . "$repo/scripts/lib.sh"
#   die MESSAGE...          "SCRIPT: MESSAGE" on stderr, exit 1
#   say MESSAGE...          "SCRIPT: MESSAGE"
#   log_dir [DIR]           where this tree's logs are: DIR if given, else
#                           $CODECTL_LOG_DIR, else the cache's logs/, or
#                           logs/TREE when the cache ($CODECTL_CACHE) is
#                           another tree's (as scripts/check.sh writes them)
#   doc_replace DOC MARK TEXT   put TEXT between the lines <!-- MARK:begin -->
#                           and <!-- MARK:end --> of DOC (generated
#                           figures); without them, or with DOC "-",
#                           print TEXT (status 1 without the markers)
# and, for the scripts that count TAP-style results in $passed/$failed
# (scripts/dkms-test.sh, scripts/pkg-test.sh):
#   ok DESCRIPTION...       "ok - ...", one more passed
#   notok DESCRIPTION...    "not ok - ...", one more failed
#   check DESCRIPTION COMMAND...   ok or notok by COMMAND's exit status
#   guest_preamble          the first lines of the guest scripts of both:
#                           $kver, $version (their $1), the counters
#                           $n and $f, "t COMMAND..." (ok or not ok - $desc
#                           by COMMAND's status), depmod -a, and in $file
#                           where modinfo finds codectl
#   debs_unpack DEBS ROOT PKG...
#                           apt-get download PKG... (NAME[:ARCH][=VERSION])
#                           into DEBS, then every .deb there unpacked into
#                           ROOT (dpkg-deb -x): Debian's packages staged
#                           for guests, never installed on the host
#   stage_lock DIR          one stager at a time for DIR (check.sh runs
#                           side by side in several trees; the stage-*.sh
#                           scripts, sid-root.sh, pkg-root.sh): DIR's parent
#                           made, DIR.lock held (fd 9) until the script ends
#   bookworm_version PKG    the newest version of binary package PKG in
#                           bookworm, its security suite or its updates
#                           (madison lists the newest first); die if none
#   so_closure ROOT DEST SKIP SONAME...
#                           the arm64 stagers' libraries: one file per
#                           soname of SONAME... and of their DT_NEEDED,
#                           closed, from ROOT's unpacked .debs into DEST
#                           (SKIP: an extended regex of sonames left out,
#                           or empty); prints those nothing provides,
#                           status 1 if any
#   guest_results PREFIX OUT RC KVER
#                           the "ok - " and "not ok - " lines a guest
#                           printed between scripts/vm-run.sh's markers
#                           in OUT, counted as "PREFIXguest: ...", then
#                           the run itself (vm-run's exit status RC)
# Guest-side scripts do not use this file: they run under busybox sh in
# the guest (tests/vm/tap.sh is theirs).

die() { echo "${0##*/}: $*" >&2; exit 1; }
say() { echo "${0##*/}: $*"; }

log_dir() {
	local cache=${CODECTL_CACHE:-$top/.cache}
	if [ -n "${1:-}" ]; then
		echo "$1"
	elif [ -n "${CODECTL_LOG_DIR:-}" ]; then
		echo "$CODECTL_LOG_DIR"
	elif [ "$cache" -ef "$top/.cache" ]; then
		echo "$cache/logs"
	else
		echo "$cache/logs/${top##*/}"
	fi
}

doc_replace() {
	local doc=$1 mark=$2 text=$3 tmp
	if [ "$doc" = - ]; then
		printf '%s\n' "$text"
		return 0
	fi
	if ! grep -q "^<!-- $mark:begin -->\$" "$doc" ||
	   ! grep -q "^<!-- $mark:end -->\$" "$doc"; then
		printf '%s\n' "$text"
		return 1
	fi
	tmp=$(mktemp "$doc.XXXXXX")
	awk -v text="$text" -v begin="<!-- $mark:begin -->" -v end="<!-- $mark:end -->" '
		$0 == begin { print; print text; skip = 1; next }
		$0 == end { skip = 0 }
		!skip' "$doc" >"$tmp" && mv "$tmp" "$doc"
}

passed=${passed:-0} failed=${failed:-0}
ok() { echo "ok - $*"; passed=$((passed + 1)); }
notok() { echo "not ok - $*"; failed=$((failed + 1)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else notok "$d"; fi
}

guest_preamble() {
	cat <<'PREAMBLE'
set -u
kver=$(uname -r) version=$1
n=0 f=0
t() { if "$@"; then echo "ok - $desc"; n=$((n + 1)); else echo "not ok - $desc"; f=$((f + 1)); fi; }
desc="depmod -a"; t depmod -a
file=$(modinfo -F filename codectl 2>/dev/null)
PREAMBLE
}

debs_unpack() {
	local debs=$1 root=$2 d
	shift 2
	mkdir -p "$debs" "$root"
	# As root, apt would drop to user _apt, who cannot write here.
	(cd "$debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$@") >&2 ||
		return 1
	for d in "$debs"/*.deb; do
		dpkg-deb -x "$d" "$root" || return 1
	done
}

stage_lock() {
	mkdir -p "$(dirname "$1")"
	exec 9>"$1.lock"
	flock 9
}

bookworm_version() {
	local ver
	ver=$(apt-cache madison "$1" |
		awk '!v && $6 ~ /^bookworm(-security|-updates)?\// && $NF == "Packages" { v = $3 }
		END { if (v) print v }')
	[ -n "$ver" ] || die "no $1 of bookworm (apt-get update?)"
	echo "$ver"
}

# so_needed ELF: its DT_NEEDED sonames ($READELF, default readelf).
so_needed() {
	"${READELF:-readelf}" -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

so_closure() {
	local root=$1 dest=$2 skip=$3 so d f todo lost=()
	shift 3
	todo=("$@")
	while [ ${#todo[@]} -gt 0 ]; do
		so=${todo[0]} todo=("${todo[@]:1}")
		[ -z "$skip" ] || [[ ! $so =~ $skip ]] || continue
		[ ! -e "$dest/$so" ] || continue
		f=
		for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu lib; do
			[ ! -e "$root/$d/$so" ] || { f=$root/$d/$so; break; }
		done
		[ -n "$f" ] || { lost+=("$so"); continue; }
		cp -L "$f" "$dest/$so"
		# shellcheck disable=SC2207 # sonames have no blanks
		todo+=($(so_needed "$dest/$so"))
	done
	[ ${#lost[@]} -eq 0 ] || { echo "${lost[*]}"; return 1; }
}

guest_results() {
	local prefix=$1 out=$2 rc=$3 kver=$4 line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${prefix}guest: ${line#ok - }" ;;
		"not ok - "*) notok "${prefix}guest: ${line#not ok - }" ;;
		esac
	done < <(sed -n '/^CODECTL-VM-COMMAND-BEGIN/,/^CODECTL-VM-COMMAND-END/p' "$out")
	if [ "$rc" -eq 0 ]; then
		ok "${prefix}guest run on $kver: exit 0, kernel log clean"
	else
		notok "${prefix}guest run on $kver: vm-run exit $rc"
		tail -n 40 "$out" | sed 's/^/    vm: /'
	fi
}
