# Sourced by .ci/run and Scripts/test.sh. `stage NAME COMMAND...` runs COMMAND and keeps how
# long it took; the times are printed when the script ends, after a failure too, so that a
# slow or failing stage is named without reading the whole log.
stage_times=()
stage() {
  local name=$1 started=$SECONDS rc=0
  shift
  "$@" || rc=$?
  stage_times+=("$(printf '%5d s  %s' $((SECONDS - started)) "$name")$([ $rc = 0 ] || echo " (exit $rc)")")
  return $rc
}
print_stage_times() {
  [ ${#stage_times[@]} -gt 0 ] || return 0
  echo "stage times ($1, $SECONDS s in all):"
  printf '  %s\n' "${stage_times[@]}"
}
# `lap NAME`: what ran since the last lap (or the start) was the stage NAME, for scripts whose
# stages are several commands each.
lap_started=$SECONDS
lap() {
  stage_times+=("$(printf '%5d s  %s' $((SECONDS - lap_started)) "$1")")
  lap_started=$SECONDS
}
