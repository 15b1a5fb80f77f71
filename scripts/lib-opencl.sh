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
