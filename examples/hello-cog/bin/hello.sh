#!/bin/sh
# hello-cog: prints one greeting line as JSON, following the cog convention (docs/writing-a-cog.md):
# mode flags --once / --interval N (none: listener), config values as --<field> <value>.
set -u
mode=listener
interval=60
greeting=hello
while [ $# -gt 0 ]; do
  case "$1" in
    --once) mode=once; shift ;;
    --interval) mode=interval; interval="${2:?--interval needs a value}"; shift 2 ;;
    --console) mode=once; shift 2 ;;
    --greeting) greeting="${2:?}"; shift 2 ;;
    --interval_secs) interval="${2:?}"; shift 2 ;;
    *) echo "hello-cog: unknown argument: $1" >&2; exit 2 ;;
  esac
done
greet() {
  g=$(printf '%s' "$greeting" | sed 's/\\/\\\\/g; s/"/\\"/g')
  printf '{"greeting":"%s","node":"%s"}\n' "$g" "${HEDDLE_NODE_ID:-unknown}"
}
case "$mode" in
  once) greet ;;
  interval) while :; do greet; sleep "$interval"; done ;;
  listener) while :; do greet; sleep 3600; done ;;
esac
