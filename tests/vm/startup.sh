# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC2154 # $here, $tmp: the caller's
#
# The on-demand tests' startup check (tests/vm/ondemand.sh,
# tests/vm/arm64-ondemand.sh; sourced): startup_checks PROG, with the
# daemon running.  The caller has $tmp, wait_verdict FILE, pct, ge, fig
# and tap.sh's check.
#
# Startup: samples taken before main (ld.so relocating, _dl_init running
# a library's constructor, libc running the program's) and in lazy binding
# (a PLT entry, ld.so's _dl_runtime_resolve and _dl_fixup), complete
# wherever perf's DWARF mode completes them.  PROG
# (tests/vm/ondemand/startup.c) is all startup; it runs $startup_runs
# times from a shell under perf record, once first so that the daemon
# has imported it and its library, then with -g, with --call-graph dwarf,
# and with -g again without discovery when code is mapped (the module's
# discover_mapped off: the control).  ASLR is off meanwhile: under TCG a
# program whose addresses change at every run is translated afresh each
# time, several times slower, which buries the startup's own samples,
# each process's first ones among them.  Each cut walk's last frame is
# looked up in the rule synthesised for its object (codectl synth -r, at
# the address perf script prints, relative to the object's file: its
# link-time address in the objects here, whose executable segments'
# addresses are their offsets; less 1 for a return address): one there
# says the stack ends (the program's entry, _start's first instruction)
# is complete; a CFA in a register other than the stack and frame
# pointers (rN) is counted apart ("reg") to say why: SFrame has no rule
# for a register a callee saved (x86-64 ld.so's _dl_runtime_resolve keeps
# its CFA in rbx, which _dl_fixup saves), so those walks need the register
# table the daemon imports with ld.so's section (module/regtab.c).  On
# x86-64 no walk may be cut where DWARF is not, those included.
startup_runs=40

# startup_samples DATA [1]: samples.awk's line for each sample of startup
# in DATA (with 1: its frames after it)
startup_samples() {
	case $(uname -m) in
	aarch64) _ld=/lib/ld-linux-aarch64.so.1 _f=,uregs ;;
	*) _ld=/lib64/ld-linux-x86-64.so.2 _f= ;;
	esac
	perf script -i "$1" --no-inline -F comm,time,ip,sym,dso$_f 2>/dev/null |
	awk -v comm=startup -v exe="($startup_prog)" \
		-v entry="$(od -An -tx8 -j24 -N8 $_ld | tr -d ' ')" \
		-v ld="${_ld##*/}" -v stacks="${2:-0}" \
		-f "$here/perf-lr.awk" -f "$here/samples.awk"
}

# startup_run DATA PERF-ARGS...: PROG $startup_runs times under perf record
startup_run() {
	data=$1
	shift
	perf record -q -e cpu-clock:u -F 4999 "$@" -o "$data" -- sh -c \
		'i=0; while [ $i -lt "$1" ]; do "$2"; i=$((i + 1)); done' sh \
		"$startup_runs" "$startup_prog" >/dev/null 2>"$data.err"
}

# startup_count FILE: "SAMPLES COMPLETE" of startup's lines in FILE
# (startup_samples's)
startup_count() { awk '$5 { t++; c += $2 } END { print t + 0, c + 0 }' "$1"; }

# startup_cuts DATA: $cut_total $cut_complete $cut_reg $cut_other of
# startup's samples in DATA (reg and other: its cut ones, above), and a
# comment per place walks were cut at
startup_cuts() {
	startup_samples "$1" 1 >"$tmp/startup.lines"
	awk "$(cat "$here/perf-lr.awk")"'
	$5 && !$2 {
		obj = $NF
		sub(/^.*\(/, "", obj)
		sub(/\)$/, "", obj)
		print obj, "0x" ($3 > 1 ? minus1($(NF - 1)) : $(NF - 1))
	}' "$tmp/startup.lines" | sort | uniq -c >"$tmp/startup.stops"
	# The first cut stacks whole (innermost first), to tell why
	awk '$5 && !$2 && n++ < 4 { $1 = $2 = $3 = $4 = $5 = $6 = $7 = ""
		sub(/^ */, ""); print "# startup cut stack: " $0 }' \
		"$tmp/startup.lines"
	reg=0 other=0 ends=0
	while read -r c obj addr; do
		rule=$(codectl synth -r "$addr" "$obj" 2>/dev/null)
		echo "# startup cut: $c at $obj $rule"
		case $rule in
		*": cfa r"[0-9]* | *": cfa *(r"[0-9]*) reg=$((reg + c)) ;;
		*": cfa undefined"*) ends=$((ends + c)) ;;
		*) other=$((other + c)) ;;
		esac
	done <"$tmp/startup.stops"
	# shellcheck disable=SC2046 # two words
	set -- $(startup_count "$tmp/startup.lines")
	cut_total=$1 cut_complete=$(($2 + ends)) cut_reg=$reg cut_other=$other
}

