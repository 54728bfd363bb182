#!/bin/sh
# Installs hloi from BUILD_DIR into a temporary prefix, then builds and runs
# tests/example/example.c against the installed package twice: through
# pkg-config and through a downstream CMake project (find_package).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name hloi.pc -path '*pkgconfig*' | head -n 1 | xargs dirname | xargs dirname)
test -f "$prefix/include/hloi.h"
test -f "$prefix/include/hloi/tool.h"
test -x "$prefix/bin/hloi"
# the man page and the shell completions, where man, bash-completion and
# zsh look for them
test -f "$prefix/share/man/man1/hloi.1"
test -f "$prefix/share/bash-completion/completions/hloi"
test -f "$prefix/share/zsh/site-functions/_hloi"
if command -v man >/dev/null 2>&1; then
	MANPATH="$prefix/share/man" man -P cat hloi 2>/dev/null | grep -q "hloi - an interpreter for XLA's HLO"
fi

echo "== pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags hloi) \
	"$src/tests/example/example.c" -o "$tmp/example_pc" $(pkg-config --libs hloi)
LD_LIBRARY_PATH="$libdir" "$tmp/example_pc"
# the tools header, installed beside hloi.h, compiles on its own
printf '#include <hloi/tool.h>\nint main(void) { return hloi_memory_ceiling() != 0; }\n' >"$tmp/tool.c"
cc -std=c11 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags hloi) "$tmp/tool.c" -o "$tmp/tool_pc" \
	$(pkg-config --libs hloi)
LD_LIBRARY_PATH="$libdir" "$tmp/tool_pc"

echo "== find_package(hloi CONFIG)"
cmake -S "$src/tests/example" -B "$tmp/downstream" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/downstream" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/downstream/example"

echo "== installed hloi binary"
"$prefix/bin/hloi" --version
echo "install test passed"
