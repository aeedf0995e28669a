# Sourced by benchmark scripts. write_result BENCHMARK PREFIX RESULTS_JSON
# writes $out_dir/PREFIX-<device>-<date>.json: the benchmark's name, the date,
# the commit ($commit) and the results (whose "device" names the file), then
# prints it. Expects $out_dir and $commit to be set.
write_result() {
  local benchmark=$1 prefix=$2 results=$3
  local device
  device=$(sed -n 's/.*"device": "\([^"]*\)".*/\1/p' "$results" | head -1 | tr ' /(),' '_____' | tr -s '_' | cut -c1-40)
  mkdir -p "$out_dir"
  out="$out_dir/${prefix}-${device}-$(date -u +%Y-%m-%d).json"
  {
    echo "{"
    echo "  \"benchmark\": \"$benchmark\","
    echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
    echo "  \"commit\": \"$commit\","
    echo "  \"results\": $(cat "$results")"
    echo "}"
  } > "$out"
  echo "wrote $out"
  cat "$out"
}
