#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the static libraries the wheel links into PREFIX (default build/wheel/deps), each held
# to glibc 2.28 (docs/wheels.md):
#   - curl and libgit2 from Debian 12's source packages (scripts/wheel/sources.txt: sha256-pinned,
#     Debian's patches applied), compiled with templates/project/compat/glibc_pins.h forced in,
#     with only what kernelhub uses: curl speaks HTTP(S) over OpenSSL and zlib, libgit2 works on
#     local repositories (no HTTPS or SSH transport, POSIX regcomp);
#   - OpenSSL, zlib, http-parser and cmark-gfm as Debian ships them (their -dev packages' .a),
#     copied with their glibc references pinned (scripts/wheel/pin_archive.py).
# A second run with the same inputs does nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$(realpath -m "${1:-$root/build/wheel/deps}")
work=$(realpath -m "$root/build/wheel")
downloads=$work/downloads
sources=$root/scripts/wheel/sources.txt
pins=$root/templates/project/compat/glibc_pins.h
multiarch=/usr/lib/x86_64-linux-gnu

stamp_inputs=$(cat "$sources" "$0" "$pins" "$root/scripts/wheel/pin_archive.py" | sha256sum | cut -c1-16)
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp_inputs" ]; then
  exit 0
fi
rm -rf "$prefix"
mkdir -p "$prefix/lib" "$downloads"

# fetch NAME: the file sources.txt names, downloaded once and checked against its sha256.
fetch() {
  local name=$1 url sha file
  read -r url sha < <(awk -v n="$name" '$1 == n { print $2, $3 }' "$sources")
  [ -n "$url" ] || { echo "build-deps: $sources has no line for $name" >&2; return 1; }
  file=$downloads/$(basename "$url")
  if [ ! -f "$file" ] || ! echo "$sha  $file" | sha256sum --check --status; then
    echo "build-deps: downloading $url" >&2
    curl -fsSL --retry 3 -o "$file.part" "$url"
    if ! echo "$sha  $file.part" | sha256sum --check --status; then
      echo "build-deps: $url does not have the sha256 that $sources pins ($sha)" >&2
      rm -f "$file.part"
      return 1
    fi
    mv "$file.part" "$file"
  fi
  echo "$file"
}

# unpack NAME DIR: upstream tarball plus Debian's patches (its series file, up to the patches
# Debian only uses to build other TLS flavours).
unpack() {
  local name=$1 dir=$2 orig debian
  orig=$(fetch "$name-orig")
  debian=$(fetch "$name-debian")
  rm -rf "$dir" && mkdir -p "$dir"
  tar -xf "$orig" -C "$dir" --strip-components=1
  tar -xf "$debian" -C "$dir"
  sed -n '/Do not add patches below/q; s/#.*//; /[^[:space:]]/p' "$dir/debian/patches/series" |
    while read -r patch; do
      patch -d "$dir" -p1 --quiet --forward < "$dir/debian/patches/$patch"
    done
}

echo "build-deps: pinning Debian's static archives" >&2
for archive in libssl.a libcrypto.a libz.a libhttp_parser.a libcmark-gfm.a \
  libcmark-gfm-extensions.a; do
  python3 "$root/scripts/wheel/pin_archive.py" --pins "$pins" "$multiarch/$archive" \
    "$prefix/lib/$archive"
done

cflags="-O2 -fPIC -include $pins"
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_C_FLAGS="$cflags"
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib
  -DZLIB_LIBRARY="$prefix/lib/libz.a" -DZLIB_INCLUDE_DIR=/usr/include)
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache); fi

echo "build-deps: curl (HTTP and HTTPS only)" >&2
unpack curl "$work/src/curl"
cmake -S "$work/src/curl" -B "$work/src/curl/_build" "${common[@]}" "${launcher[@]}" \
  -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF -DHTTP_ONLY=ON \
  -DCURL_USE_OPENSSL=ON -DOPENSSL_ROOT_DIR="$prefix" -DOPENSSL_USE_STATIC_LIBS=ON \
  -DOPENSSL_INCLUDE_DIR=/usr/include -DCURL_ZLIB=ON -DUSE_NGHTTP2=OFF -DUSE_LIBIDN2=OFF \
  -DCURL_USE_LIBPSL=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF -DCURL_USE_GSSAPI=OFF \
  -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF \
  -DUSE_LIBRTMP=OFF -DENABLE_ARES=OFF -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none \
  -DCURL_CA_FALLBACK=OFF >/dev/null
cmake --build "$work/src/curl/_build" >/dev/null
cmake --install "$work/src/curl/_build" >/dev/null

echo "build-deps: libgit2 (local repositories only)" >&2
unpack libgit2 "$work/src/libgit2"
cmake -S "$work/src/libgit2" -B "$work/src/libgit2/_build" "${common[@]}" "${launcher[@]}" \
  -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DBUILD_EXAMPLES=OFF -DUSE_HTTPS=OFF -DUSE_SSH=OFF \
  -DUSE_GSSAPI=OFF -DUSE_NTLMCLIENT=OFF -DREGEX_BACKEND=regcomp -DUSE_HTTP_PARSER=system \
  -DHTTP_PARSER_LIBRARY="$prefix/lib/libhttp_parser.a" -DHTTP_PARSER_INCLUDE_DIR=/usr/include \
  -DUSE_BUNDLED_ZLIB=OFF >/dev/null
cmake --build "$work/src/libgit2/_build" >/dev/null
cmake --install "$work/src/libgit2/_build" >/dev/null

echo "$stamp_inputs" > "$prefix/.stamp"
echo "build-deps: static libraries in $prefix/lib" >&2
