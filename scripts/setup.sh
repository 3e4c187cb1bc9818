#!/usr/bin/env bash
# Sets up the lab on a fresh Debian machine and starts it: Node.js, Debian's chromium and the
# Vulkan loader (the tests' browser, and Dawn's WebGPU in Node tests), a clean install from the
# lockfile, then the dev server on http://127.0.0.1:5173/.
#
#   bash scripts/setup.sh            set up, then start the dev server
#   bash scripts/setup.sh --ci       set up only; fail when the tests' browser cannot be installed
#   bash scripts/setup.sh --dry-run  print each decision and the commands it would run, run none
#
# What is missing is installed with apt-get when running as root; otherwise the script prints the
# one line to run. Only bash builtins and the commands it checks for are used, so that a test can
# run it with a PATH of stand-ins (test/setup.test.ts).
set -euo pipefail
cd "${BASH_SOURCE[0]%/*}/.."

dry=0
ci=0
for arg in "$@"; do
  case $arg in
    --dry-run) dry=1 ;;
    --ci) ci=1 ;;
    *) echo "setup: unknown option $arg (use --ci or --dry-run)" >&2; exit 2 ;;
  esac
done

say() { echo "setup: $*"; }
run() {
  if [ "$dry" = 1 ]; then say "would run: $*"; else say "running: $*"; "$@"; fi
}
has() { command -v "$1" > /dev/null 2>&1; }

root=0
if [ "$(id -u)" = 0 ]; then root=1; fi
apt=0
if has apt-get; then apt=1; fi

# --- Node.js, at the version package.json's engines field asks for -------------------------------
pkg=$(< package.json)
[[ $pkg =~ \"node\":\ *\"\>=\ *([0-9]+)\.([0-9]+) ]] || { echo "setup: package.json has no engines.node >=X.Y" >&2; exit 1; }
need_major=${BASH_REMATCH[1]} need_minor=${BASH_REMATCH[2]}
need="$need_major.$need_minor"

# new_enough VERSION: whether VERSION (v20.19.1, 20.19.1-1nodesource1, 18.20.4+dfsg-1) >= need.
new_enough() {
  [[ $1 =~ ^v?([0-9]+)\.([0-9]+) ]] || return 1
  local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  [ "$major" -gt "$need_major" ] || { [ "$major" -eq "$need_major" ] && [ "$minor" -ge "$need_minor" ]; }
}

updated=0
apt_update() {
  if [ "$updated" = 0 ]; then run apt-get update; updated=1; fi
}

node_version=none
if has node; then node_version=$(node -v); fi
if new_enough "$node_version"; then
  say "Node.js $node_version (needs >= $need): ok"
  # Debian packages npm apart from nodejs.
  if ! has npm; then
    if [ "$root" = 1 ] && [ "$apt" = 1 ]; then
      say "npm: missing"
      apt_update
      run env DEBIAN_FRONTEND=noninteractive apt-get install -y npm
    else
      say "npm: missing; to install it, run: sudo apt-get install -y npm"
      [ "$dry" = 1 ] || exit 1
    fi
  fi
else
  say "Node.js $node_version (needs >= $need): missing"
  candidate=none
  if [ "$root" = 1 ] && [ "$apt" = 1 ]; then apt_update; fi
  if [ "$apt" = 1 ] && has apt-cache; then
    policy=$(apt-cache policy nodejs)
    if [[ $policy =~ Candidate:\ *([^[:space:]]+) ]]; then candidate=${BASH_REMATCH[1]}; fi
  fi
  if [ "$root" = 1 ] && new_enough "$candidate"; then
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm
  else
    if new_enough "$candidate"; then
      say "to install it, run: sudo apt-get install -y nodejs npm"
    else
      # Debian 12's own nodejs is 18: NodeSource packages a current one (npm included).
      say "to install it, run: curl -fsSL https://deb.nodesource.com/setup_22.x | sudo bash - && sudo apt-get install -y nodejs"
    fi
    say "then run this script again"
    [ "$dry" = 1 ] || exit 1
  fi
fi

# --- the tests' browser: Chromium (CHROMIUM_PATH, else Debian's chromium) and libvulkan1 ----------
packages=()
if [ -n "${CHROMIUM_PATH:-}" ]; then
  if [ -x "$CHROMIUM_PATH" ]; then
    say "Chromium $CHROMIUM_PATH (CHROMIUM_PATH): ok"
  else
    # Another browser than Debian's was asked for: installing chromium would not put it there.
    say "Chromium: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable; point it at Chrome or Chromium, or unset it to use Debian's chromium"
    [ "$dry" = 1 ] || [ "$ci" = 0 ] || exit 1
  fi
elif has chromium; then
  found=$(command -v chromium)
  say "Chromium $found: ok"
  # chromium.config.ts launches /usr/bin/chromium unless told otherwise.
  if [ "$found" != /usr/bin/chromium ]; then say "the tests launch /usr/bin/chromium; to use this one, export CHROMIUM_PATH=$found"; fi
else
  say "Chromium: missing"
  packages+=(chromium)
fi

ldconfig=ldconfig
has ldconfig || ldconfig=/sbin/ldconfig
libs=$("$ldconfig" -p 2> /dev/null || true)
if [[ $libs == *"libvulkan.so.1 "* ]]; then
  say "Vulkan loader libvulkan.so.1: ok"
else
  say "Vulkan loader libvulkan.so.1: missing"
  packages+=(libvulkan1)
fi

if [ ${#packages[@]} -gt 0 ]; then
  if [ "$root" = 1 ] && [ "$apt" = 1 ]; then
    apt_update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
  else
    if [ "$apt" = 1 ]; then
      say "the tests need ${packages[*]}; to install, run: sudo apt-get update && sudo apt-get install -y ${packages[*]}"
    else
      say "the tests need ${packages[*]} (no apt-get here): install Chromium and the Vulkan loader with this system's package manager, and set CHROMIUM_PATH to the browser"
    fi
    if [ "$ci" = 1 ] && [ "$dry" = 0 ]; then exit 1; fi
    say "going on: the lab itself runs in any browser with WebGPU"
  fi
fi

# --- the project ------------------------------------------------------------------------------
# onnxruntime-node's postinstall would download CUDA libraries, and Playwright must not download
# browsers: the tests use the Chromium above.
run env ONNXRUNTIME_NODE_INSTALL=skip PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci

if [ "$ci" = 1 ]; then
  say "set up; run the tests with: npm test"
else
  say "starting the lab on http://127.0.0.1:5173/ (Ctrl-C stops it); run the tests with: npm test"
  if [ "$dry" = 1 ]; then say "would run: npm run dev"; else exec npm run dev; fi
fi