# walk_counters: perf_callchain_user's frame and stop counters so far,
# on one line (debugfs codectl/hooks)
walk_counters() {
	awk '$1 == "perf_callchain_user" && ($2 == "stops" || $2 == "frames")' \
		/sys/kernel/debug/codectl/hooks | tr '\n' ' '
}

# mapped_requests: discovery's requests when code is mapped so far
mapped_requests() { awk '$1 == "requests" { print $2 }' /sys/kernel/debug/codectl/mapped; }

# startup_good TOTAL OTHER REG: of the TOTAL samples less the REG ones,
# those not cut (OTHER cut) >= 99% and no fewer than DWARF's % less 0.5
startup_good() {
	[ "$1" -gt "$3" ] || return 1
	_p=$(pct $(($1 - $3 - $2)) $(($1 - $3)))
	ge "$_p" 99 && ge "$_p" "$(awk -v d="$st_dwarf" 'BEGIN { print d - 0.5 }')"
}

# startup_checks PROG: the checks above on PROG
startup_checks() {
	startup_prog=$1
	aslr=$(cat /proc/sys/kernel/randomize_va_space)
	echo 0 >/proc/sys/kernel/randomize_va_space
	startup_run "$tmp/startup-warm.data" -g
	wait_verdict "$startup_prog"
	wait_verdict "$(dirname "$startup_prog")/libstartup.so"
	m0=$(mapped_requests)
	echo "# startup: perf_callchain_user before the -g run: $(walk_counters)"
	startup_run "$tmp/startup.data" -g
	echo "# startup: perf_callchain_user after it: $(walk_counters)"
	m1=$(mapped_requests)
	startup_cuts "$tmp/startup.data"
	st_total=$cut_total st_complete=$cut_complete st_reg=$cut_reg st_other=$cut_other
	startup_run "$tmp/startup-dwarf.data" --call-graph dwarf,16384
	startup_samples "$tmp/startup-dwarf.data" >"$tmp/startup.lines"
	# shellcheck disable=SC2046 # two words
	set -- $(startup_count "$tmp/startup.lines")
	st_dwarf_total=$1 st_dwarf_complete=$2
	echo N >/sys/module/codectl/parameters/discover_mapped
	m2=$(mapped_requests)
	startup_run "$tmp/startup-control.data" -g
	m3=$(mapped_requests)
	startup_cuts "$tmp/startup-control.data"
	echo Y >/sys/module/codectl/parameters/discover_mapped
	st_c_total=$cut_total st_c_complete=$cut_complete st_c_reg=$cut_reg st_c_other=$cut_other
	echo "$aslr" >/proc/sys/kernel/randomize_va_space
	st_dwarf=$(pct "$st_dwarf_complete" "$st_dwarf_total")
	fig "startup samples $st_total complete $st_complete ($(pct "$st_complete" "$st_total")%) cut_reg $st_reg cut_other $st_other dwarf $st_dwarf_complete of $st_dwarf_total ($st_dwarf%) control $st_c_complete of $st_c_total cut_reg $st_c_reg cut_other $st_c_other"
	echo "# startup: discovery when mapped asked $((m1 - m0)) times in the -g run, $((m3 - m2)) in the control's"
	case $(uname -m) in
	aarch64)
		# No yardstick: arm64's perf here gives no sample with
		# --call-graph dwarf.  So >= 99% complete outright.  The
		# control is complete mostly too (the module walks what is
		# not registered yet by the frame records Debian's arm64
		# objects keep): its check is discovery's activity.
		check "startup: >= 99% complete" \
			"$st_other of $st_total cut ($st_reg at a CFA in a register)" \
			startup_good "$st_total" "$st_other" "$st_reg"
		check "startup: discovery when code is mapped asked in the -g run, not in the control" \
			"$((m1 - m0)) and $((m3 - m2)) requests" \
			[ $((m1 - m0)) -gt 0 -a $((m3 - m2)) -eq 0 ] ;;
	*)
		check "startup: complete wherever DWARF completes them ($st_dwarf%), lazy binding's CFA in rbx included" \
			"$((st_other + st_reg)) of $st_total cut, $st_reg at a CFA in a register; perf's DWARF mode $st_dwarf_total samples" \
			eval '[ "$st_dwarf_total" -gt 0 ] && startup_good "$st_total" "$((st_other + st_reg))" 0'
		check "startup: the control, without discovery when code is mapped, is cut elsewhere" \
			"$st_c_other of $st_c_total cut elsewhere" eval '! startup_good "$st_c_total" "$st_c_other" "$st_c_reg"' ;;
	esac
}
