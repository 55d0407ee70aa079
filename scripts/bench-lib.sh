# Shared by the bench scripts (sourced, never run): the base commit's
# clone and the median of a column of figures.

# bench_base NAME: clones this repository ($root) at $base into $tmp/base
# and sets $this and $basedesc (this tree's and the base's descriptions);
# exits 2 with one line naming NAME when the commit cannot be checked out.
bench_base() {
	git clone -q --no-checkout "$root" "$tmp/base" && git -C "$tmp/base" checkout -q "$base" || {
		echo "$1: cannot check out $base" >&2
		exit 2
	}
	this=$(git describe --always --dirty)
	basedesc=$(git -C "$tmp/base" describe --always)
}

# median FILE COLUMN: the median of COLUMN over FILE's lines.
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# machine_costs: sets $machine to what a system call and a process start
# cost on this machine now (internal/childbin's Machine benchmarks): the
# figures beside it compare with another machine's only through these.
machine_costs() {
	local out sc ps
	out=$(cd "$root" && go test -run '^$' -bench Machine -benchtime 0.5s ./internal/childbin/ 2>/dev/null)
	sc=$(echo "$out" | awk '/^BenchmarkMachineSystemCall/ { printf "%.0f", $3 }')
	ps=$(echo "$out" | awk '/^BenchmarkMachineProcessStart/ { printf "%.2f", $3 / 1e6 }')
	if [ -n "$sc" ] && [ -n "$ps" ]; then
		machine="a system call (getppid) $sc ns, a start of /bin/true $ps ms"
	else
		machine="the machine's costs could not be measured (go test -bench Machine ./internal/childbin failed)"
	fi
}

# ratio BASE THIS: THIS / BASE to two places, "-" when either is not a
# figure ("-") or BASE is not above 0.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a + 0 <= 0) print "-"; else printf "%.2f\n", b / a }'
}

# loadavg: the load averages now (1, 5 and 15 minutes).
loadavg() {
	cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*load average[s]*: //'
}

# bench_start NAME WHAT: sets $cores, $load, $started and $machine
# (machine_costs), and says on stderr what the run is: NAME's line, then
# WHAT (how many runs of each).
bench_start() {
	load=$(loadavg)
	cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
	started=$(date -u '+%Y-%m-%d %H:%M UTC')
	machine_costs
	echo "$1: $cores cores, load $load at the start, $started; $machine; base $basedesc, this tree $this; $2" >&2
}
