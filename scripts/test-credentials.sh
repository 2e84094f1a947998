# Sourced by the scripts that start a local S3 server: credentials made for this run, the
# region, and a free port of 127.0.0.1. Settings that could point a test elsewhere are unset.
rand() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | cut -c1-"$1"; }
export AWS_ACCESS_KEY_ID="SLIP$(rand 16 | tr a-f A-F)"
export AWS_SECRET_ACCESS_KEY="$(rand 40)"
export SLIPSTREAM_TEST_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 || true
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
