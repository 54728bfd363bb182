#!/bin/sh
# Installs what building and testing hloi needs on Debian 12, when missing:
# the build tools and libraries (OpenBLAS for the fast dot and convolution,
# oneDNN for the fast convolution; both opened only when a run needs them),
# what the Python module builds from (the Python 3 development files,
# NumPy, setuptools for `pip install`), and the test oracles (NumPy for the
# differential test, pytest for the Python module's suite, Graphviz for
# rendering `hloi dot` output, xmllint for validating `hloi test --junit`
# reports, man for the man page test), so
# that on a fresh machine no test is skipped. Used by README's quick start
# and by .ci/run. Prints what it installs. A test oracle that cannot be
# installed is reported here and its tests report a skip; the build
# packages are required. HLOI_SETUP_OPTIONAL=1 adds clang and libFuzzer
# (tests/fuzz/run.sh) and Open MPI (the multi-rank test, tests/cli/mpi_test.sh;
# hloi opens libmpi.so.40 only under mpirun, doc/mpi.md).
set -eu

need="cmake ninja-build gcc pkg-config flex bison libfl-dev libcunit1-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libopenblas-dev libdnnl-dev"
oracles="python3-numpy python3-dev python3-setuptools python3-pytest graphviz libxml2-utils man-db"
if [ "${HLOI_SETUP_OPTIONAL:-}" = 1 ]; then
	oracles="$oracles libclang-rt-14-dev clang openmpi-bin"
fi

missing_of() {
	m=""
	for pkg in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
			m="$m $pkg"
		fi
	done
	echo "$m"
}

# shellcheck disable=SC2086
missing=$(missing_of $need)
# shellcheck disable=SC2086
missing_oracles=$(missing_of $oracles)
if [ -z "$missing" ] && [ -z "$missing_oracles" ]; then
	exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || echo "hloi setup: apt-get update failed; trying the package lists at hand" >&2
if [ -n "$missing" ]; then
	echo "hloi setup: installing:$missing" >&2
	# shellcheck disable=SC2086
	$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
for pkg in $missing_oracles; do
	echo "hloi setup: installing test oracle $pkg" >&2
	if ! $sudo apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null; then
		echo "hloi setup: could not install $pkg; the tests that need it will report a skip" >&2
	fi
done
