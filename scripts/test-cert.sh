#!/usr/bin/env bash
# A throwaway CA and a certificate it signs, for the local TLS servers of tests, the demo and
# the benchmarks:
#   scripts/test-cert.sh DIR NAME SAN [rsa]
# DIR/ca.pem and DIR/ca.key are made on first use and kept; DIR/NAME.pem and DIR/NAME.key are
# signed by them for SAN, an openssl subjectAltName list such as DNS:localhost,IP:127.0.0.1
# (give a DNS name too: nginx's upstream check does not match IP addresses). P-256 keys, or a
# 2048-bit RSA key with `rsa`. Valid for two days.
set -euo pipefail
dir=$1 name=$2 san=$3 kind=${4:-ec}
mkdir -p "$dir"
cd "$dir"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
if [ ! -f ca.pem ]; then
  openssl req -x509 "${ec[@]}" -days 2 -subj /CN=slipstream-test-ca -keyout ca.key -out ca.pem \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
fi
key=("${ec[@]}")
[ "$kind" = rsa ] && key=(-newkey rsa:2048 -nodes)
openssl req "${key[@]}" -subj "/CN=$name" -keyout "$name.key" -out "$name.csr" 2>/dev/null
printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$san" > "$name.ext"
openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile "$name.ext" -out "$name.pem" 2>/dev/null
rm -f "$name.csr" "$name.ext"
