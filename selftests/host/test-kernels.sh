#!/usr/bin/env bash
# Host check (TAP): scripts/vm/kernels.sh picks, for each series, the newest
# kernel that apt can install, image and headers both.  A fake apt-cache on
# PATH answers from a list of packages and their candidates; no network.
#
#   test-kernels.sh

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/wpstat-test-kernels.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$top/scripts/lib/tap.sh"

# The fake: $tmp/pkgs holds "package candidate" lines ("(none)": known to
# apt but not installable, as a signed image is before its upload).
mkdir -p "$tmp/bin"
cat >"$tmp/bin/apt-cache" <<'FAKE'
#!/usr/bin/env bash
db=${FAKE_APT_DB:?}
case $1 in
search)
	shift
	while [ "${1:-}" = --names-only ]; do shift; done
	awk '{ print $1 }' "$db" | grep -E -- "$1" | sed 's/$/ - fake/'
	;;
policy)
	shift
	for p in "$@"; do
		c=$(awk -v p="$p" '$1 == p { print $2 }' "$db")
		[ -n "$c" ] || continue
		echo "$p:"
		echo "  Installed: (none)"
		echo "  Candidate: $c"
	done
	;;
*) exit 100 ;;
esac
FAKE
chmod +x "$tmp/bin/apt-cache"

available() {	# DB-LINES...: kernels.sh available against them
	printf '%s\n' "$@" >"$tmp/pkgs"
	FAKE_APT_DB=$tmp/pkgs PATH="$tmp/bin:$PATH" "$top/scripts/vm/kernels.sh" available
}

expect() {	# WANT GOT
	[ "$(echo $1)" = "$(echo $2)" ] || { echo "want: $(echo $1)"; echo "got:  $(echo $2)"; return 1; }
}

# 1. Everything installable: the newest of each series.
all_there() {
	expect "6.1.0-56-amd64 6.12.117+deb12-amd64" "$(available \
		'linux-image-6.1.0-55-amd64 6.1.190-1' 'linux-headers-6.1.0-55-amd64 6.1.190-1' \
		'linux-image-6.1.0-56-amd64 6.1.192-2' 'linux-headers-6.1.0-56-amd64 6.1.192-2' \
		'linux-image-6.12.117+deb12-amd64 6.12.117-1' 'linux-headers-6.12.117+deb12-amd64 6.12.117-1')"
}
check "the newest kernel of each series" all_there

# 2. A point release whose headers are out before its signed image
# (bookworm's 6.1.0-57, November 2026): the one before it, not a kernel
# that apt-get install refuses.
signed_lags() {
	expect "6.1.0-56-amd64 6.12.117+deb12-amd64" "$(available \
		'linux-image-6.1.0-56-amd64 6.1.192-2' 'linux-headers-6.1.0-56-amd64 6.1.192-2' \
		'linux-image-6.1.0-57-amd64 (none)' 'linux-headers-6.1.0-57-amd64 6.1.192-3' \
		'linux-image-6.1.0-57-amd64-unsigned 6.1.192-3' \
		'linux-image-6.12.117+deb12-amd64 6.12.117-1' 'linux-headers-6.12.117+deb12-amd64 6.12.117-1')"
}
check "a kernel whose signed image is not out yet is passed over" signed_lags

# 3. An image without headers (nothing to build the module against).
no_headers() {
	expect "6.1.0-55-amd64 6.12.117+deb12-amd64" "$(available \
		'linux-image-6.1.0-55-amd64 6.1.190-1' 'linux-headers-6.1.0-55-amd64 6.1.190-1' \
		'linux-image-6.1.0-56-amd64 6.1.192-2' \
		'linux-image-6.12.117+deb12-amd64 6.12.117-1' 'linux-headers-6.12.117+deb12-amd64 6.12.117-1')"
}
check "a kernel without headers is passed over" no_headers

# 4. Versions compare as versions, not as strings (6.12.9 < 6.12.10).
version_order() {
	expect "6.12.10+deb12-amd64" "$(available \
		'linux-image-6.12.9+deb12-amd64 6.12.9-1' 'linux-headers-6.12.9+deb12-amd64 6.12.9-1' \
		'linux-image-6.12.10+deb12-amd64 6.12.10-1' 'linux-headers-6.12.10+deb12-amd64 6.12.10-1')"
}
check "versions compare as versions" version_order

echo "1..$n"
[ "$failed" = 0 ]
