#!/bin/sh
# Builds the fake libcuda.so.1 with the toy kernels and the self-test into a
# temporary directory, runs it, and cleans up. Each step is bounded in time.
#
# Usage: cuda/emu/testdata/run_selftest.sh [extra g++ flags, e.g. -fsanitize=thread]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
emu=$(dirname "$here")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

timeout 600 g++ -std=c++20 -O1 -g -shared -fPIC -pthread "$@" -I"$here" \
	-DTM_KERNELS_SOURCE="\"$here/toy.cu\"" -o "$tmp/libcuda.so.1" "$emu/fakecuda.cpp"
timeout 300 g++ -std=c++20 -O1 -g -pthread "$@" -o "$tmp/selftest" "$here/selftest.cpp" -ldl
timeout 300 "$tmp/selftest" "$tmp/libcuda.so.1" "$here/toy.ptx"
