#!/usr/bin/env bash
# The README's two commands go through ./dev: check its contract with the real
# script. Unknown subcommands and arguments exit 2 with the usage; `./dev test`
# exits non-zero when a test fails and zero when all pass. The last two run the
# real dev in a scratch project (a copy of dev beside a CMake project with one
# test), so they prove what dev does with ctest's verdict, not a copy of its logic.
set -uo pipefail
dev=$(cd "$(dirname "$0")/../.." && pwd)/dev
failures=0
check() {  # check DESCRIPTION EXPECTED_STATUS ACTUAL_STATUS [STDERR_FILE PATTERN]
    local ok=1
    [ "$2" = "$3" ] || ok=0
    if [ $# -ge 5 ] && ! grep -q -- "$5" "$4"; then ok=0; fi
    if [ $ok = 1 ]; then echo "ok: $1"; else echo "FAILED: $1 (status $3, expected $2)"; [ $# -ge 4 ] && cat "$4"; failures=$((failures + 1)); fi
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for args in "bogus" "build extra" "package extra" "test --bogus" "test --sanitize extra" "fuzz 0" "fuzz ten" "install" "install nonsense"; do
    # shellcheck disable=SC2086
    "$dev" $args >"$scratch/out" 2>"$scratch/err"
    check "./dev $args exits 2 with the usage" 2 $? "$scratch/err" "^usage: ./dev run"
    [ -s "$scratch/out" ] && { echo "FAILED: ./dev $args wrote to stdout"; failures=$((failures + 1)); }
done

project="$scratch/project"
mkdir -p "$project"
cp "$dev" "$project/dev"
cat >"$project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(dev_contract NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME verdict COMMAND sh -c "test ! -e ${CMAKE_SOURCE_DIR}/fail")
CMAKE
(cd "$project" && ./dev test) >"$scratch/log" 2>&1
check "./dev test exits 0 when every test passes" 0 $? "$scratch/log" "100% tests passed"
touch "$project/fail"
(cd "$project" && ./dev test) >"$scratch/log" 2>&1
status=$?
[ $status -ne 0 ] && status=nonzero
check "./dev test exits non-zero when a test fails" nonzero $status "$scratch/log" "tests failed"

[ $failures -eq 0 ] || { echo "$failures dev contract check(s) failed"; exit 1; }
