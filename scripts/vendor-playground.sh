#!/usr/bin/env bash
# Refreshes the playground's assets in internal/playground/assets from the npm
# registry: GraphiQL's UMD build and stylesheet, and the React UMD builds it
# runs on, at the pinned versions below. Each file is checked against its
# pinned SHA-256 (the same Subresource Integrity hashes gqlgen's CDN page
# uses), so a refresh never takes a file the registry changed under a version.
#
# To move to other versions: change the versions, run `make playground-assets
# PLAYGROUND_VERIFY=0` once, check the page (`go test -run TestPlayground
# ./cmd/algoitny`), and write the new hashes it prints here.
set -euo pipefail
cd "$(dirname "$0")/.."

GRAPHIQL=4.1.2
REACT=18.2.0
# file in the package → file in assets → sha256 (base64)
files=(
	"graphiql@$GRAPHIQL graphiql.min.js graphiql.min.js hnImuor1znlJkD/FOTL3jayfS/xsyNoP04abi8bFJWs="
	"graphiql@$GRAPHIQL graphiql.min.css graphiql.min.css MEh+B2NdMSpj9kexQNN3QKc8UzMrCXW/Sx/phcpuyIU="
	"graphiql@$GRAPHIQL LICENSE LICENSE.graphiql -"
	"react@$REACT umd/react.production.min.js react.production.min.js S0lp+k7zWUMk2ixteM6HZvu8L9Eh//OVrt+ZfbCpmgY="
	"react@$REACT LICENSE LICENSE.react -"
	"react-dom@$REACT LICENSE LICENSE.react-dom -"
	"react-dom@$REACT umd/react-dom.production.min.js react-dom.production.min.js IXWO0ITNDjfnNXIu5POVfqlgYoop36bDzhodR6LW5Pc="
)

command -v npm >/dev/null || { echo "npm is needed: apt-get install -y npm" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=internal/playground/assets
mkdir -p "$dest"
for entry in "${files[@]}"; do
	read -r pkg from to sum <<<"$entry"
	dir="$tmp/${pkg//[@\/]/_}"
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		(cd "$dir" && npm pack --silent "$pkg" >/dev/null && tar xzf ./*.tgz)
	fi
	src="$dir/package/$from"
	got=$(openssl dgst -sha256 -binary "$src" | base64)
	if [ "$sum" != "-" ] && [ "$got" != "$sum" ] && [ "${PLAYGROUND_VERIFY:-1}" != 0 ]; then
		echo "$pkg $from: sha256 $got, want $sum" >&2
		exit 1
	fi
	cp "$src" "$dest/$to"
	echo "$dest/$to  ($pkg $from, sha256-$got)"
done
