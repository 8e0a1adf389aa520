# The TAP-style reporting the project's check scripts share (sourced, not run): `ok`/`not_ok`
# count and print a result line, `note` a comment, `show_tail` a log file's last lines.
# The sourcing script sets ROOT (the repository) first.
PASSED=0
FAILED=0
START=$SECONDS

ok() {
  PASSED=$((PASSED + 1))
  echo "ok - $1"
}
not_ok() {
  FAILED=$((FAILED + 1))
  echo "not ok - $1"
}
note() { echo "# $*"; }

# Prints the last lines of a log file as comments.
show_tail() {
  local file="$1" n="${2:-20}"
  [ -s "$file" ] || return 0
  note "last lines of ${file#"$ROOT"/}:"
  tail -n "$n" "$file" | sed 's/^/#   /'
}
