# Sourced by the bench/*.sh scripts: a benchmark that cannot measure fails, saying why,
# rather than print empty figures and exit 0 (bench/prune.sh did where awk was missing).
#
# need TOOL...: every tool must be on PATH (or an executable path), before any work.
need() {
  local missing=()
  for tool; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "bench: ${missing[*]} missing: install it (a benchmark that cannot measure fails)" >&2
    exit 1
  fi
}

# figure NAME VALUE: VALUE must be a number (a measurement), else the benchmark fails; it
# prints VALUE. Use it where a figure is computed, and print only figures it passed.
figure() {
  if ! [[ $2 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
    echo "bench: $1: no figure measured (got '$2')" >&2
    exit 1
  fi
  printf '%s' "$2"
}
