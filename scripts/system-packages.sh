#!/usr/bin/env bash
# Installs the Debian packages that `make test` needs when they are
# missing, so that a fresh Debian machine needs no step besides `make demo`
# and `make test`. Each line of PACKAGES is "command package": the command
# the tests run, and the Debian package that provides it. A command with a
# slash is a path pattern instead (Debian keeps PostgreSQL's server programs
# off PATH).
#   chromium    the web console's browser tests (e2e/console_test.go)
#   jq          docs/authoring.md's agent session (examples/demo TestAuthoringSession)
#   postgresql  the throwaway clusters of the Postgres store's tests
#               (internal/testenv/postgres.go: initdb and pg_ctl)
# With --dry-run it prints what it would install and changes nothing.
set -euo pipefail

PACKAGES="
chromium chromium
jq jq
/usr/lib/postgresql/*/bin/initdb postgresql
"

missing=""
while read -r cmd pkg; do
  [ -n "$cmd" ] || continue
  case "$cmd" in
  */*) compgen -G "$cmd" >/dev/null || missing="$missing $pkg" ;;
  *) command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg" ;;
  esac
done <<<"$PACKAGES"

if [ -z "$missing" ]; then
  echo "system packages: all present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if [ "${1:-}" = "--dry-run" ]; then
  echo "system packages: would run: $sudo apt-get install -y -qq$missing"
  exit 0
fi
echo "system packages: installing$missing"
$sudo apt-get update -qq
$sudo apt-get install -y -qq $missing
