# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# shellcheck disable=SC2154 # $tmp, $real: arm64-perf.sh
#
# Real programs under perf on arm64, sourced by tests/vm/arm64-perf.sh
# (busybox sh, in the arm64 guest): Lua 5.4 and SQLite's sqlite3 shell
# from Debian bookworm's sources, cross-built for aarch64 -O2
# -fomit-frame-pointer -Wa,--gsframe (no frame records), each also with
# -mbranch-protection=standard (PAC), dynamic against Debian's arm64 libc
# (scripts/stage-arm64-real.sh), in $real.  Each runs a CPU-bound
# workload (lua: recursive Lua functions, fib under nested pcalls, which
# nest C frames too; sqlite3: a recursive CTE grouped and sorted, in an
# in-memory database) and Debian's arm64 perf record -g samples it for
# 3 s (cpu-clock:u, -p: the program runs until it is killed).
#
# A sample is complete when its outermost frames are the program's
# _start, then libc's (__libc_start_main, __libc_start_call_main), then
# the program's main: the stack reaches the program's start through
# main.  (Debian's arm64 libc keeps frame records, so the kernel's own
# walk can reach _start from a frame of the program when x29 still holds
# libc's record, skipping the frames between, main among them: main is
# what that walk misses.)
#
#   real_phase without    the module not loaded (the kernel's frame-record
#                         walk): <= 5% complete (0% in every run so far)
#   real_phase with       codectl.ko loaded, nothing registered
#                         (discovery): >= 99% complete, no frame outside
#                         code (perf's dso "[unknown]")
#   real_phase import     the same with libc's rules imported (codectl
#                         import: SFrame synthesised from its .eh_frame):
#                         >= 99% complete, sqlite3 too
#
# The samples in PLT entries (sqlite3's memcpy@plt: a third of its
# samples the module alone missed) need the module's PLT rule
# (codectl_arch_plt()): the linker writes no SFrame for .plt.  Those in
# libc's memcpy and memmove (Debian's libc has no SFrame: about 2% of
# sqlite3's samples, at their first instruction under TCG) need its leaf
# rule (codectl_step_leaf(): the return address in x30, sp the caller's),
# without which sqlite3 with the module alone is 97-98% complete.

real_progs="lua lua-pac sqlite3 sqlite3-pac"

# real_run NAME PROG: 3 s of perf record -g -p on PROG's workload; prints
# "TOTAL COMPLETE FRAMES UNKNOWN": PROG's samples, those complete, every
# frame of them and those in no object perf knows.
real_run() {
	case $2 in
	lua*)
		cat >"$tmp/work.lua" <<-'EOF'
		local function fib(n)
			if n < 2 then return n end
			return fib(n - 1) + fib(n - 2)
		end
		local function nest(d)
			if d == 0 then return fib(16) end
			local ok, v = pcall(nest, d - 1)
			return v
		end
		while true do nest(8) end
		EOF
		"$real/$2" "$tmp/work.lua" &
		;;
	sqlite3*)
		"$real/$2" :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL
			SELECT x + 1 FROM c WHERE x < 1000000000)
			SELECT k, count(*), sum(x) FROM (SELECT x, (x * 2654435761) % 100003 AS k
			FROM c) GROUP BY k ORDER BY 3 DESC LIMIT 3;" >/dev/null &
		;;
	esac
	pid=$!
	sleep 0.5
	# The objects' load addresses: perf script gives a frame in an
	# object as its offset there, and a frame in none as it is.
	bases=$(awk '$3 == "00000000" && $6 ~ /^\// {
		sub(/-.*/, "", $1); printf "%s=%s ", $6, $1 }' "/proc/$pid/maps")
	perf record -q -e cpu-clock:u -F 499 -g -p "$pid" -o "$tmp/$1.data" \
		-- sleep 3 2>"$tmp/$1.err" >/dev/null
	kill "$pid"
	wait "$pid" 2>/dev/null
	perf script -i "$tmp/$1.data" --no-inline -F comm,ip,sym,dso \
		2>"$tmp/$1.script.err" | awk -v comm="$2" -v exe="($real/$2)" -v bases="$bases" '
	BEGIN {
		n = split(bases, b, " ")
		for (i = 1; i <= n; i++) {
			split(b[i], kv, "=")
			base["(" kv[1] ")"] = num(kv[2])
		}
	}
	# num HEX: its value, the top 16 bits left out (the guest has 48-bit
	# addresses: a pointer authentication code is above them)
	function num(h,   i, v) {
		if (length(h) > 12)
			h = substr(h, length(h) - 11)
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	function done(   i) {
		if (!on || k == 0)
			return
		# perf (not the kernel) adds the leaf'"'"'s caller from the
		# sampled x30 (its DWARF unwinder'"'"'s caller, the return
		# address less 1) before the callchain'"'"'s frame 1, and leaves
		# in it a PAC x30 may hold (signed by paciasp, not yet
		# authenticated): dropped when frame 3 is that address, or
		# when it carries a PAC (bits above the 48 of an address):
		# the module strips every return address it gives
		# (codectl_eval), so that frame is perf'"'"'s whatever follows
		# it (a first sample, walked by frame records before
		# discovery registered the program, goes on to libc).
		pac = length(ip[2]) > 12 && substr(ip[2], 1, length(ip[2]) - 12) !~ /^0*$/
		if (k >= 3 && (pac || ((length(ip[2]) > 12 || dso[2] == dso[3]) &&
		    num(ip[2]) + 1 - (dso[2] == dso[3] ? 0 : base[dso[3]]) == num(ip[3])))) {
			if (pac)
				signed++
			else
				added++
			if (dso[2] == "([unknown])")
				unknown--
			frames--
			for (i = 2; i < k; i++) {
				sym[i] = sym[i + 1]
				dso[i] = dso[i + 1]
				ip[i] = ip[i + 1]
			}
			k--
		}
		total++
		i = k
		if (dso[i] == exe && sym[i] == "_start")
			for (i--; i > 0 && dso[i] ~ /\/libc\.so\.6\)$/; i--)
				;
		if (i > 0 && i < k - 1 && dso[i] == exe && sym[i] == "main")
			complete++
		else {
			# Tallied by leaf (its symbol, and its object when
			# not the program), and the first few in full.
			leaf = sym[1]
			if (dso[1] != exe) {
				o = dso[1]
				sub(/^.*\//, "", o)
				leaf = leaf "(" o
			}
			if (!(leaf in miss))
				leaves[++nleaves] = leaf
			miss[leaf]++
			if (shown++ < 6) {
				printf "# incomplete %d (sample %d):", shown, total >"/dev/stderr"
				for (i = 1; i <= k; i++)
					printf " %s %s%s", ip[i], sym[i], dso[i] == exe ? "" : dso[i] >"/dev/stderr"
				printf "\n" >"/dev/stderr"
			}
		}
	}
	/^[^ \t]/ { done(); k = 0; on = $1 == substr(comm, 1, 15); next }
	/^[ \t]+[0-9a-f]+ / {
		k++
		ip[k] = $1
		sym[k] = $2
		dso[k] = $NF
		if (on) {
			frames++
			if ($NF == "([unknown])")
				unknown++
		}
	}
	END {
		done()
		# The incomplete samples by leaf, the most frequent first.
		if (nleaves) {
			printf "# incomplete by leaf:" >"/dev/stderr"
			for (n = 0; n < nleaves; n++) {
				b = 0
				for (i = 1; i <= nleaves; i++)
					if (!(i in told) && (!b || miss[leaves[i]] > miss[leaves[b]]))
						b = i
				told[b] = 1
				printf " %s %d", leaves[b], miss[leaves[b]] >"/dev/stderr"
			}
			printf "\n" >"/dev/stderr"
		}
		printf "# %d samples: perf added x30 less 1, %d of them with a PAC left in\n",
			added + signed, signed >"/dev/stderr"
		printf "%d %d %d %d\n", total, complete, frames, unknown
	}' 2>"$tmp/$1.incomplete"
	sed 's/^#/# '"$1"':/' "$tmp/$1.incomplete" >&2
}

