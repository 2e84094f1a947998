#!/usr/bin/env python3
"""Usage: presigned-gets-interleaved.py BUCKET N ENDPOINT,REGION,WHO [ENDPOINT,REGION,WHO ...]

Presigned SigV4 GETs of BUCKET/cpu/o0..o9 (4 KiB each), N to every endpoint, interleaved: each
of 4 threads keeps one kept-alive connection per endpoint and sends its requests to them in
turn, so every endpoint is measured under the same conditions at every moment (a machine whose
speed drifts between sequential runs moves them all alike). WHO is `origin` (credentials from
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) or `edge` (EDGE_ACCESS_KEY_ID / EDGE_SECRET_ACCESS_KEY).
Used by bench-verify-cpu-ab.sh (INTERLEAVE=1); needs the slipstream package. Fails on any
status but 200; prints N."""
import http.client, os, sys, threading, urllib.parse
import slipstream

bucket, n, targets = sys.argv[1], int(sys.argv[2]), [t.split(",") for t in sys.argv[3:]]
env = {"origin": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "edge": ("EDGE_ACCESS_KEY_ID", "EDGE_SECRET_ACCESS_KEY")}
urls = []
for endpoint, region, who in targets:
    key, secret = (os.environ[v] for v in env[who])
    p = slipstream.Presigner(bucket, region=region, credentials=slipstream.Credentials(key, secret),
                             endpoint_url=endpoint, addressing="path")
    urls.append([p.presign_get(f"cpu/o{i % 10}", expires_in=3600) for i in range(n)])
failed = []

def fetch(thread):
    conns = [http.client.HTTPConnection(urllib.parse.urlsplit(t[0]).netloc, timeout=30) for t in targets]
    for i in range(thread, n, 4):
        # The order turns with each request, so no endpoint always follows the same one.
        k = i % len(targets)
        for c, mine in zip(conns[k:] + conns[:k], urls[k:] + urls[:k]):
            s = urllib.parse.urlsplit(mine[i])
            c.request("GET", s.path + "?" + s.query)
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or len(body) != 4096:
                failed.append((r.status, body[:200]))

threads = [threading.Thread(target=fetch, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert not failed, failed[:3]
print(n)
