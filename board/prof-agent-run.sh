#!/bin/sh
# The board's profiling service: runs `prof-agent record` on the whole system, continuously,
# streaming to the collector; restarts it when it exits (backoff 1 s doubling to 60 s, back
# to 1 s after a run of 10 minutes); rotates its log by size. POSIX sh (dash, busybox, Android's
# mksh). Started by the service files (prof-agent.init, prof-agent.service, prof-agent.rc):
#
#   prof-agent-run CONFIG        CONFIG: a shell file of the settings below
#
# COLLECTOR=HOST:PORT  (required)     TOKEN_FILE=FILE  the collector's shared token (--token-file)
# AGENT_ID=            empty: the machine id (/etc/machine-id, /var/lib/dbus/machine-id), else the
#                      Android serial (getprop ro.serialno), else the hostname: stable per board
# GPU=auto             auto: --gpu when a Mali device (/dev/mali0) exists; yes; no
# AGENT=, SPOOL=, LOG=, LOG_MAX_KB=1024, LOG_KEEP=3, LOG_CHECK_S=60, AGENT_ARGS="-a -F 99 -I 1000"
# PROF_ROOT (environment, tests only): a directory standing for the board's / (every path above
# is taken under it); the agent's command line is otherwise the one the board runs.
# On SIGTERM/SIGINT: the agent gets SIGTERM (it flushes its spool), the runner waits and exits 0.
conf=${1:?usage: prof-agent-run CONFIG}
r=${PROF_ROOT:-}
COLLECTOR='' TOKEN_FILE='' AGENT_ID='' GPU=auto
AGENT=/usr/local/bin/prof-agent SPOOL=/var/spool/prof-agent LOG=/var/log/prof-agent.log
LOG_MAX_KB=1024 LOG_KEEP=3 LOG_CHECK_S=60 AGENT_ARGS="-a -F 99 -I 1000" AGENT_PIDFILE=${AGENT_PIDFILE:-}
# shellcheck disable=SC1090
. "$r$conf"
log() { echo "$(date '+%Y-%m-%d %H:%M:%S') prof-agent-run: $*" >>"$r$LOG"; }
[ -n "$COLLECTOR" ] || { echo "prof-agent-run: set COLLECTOR=HOST:PORT in $conf" >&2; exit 2; }

if [ -z "$AGENT_ID" ]; then
	for f in /etc/machine-id /var/lib/dbus/machine-id; do
		[ -s "$r$f" ] && { read -r AGENT_ID <"$r$f"; break; }
	done
fi
[ -n "$AGENT_ID" ] || AGENT_ID=$(getprop ro.serialno 2>/dev/null)
[ -n "$AGENT_ID" ] || AGENT_ID=$(hostname)
gpu=''
case "$GPU" in
yes) gpu=--gpu ;;
auto) [ -e "$r/dev/mali0" ] && gpu=--gpu ;;
esac
token=''
[ -n "$TOKEN_FILE" ] && token="--token-file $r$TOKEN_FILE"

rotate() { # copy-truncate: the agent appends (O_APPEND), so truncating in place is safe
	[ -f "$r$LOG" ] || return 0
	kb=$(($(wc -c <"$r$LOG") / 1024))
	[ "$kb" -ge "$LOG_MAX_KB" ] || return 0
	i=$LOG_KEEP
	while [ "$i" -gt 1 ]; do
		[ -f "$r$LOG.$((i - 1))" ] && mv -f "$r$LOG.$((i - 1))" "$r$LOG.$i"
		i=$((i - 1))
	done
	cp "$r$LOG" "$r$LOG.1" && : >"$r$LOG"
	log "log rotated at $kb KiB (kept $LOG_KEEP)"
}

stop='' child=''
mkdir -p "$r$SPOOL" "$(dirname "$r$LOG")"
# the log is checked every LOG_CHECK_S by a helper (a loop of sleep: no process stays between checks)
(
	trap 'kill $! 2>/dev/null; exit 0' TERM # with its sleep
	while :; do
		sleep "$LOG_CHECK_S" &
		wait $!
		rotate
	done
) &
rotator=$!
trap 'stop=1; kill -TERM $rotator 2>/dev/null; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
backoff=1
log "agent id '$AGENT_ID', collector $COLLECTOR${gpu:+, Mali counters}"
while [ -z "$stop" ]; do
	rotate
	t0=$(date +%s)
	# shellcheck disable=SC2086
	"$r$AGENT" record --collector "$COLLECTOR" --agent-id "$AGENT_ID" $token --spool "$r$SPOOL" $gpu \
		$AGENT_ARGS >>"$r$LOG" 2>&1 </dev/null &
	child=$!
	[ -n "$AGENT_PIDFILE" ] && echo "$child" >"$r$AGENT_PIDFILE"
	wait "$child" # ends when the agent exits, or at once on a signal (the trap's kill)
	rc=$?
	[ -n "$stop" ] && wait "$child" # until the agent has flushed and exited
	child=''
	[ -n "$stop" ] && break
	[ $(($(date +%s) - t0)) -ge 600 ] && backoff=1
	log "agent exited with status $rc: restarting in $backoff s"
	sleep "$backoff" &
	sp=$!
	wait "$sp" 2>/dev/null
	kill "$sp" 2>/dev/null
	backoff=$((backoff * 2))
	[ "$backoff" -le 60 ] || backoff=60
done
kill -TERM "$rotator" 2>/dev/null
log "stopped"
exit 0
