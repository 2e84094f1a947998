#!/usr/bin/env python3
"""Usage: presigned-gets.py ENDPOINT BUCKET REGION v4|v4a N (credentials from AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY; needs the slipstream package). Used by the edge benchmarks
(bench-edge-auth.sh, bench-verify-cpu-ab.sh, bench-verify-instructions.sh).

Presigns N GET URLs for BUCKET/cpu/o0..o9 and fetches them over 4 kept-alive connections (or
GET_CONNECTIONS, one thread each); prints the requests made. Fails on any status but 200."""
import http.client, os, sys, threading, urllib.parse
import slipstream

endpoint, bucket, region, signature, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
creds = slipstream.Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
p = slipstream.Presigner(bucket, region=region, credentials=creds, endpoint_url=endpoint, addressing="path",
                         signature=signature)
urls = [p.presign_get(f"cpu/o{i % 10}", expires_in=3600) for i in range(n)]
host = urllib.parse.urlsplit(endpoint).netloc
failed = []

def fetch(part):
    c = http.client.HTTPConnection(host, timeout=30)
    for u in part:
        s = urllib.parse.urlsplit(u)
        c.request("GET", s.path + "?" + s.query)
        r = c.getresponse()
        body = r.read()
        if r.status != 200 or len(body) != 4096:
            failed.append((r.status, body[:200]))

k = int(os.environ.get("GET_CONNECTIONS", "4"))
threads = [threading.Thread(target=fetch, args=(urls[i::k],)) for i in range(k)]
for t in threads: t.start()
for t in threads: t.join()
assert not failed, failed[:3]
print(n)
