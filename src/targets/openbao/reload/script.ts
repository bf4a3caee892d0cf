/**
 * The PID-1 wrapper that lets OpenBao pick up a renewed certificate without a restart, a rollout or
 * exec rights: it starts the server, polls a fingerprint of the mounted TLS files (kubelet swaps a
 * Secret volume's ..data symlink atomically, so a read sees the old or the new set, never half) and
 * sends SIGHUP, on which OpenBao reloads its listener certificates. SIGTERM and SIGINT are passed
 * on, and the wrapper exits with the server's status.
 *
 * POSIX sh and busybox/coreutils tools only (cat, sleep), as the upstream image
 * (Alpine) has them. Configuration comes from the environment so the script text never changes
 * with a cluster's settings, and the ConfigMap holding it is the same for every cluster.
 */
export const RELOAD_SCRIPT = `#!/bin/sh
# Usage: tls-reload.sh COMMAND [ARGS...]
# BAO_TLS_RELOAD_FILES: space-separated files to watch; BAO_TLS_RELOAD_INTERVAL: seconds between looks.
files="\${BAO_TLS_RELOAD_FILES:-}"
interval="\${BAO_TLS_RELOAD_INTERVAL:-5}"
case "$interval" in ''|*[!0-9]*) interval=5 ;; esac
[ "$interval" -ge 1 ] || interval=1

# The files' text itself is the fingerprint (PEM is small and has no NUL bytes): no hashing tool
# is needed, so any busybox build will do. A missing file counts as empty.
fingerprint() {
  for f in $files; do
    printf '%s:' "$f"
    cat "$f" 2>/dev/null
  done
}

# The first look comes before the server starts: a change between the server reading the files and
# the watcher's first look would otherwise never be signalled (an extra SIGHUP is harmless).
# SIGTERM and SIGINT are trapped before the server starts: a signal in between would otherwise end
# the wrapper itself and leave the server running. One that comes before the server's pid is known
# is kept and passed on once it is.
child=
pending=
forward() {
  interrupted=1
  if [ -n "$child" ]; then kill -"$1" "$child" 2>/dev/null; else pending=$1; fi
}
trap 'forward TERM' TERM
trap 'forward INT' INT
last=$(fingerprint)
"$@" &
child=$!
trap '' HUP
[ -n "$pending" ] && kill -"$pending" "$child" 2>/dev/null

if [ -n "$files" ]; then
  (
    trap - TERM INT
    while kill -0 "$child" 2>/dev/null; do
      sleep "$interval"
      now=$(fingerprint)
      if [ "$now" != "$last" ]; then
        last=$now
        echo "tls-reload: certificate files changed, sending SIGHUP to $child" >&2
        kill -HUP "$child" 2>/dev/null
      fi
    done
  ) &
  watcher=$!
fi

# wait also returns when a trapped signal arrives (with 128 + the signal): then wait again, since the
# shell may already have reaped a server that ended at once, keeping its status for the next wait
# (kill -0 no longer finds it, so it cannot tell). 127 after an interrupted wait means that wait
# had the server's status already.
status=
while :; do
  interrupted=
  wait "$child"
  rc=$?
  [ "$rc" -eq 127 ] && [ -n "$status" ] && break
  status=$rc
  [ -n "$interrupted" ] || break
done
[ -n "\${watcher:-}" ] && kill "$watcher" 2>/dev/null
exit "$status"
`;
