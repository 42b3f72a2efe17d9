#!/usr/bin/env bash
# Host check (TAP): user space sees only the module's interface.  The
# lists user space shares with the module live in uapi/ (as the kernel's
# include/uapi); kmod/'s headers are the module's own.  So no compile of
# user space or of the selftests has kmod/ on its include path (read from
# make's dry runs of every target: userspace/, selftests/ and what they
# build), uapi/ includes nothing (it cannot pull a kmod/ header in), and
# no header of user space shares a name with one of kmod/ (an include of
# the one would find the other), nor a source of userspace/.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# check DESCRIPTION COMMAND...: one TAP line
. "$top/scripts/lib/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The include directories (-I, -iquote, -isystem, -idirafter) of make -C
# $1's commands, every target remade (-B) but none run (-n), that are
# kmod/ or under it; $2 the targets.
kmod_includes() {
	local dir=$top/$1 line word next= path
	shift
	make -s -n -B -C "$dir" "$@" >"$tmp/dry" 2>"$tmp/dry.err" ||
		{ echo "make -n -B -C ${dir#"$top"/} failed:"; head -n 5 "$tmp/dry.err"; return 1; }
	[ -s "$tmp/dry" ] || { echo "make -n -C ${dir#"$top"/} printed no command"; return 1; }
	while read -r line; do
		for word in $line; do
			path=
			if [ -n "$next" ]; then
				path=$word next=
			else
				case $word in
				-I | -iquote | -isystem | -idirafter) next=1 ;;
				-I*) path=${word#-I} ;;
				-iquote*) path=${word#-iquote} ;;
				-isystem*) path=${word#-isystem} ;;
				-idirafter*) path=${word#-idirafter} ;;
				esac
			fi
			[ -n "$path" ] || continue
			case $path in /*) ;; *) path=$dir/$path ;; esac
			path=$(realpath -m "$path")
			case $path/ in
			"$top"/kmod/*) echo "${dir#"$top"/}: $path: $line" | cut -c1-300 ;;
			esac
		done
	done <"$tmp/dry"
}

no_kmod_includes() {
	local out
	out=$(kmod_includes "$@") || { printf '%s\n' "$out"; return 1; }
	[ -z "$out" ] || { printf '%s\n' "$out" | head -n 5; return 1; }
}

check "no compile of userspace/ (libwpstat, wpstat, wpload, its tests) has kmod/ on its include path" \
	no_kmod_includes userspace all lib-test-bins
check "no compile of selftests/ has kmod/ on its include path" \
	no_kmod_includes selftests all

includes_nothing() {
	local out
	ls "$top"/uapi/*.def >/dev/null || return 1
	out=$(grep -n '^[[:space:]]*#[[:space:]]*include' "$top"/uapi/* || true)
	[ -z "$out" ] || { printf '%s\n' "$out"; return 1; }
}
check "uapi/ holds the lists, and includes nothing (it cannot pull a kmod/ header in)" \
	includes_nothing

# File names kmod/ shares with user space: a header (.h, .def) of
# userspace/ or selftests/ (an include of the one would find the other),
# or a source of userspace/ (the two sides' files are named apart; a
# kselftest is named after what it tests).
shared_names() {
	local out
	out=$(cd "$top" && comm -12 \
		<(git ls-files kmod | sed 's|.*/||' | sort -u) \
		<({ git ls-files userspace; git ls-files selftests | grep -E '\.(h|def)$'; } |
			sed 's|.*/||' | sort -u) |
		grep -vx -e Makefile -e Kbuild | paste -sd ' ' || true)
	[ -z "$out" ] || { echo "in kmod/ and in user space: $out"; return 1; }
}
check "no header of userspace/ or selftests/, nor source of userspace/, shares its name with a file of kmod/" \
	shared_names

echo "1..$n"
[ "$failed" = 0 ]
