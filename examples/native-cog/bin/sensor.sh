#!/bin/sh
# native-cog: a cog following the Heddle cog convention (docs/writing-a-cog.md).
#   --once             take one reading, print it, exit 0
#   --interval N       take a reading every N seconds until SIGTERM
#   (no mode flag)     listener: read until SIGTERM
#   --console status   print one status line and exit
#   --label V --scale N  config values, one argv element each
# Output: one JSON object per line on stdout; errors on stderr; exit 0 on success, 2 on bad usage.
set -u
mode=listener
interval=10
console=
label=room
scale=1
while [ $# -gt 0 ]; do
  case "$1" in
    --once) mode=once; shift ;;
    --interval) mode=interval; interval="${2:?--interval needs a value}"; shift 2 ;;
    --console) console="${2:?--console needs a command}"; shift 2 ;;
    --label) label="${2:?}"; shift 2 ;;
    --scale) scale="${2:?}"; shift 2 ;;
    *) echo "native-cog: unknown argument: $1" >&2; exit 2 ;;
  esac
done
case "$scale" in ''|*[!0-9]*) echo "native-cog: --scale must be an integer" >&2; exit 2 ;; esac

# Labels are free text: escape backslashes and quotes for JSON.
json_label=$(printf '%s' "$label" | sed 's/\\/\\\\/g; s/"/\\"/g')
node="${HEDDLE_NODE_ID:-unknown}"
data="${HEDDLE_DATA_DIR:-.}"
count_file="$data/readings.count"

reading() {
  n=$(cat "$count_file" 2>/dev/null || echo 0)
  n=$((n + 1))
  echo "$n" > "$count_file" || { echo "native-cog: cannot write $count_file" >&2; return 1; }
  # A stand-in "sensor": seconds of the clock, scaled.
  value=$(( $(date +%S | sed 's/^0//') * scale ))
  printf '{"type":"reading","node":"%s","label":"%s","seq":%d,"value":%d,"ts":%d}\n' \
    "$node" "$json_label" "$n" "$value" "$(date +%s)"
}

if [ -n "$console" ]; then
  case "$console" in
    status)
      n=$(cat "$count_file" 2>/dev/null || echo 0)
      printf '{"type":"status","node":"%s","label":"%s","readings":%d}\n' "$node" "$json_label" "$n"
      exit 0 ;;
    *) echo "native-cog: unknown console command: $console" >&2; exit 2 ;;
  esac
fi

trap 'exit 0' TERM INT
case "$mode" in
  once) reading; exit $? ;;
  interval) while :; do reading || exit 1; sleep "$interval" & wait $!; done ;;
  listener) while :; do reading || exit 1; sleep 1 & wait $!; done ;;
esac
