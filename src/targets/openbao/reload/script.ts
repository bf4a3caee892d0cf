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

"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
trap '' HUP

if [ -n "$files" ]; then
  (
    trap - TERM INT
    last=$(fingerprint)
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

# wait also returns when a trapped signal arrives; the server is gone only once wait has reaped it,
# and then it no longer answers kill -0.
while :; do
  wait "$child"
  status=$?
  kill -0 "$child" 2>/dev/null || break
done
[ -n "\${watcher:-}" ] && kill "$watcher" 2>/dev/null
exit "$status"
`;