# real_goal PHASE PROG: the share a run with the module must reach: 99%.
# The first sample or two of a run can be walked before discovery has
# registered the program, and a sample in a libc function that has
# pushed a frame record (write: the record's step leaves the caller's sp
# unknown, which its SFrame rule needs): that is within the 1%.
real_goal() {
	echo 99
}

real_phase() {
	for p in $real_progs; do
		t0=$(date +%s)
		r=$(real_run "$p-$1" "$p")
		# shellcheck disable=SC2086 # four words
		set -- "$1" $r
		case $1 in
		import) lab="with codectl, libc imported" ;;
		*) lab="$1 codectl" ;;
		esac
		echo "# $p, $lab: $3 of $2 samples complete;" \
			"$5 of $4 frames outside code ($(($(date +%s) - t0)) s)"
		if [ "$1" = without ]; then
			# The negative control: 0% in every run so far.
			check "perf -g, $p, without the module: <= 5% complete" \
				"$3 of $2 complete" [ "${2:-0}" -ge 20 -a \
				$((${3:-0} * 100)) -le $((5 * ${2:-0})) ]
		else
			if [ "${2:-0}" -lt 20 ]; then
				not_ok "perf -g, $p, $lab" "only ${2:-0} samples (want >= 20)"
			else
				g=$(real_goal "$1" "$p")
				check "perf -g, $p, $lab: >= $g% complete" \
					"$3 of $2 complete" [ $(($3 * 100)) -ge $((g * $2)) ]
			fi
			check "perf -g, $p, $lab: no frame outside code" \
				"$5 of $4 frames in no object perf knows" \
				[ "${4:-0}" -gt 0 -a "${5:-1}" -eq 0 ]
		fi
		fig "arm64 perf $p $lab: $3/$2 complete, $5/$4 frames outside code"
	done
}

# real_import: libc's rules imported for every process (codectl import
# synthesises SFrame from its .eh_frame), real_phase import, the import
# dropped again.
real_import() {
	libc=/usr/lib/aarch64-linux-gnu/libc.so.6
	if out=$(codectl import "$libc" 2>&1); then
		ok "codectl import $libc ($out)"
		real_phase import
	else
		not_ok "codectl import $libc" "$out"
	fi
	check "codectl import --clear" "failed" codectl import --clear
}
