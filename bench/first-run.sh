#!/usr/bin/env bash
# The first ten minutes, timed: a fresh clone, `npm install`, `npm start` until it listens, the
# first curl answer, the CLI's help and one CLI lookup. Prints a Markdown table (the README's
# "First run, measured" holds its last run).
#
#   bench/first-run.sh [REPO] [WORK_DIR]
#
# REPO defaults to this repository (its committed HEAD is cloned); WORK_DIR to a new temporary
# folder, removed at the end unless KEEP=1. PORT (default 18480) is where `npm start` listens.
# NPM_INSTALL_FLAGS (default: --prefer-offline --no-audit --no-fund) go to `npm install`: the
# figures are for a warm npm cache, as a developer's machine has.
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
work="${2:-$(mktemp -d "${TMPDIR:-/tmp}/seclookup-first-run-XXXXXX")}"
port="${PORT:-18480}"
read -r -a install_flags <<<"${NPM_INSTALL_FLAGS:---prefer-offline --no-audit --no-fund}"
server=""

cleanup() {
  if [ -n "$server" ]; then kill -- -"$server" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# CPU seconds (user + system, children included) of a command, into the file named first: on a
# busy machine the wall-clock figures grow with the load, the CPU ones much less.
cpu() {
  local out="$1"
  shift
  local TIMEFORMAT='%U %S'
  { time "$@" 2>&3 ; } 3>&2 2>"$out.time"
  awk '{ printf "%.2f", $1 + $2 }' "$out.time" >"$out"
}

clone_started=$(now)
git clone --quiet "$repo" "$work/seclookup"
cd "$work/seclookup"
cloned=$(now)

cpu "$work/install.cpu" npm install "${install_flags[@]}" >"$work/install.log" 2>&1 || { tail -30 "$work/install.log" >&2; exit 1; }
installed=$(now)

# npm start in its own process group, so that the whole tree (npm, sh, node) is stopped at the end.
start_requested=$(now)
SECLOOKUP_DB="$work/seclookup.db" PORT="$port" setsid npm start >"$work/stdout.log" 2>"$work/stderr.log" &
server=$!
until grep -q 'listening on' "$work/stderr.log" 2>/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/stderr.log" >&2; exit 1; fi
  sleep 0.02
done
listening=$(now)

key=$(grep -o 'ua_sec_[A-Za-z0-9_-]*' "$work/stderr.log" | head -1)
answer=$(curl -sS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/useragent/lookup?ua=curl/8.5.0")
answered=$(now)
case "$answer" in '{"success":true'*) ;; *) echo "unexpected answer: $answer" >&2; exit 1 ;; esac

help_started=$(now)
cpu "$work/help.cpu" node dist/cli.js --help >/dev/null
helped=$(now)

lookup_started=$(now)
cpu "$work/lookup.cpu" node dist/cli.js lookup geoip 8.8.8.8 >"$work/lookup.json"
looked_up=$(now)
grep -q '"country"' "$work/lookup.json" || { echo "unexpected lookup: $(cat "$work/lookup.json")" >&2; exit 1; }

# A second start: the database and its keys exist, dist/ is fresh.
kill -- -"$server"
while kill -0 "$server" 2>/dev/null; do sleep 0.02; done
restart_requested=$(now)
SECLOOKUP_DB="$work/seclookup.db" PORT="$port" setsid npm start >>"$work/stdout.log" 2>"$work/stderr2.log" &
server=$!
until grep -q 'listening on' "$work/stderr2.log" 2>/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/stderr2.log" >&2; exit 1; fi
  sleep 0.02
done
relistening=$(now)

# Anything but JSON lines on npm start's stdout (npm's own banner aside) is a bug.
stray=$(grep -v '^{' "$work/stdout.log" | grep -v '^> \|^$' || true)

echo "| step | seconds | CPU seconds |"
echo "|---|---:|---:|"
echo "| git clone | $(seconds "$clone_started" "$cloned") | |"
echo "| npm install | $(seconds "$cloned" "$installed") | $(cat "$work/install.cpu") |"
echo "| npm start until listening (first start: creates the starter keys) | $(seconds "$start_requested" "$listening") | |"
echo "| npm start until listening (again) | $(seconds "$restart_requested" "$relistening") | |"
echo "| first curl answer after listening | $(seconds "$listening" "$answered") | |"
echo "| clone to first answer, in all | $(seconds "$clone_started" "$answered") | |"
echo "| node dist/cli.js --help | $(seconds "$help_started" "$helped") | $(cat "$work/help.cpu") |"
echo "| node dist/cli.js lookup geoip 8.8.8.8 | $(seconds "$lookup_started" "$looked_up") | $(cat "$work/lookup.cpu") |"
echo
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); node $(node --version), npm $(npm --version)"
if [ -n "$stray" ]; then echo "stdout of npm start held more than the request log:" >&2; echo "$stray" >&2; exit 1; fi
