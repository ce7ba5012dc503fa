#!/usr/bin/env bash
# The headless browser of the browser test (PaymentsPageBrowserTest of idempotency-examples):
# Debian's chromium package, installed with apt-get when it is missing.
#
# Usage:
#   scripts/chromium.sh install   install chromium (apt-get, non-interactive; needs root) if
#                                 /usr/bin/chromium is missing, check that it runs, print the
#                                 export line
#   scripts/chromium.sh env       print the export line of the browser installed
#
#   env_lines="$(scripts/chromium.sh install)" && eval "$env_lines"
#
# Exports: IDEMPOTENCY_CHROMIUM (/usr/bin/chromium). Nothing runs in the background: the test
# starts the browser itself and stops it, so there is no stop.

set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

CHROMIUM=/usr/bin/chromium

log() { printf '[chromium] %s\n' "$*" >&2; }
die() { printf '[chromium] ERROR: %s\n' "$*" >&2; exit 1; }

install() {
  if [[ ! -x "$CHROMIUM" ]]; then
    [[ "$(id -u)" -eq 0 ]] || die "$CHROMIUM is missing and this is not root: install Debian's chromium package"
    log "installing chromium (apt-get)"
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2 || die "apt-get could not install chromium"
    [[ -x "$CHROMIUM" ]] || die "apt-get installed chromium without $CHROMIUM"
  fi
  local version
  version="$("$CHROMIUM" --version 2>/dev/null)" || die "$CHROMIUM --version failed"
  log "using $version"
  env_lines
}

env_lines() {
  [[ -x "$CHROMIUM" ]] || die "$CHROMIUM is missing: run scripts/chromium.sh install"
  echo "export IDEMPOTENCY_CHROMIUM=$CHROMIUM"
}

case "${1:-}" in
  install) install ;;
  env) env_lines ;;
  *)
    echo "usage: $0 install|env" >&2
    exit 2
    ;;
esac
