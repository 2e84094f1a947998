#!/usr/bin/env bash
# Runs aws-crt-java (aws-c-auth, the signer inside the AWS SDKs) for crates/sign/tests/crt_java.rs:
#   crt-java.sh chunks OUT_DIR   signs aws-chunked uploads into OUT/{v4,v4a}-{plain,trailer}/
#   crt-java.sh verify           checks SigV4A signatures read from stdin (tests/interop/CrtVerify.java)
# The jar comes from Maven Central once into .tools; its checksum is pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.38.13
JAR=.tools/aws-crt-$VERSION-linux-x86_64.jar
SHA256=6bfae44aef29e181b44dd90c3e69a6362c538adc9ec936055356926aa5446e84
if ! echo "$SHA256  $JAR" | sha256sum -c --quiet - >/dev/null 2>&1; then
  mkdir -p .tools
  curl -fsS -o "$JAR.part" \
    "https://repo1.maven.org/maven2/software/amazon/awssdk/crt/aws-crt/$VERSION/aws-crt-$VERSION-linux-x86_64.jar"
  echo "$SHA256  $JAR.part" | sha256sum -c --quiet -
  mv "$JAR.part" "$JAR"
fi
CLASSES=.tools/crt-java-classes
for src in tests/interop/*.java; do
  class="$CLASSES/$(basename "$src" .java).class"
  if [ ! -f "$class" ] || [ "$src" -nt "$class" ]; then
    mkdir -p "$CLASSES"
    javac -d "$CLASSES" -cp "$JAR" "$src"
  fi
done
case "${1:-}" in
  chunks)
    OUT=${2:?usage: crt-java.sh chunks OUT_DIR}
    for alg in v4 v4a; do
      for form in plain trailer; do
        java -cp "$CLASSES:$JAR" CrtChunks "$alg" "$form" "$OUT/$alg-$form"
      done
    done
    ;;
  verify) exec java -cp "$CLASSES:$JAR" CrtVerify ;;
  *) echo "usage: crt-java.sh chunks OUT_DIR | verify" >&2; exit 2 ;;
esac
