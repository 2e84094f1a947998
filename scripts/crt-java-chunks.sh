#!/usr/bin/env bash
# Signs aws-chunked uploads with aws-crt-java (aws-c-auth, the signer inside the AWS SDKs) for
# crates/sign/tests/crt_java.rs: writes OUT/{v4,v4a}-{plain,trailer}/{headers.txt,body.bin}.
# The jar comes from Maven Central once into .tools; its checksum is pinned.
set -euo pipefail
OUT=${1:?usage: crt-java-chunks.sh OUT_DIR}
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
if [ ! -f "$CLASSES/CrtChunks.class" ] || [ tests/interop/CrtChunks.java -nt "$CLASSES/CrtChunks.class" ]; then
  mkdir -p "$CLASSES"
  javac -d "$CLASSES" -cp "$JAR" tests/interop/CrtChunks.java
fi
for alg in v4 v4a; do
  for form in plain trailer; do
    java -cp "$CLASSES:$JAR" CrtChunks "$alg" "$form" "$OUT/$alg-$form"
  done
done
