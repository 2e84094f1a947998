# Sourced by the benchmark scripts: what a process has used so far, read from /proc (the same
# pid namespace inside scripts/wan's network namespaces). Every thread counts: the gateway,
# nginx's workers' siblings and Go's runtime all spread their work over threads.

# cpu_ns PID...: CPU time so far (user and kernel) of these processes, in nanoseconds.
cpu_ns() {
  local total=0 p t
  for p in "$@"; do
    for t in /proc/"$p"/task/*/schedstat; do
      total=$(( total + $(cut -d' ' -f1 "$t" 2>/dev/null || echo 0) ))
    done
  done
  echo "$total"
}

# user_ticks PID: user-mode CPU time so far, in clock ticks (field 14 of /proc/PID/stat; the
# name before it may hold spaces, hence the cut after its closing parenthesis).
user_ticks() {
  sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f12
}

# switches PID: context switches so far, "voluntary involuntary", every thread.
switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/^voluntary_ctxt/ { v += $2 } /^nonvoluntary_ctxt/ { n += $2 } END { print v + 0, n + 0 }'
}

# nginx_pids PIDFILE: nginx's master and its workers.
nginx_pids() {
  local m
  m=$(cat "$1")
  echo "$m $(pgrep -P "$m" | tr '\n' ' ')"
}
