#!/usr/bin/env bash
# Installs Chromium for the browser tests (`npm run test:e2e`) when it is missing.
# Idempotent: does nothing when /usr/bin/chromium (or $CHROMIUM_PATH) exists.
# Needs a Debian or Ubuntu machine and root (or sudo); `npx playwright install` is not used
# because the browser downloads it needs are not reachable from the CI machines.
set -euo pipefail

chromium=${CHROMIUM_PATH:-/usr/bin/chromium}

if [[ -x "$chromium" ]]; then
  echo "e2e-setup: Chromium is already installed: $("$chromium" --version 2>/dev/null || echo "$chromium")"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "e2e-setup: $chromium is missing and apt-get is not available; install Chromium and set CHROMIUM_PATH." >&2
  exit 1
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "e2e-setup: installing Chromium needs root (or sudo)." >&2
    exit 1
  fi
fi

echo "e2e-setup: installing Chromium with apt-get..."
export DEBIAN_FRONTEND=noninteractive
${sudo[@]+"${sudo[@]}"} apt-get update
${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

if [[ ! -x "$chromium" ]]; then
  echo "e2e-setup: apt-get finished but $chromium is still missing; set CHROMIUM_PATH to the browser." >&2
  exit 1
fi
echo "e2e-setup: installed $("$chromium" --version 2>/dev/null || echo "$chromium")"
