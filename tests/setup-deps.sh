#!/bin/sh
# Installs what building and testing hloi needs on Debian 12, when missing.
# Used by README's quick start and by .ci/run. Prints what it installs.
set -eu

need="cmake ninja-build gcc pkg-config flex bison libfl-dev libcunit1-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler"
# Optional oracles and tools used by some tests when present.
if [ "${HLOI_SETUP_OPTIONAL:-}" = 1 ]; then
	need="$need python3-numpy graphviz libclang-rt-14-dev clang"
fi

missing=""
for pkg in $need; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $pkg"
	fi
done

if [ -z "$missing" ]; then
	exit 0
fi

echo "hloi setup: installing:$missing" >&2
sudo=""
if [ "$(id -u)" != 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
