# Sourced by the OpenCL benchmarks: figures of a store's OpenCL commands read
# through `collector report --opencl --json` (the commands are stored as packed
# blocks since #41, cl_command_blocks, which sqlite3 cannot read).

# cl_dropped COLLECTOR DB: the most commands the layer of any process dropped, over every session.
cl_dropped() {
	local s
	for s in $(sqlite3 "$2" "SELECT DISTINCT session_id FROM cl_command_blocks"); do
		"$1" report --store "$2" --session "$s" --opencl --json 2>/dev/null
	done | python3 -c 'import json, sys
print(max([p["dropped"] for l in sys.stdin if l.strip() for p in json.loads(l)["opencl"]["processes"]] or [0]))'
}

# cl_kernel_p50_ms COLLECTOR DB SID: the median device time (ms) of the session's most launched kernel.
cl_kernel_p50_ms() {
	"$1" report --store "$2" --session "$3" --opencl --json 2>/dev/null | python3 -c 'import json, sys
g = [g for g in json.load(sys.stdin)["opencl"]["groups"] if g.get("kernel_id")]
print("%.3f" % (max(g, key=lambda x: x["count"])["p50_ns"] / 1e6 if g else 0))'
}

# spread [SCALE]: the numbers on stdin (one a line, times SCALE) as "median [q1, q3] (min .. max), n" (quartiles
# as the medians of the lower and upper halves; %.2f).
spread() {
	sort -g | awk -v k="${1:-1}" '{ a[NR] = $1 * k }
	function med(lo, hi,  n, m) { n = hi - lo + 1; m = lo + int((n - 1) / 2)
		return n % 2 ? a[m] : (a[m] + a[m + 1]) / 2 }
	END { if (!NR) { print "n/a"; exit }
		h = int(NR / 2)
		printf "%.2f [%.2f, %.2f] (%.2f .. %.2f), n=%d\n", med(1, NR), med(1, h ? h : 1), med(NR - h + 1, NR),
			a[1], a[NR], NR }'
}
