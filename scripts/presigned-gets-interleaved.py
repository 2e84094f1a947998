#!/usr/bin/env python3
"""Usage: [KIND=header] presigned-gets-interleaved.py BUCKET N ENDPOINT,REGION,WHO [ENDPOINT,REGION,WHO ...]

Presigned SigV4 GETs of BUCKET/cpu/o0..o9 (4 KiB each), N to every endpoint, interleaved: each
of 4 threads keeps one kept-alive connection per endpoint and sends its requests to them in
turn, so every endpoint is measured under the same conditions at every moment (a machine whose
speed drifts between sequential runs moves them all alike). WHO is `origin` (credentials from
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) or `edge` (EDGE_ACCESS_KEY_ID / EDGE_SECRET_ACCESS_KEY).
With KIND=header the GETs are header-signed instead (botocore's S3SigV4Auth, all signed before
the first is sent, so the client's signing is not in the measured window).
Used by bench-verify-cpu-ab.sh (INTERLEAVE=1); needs the slipstream package. Fails on any
status but 200; prints N."""
import http.client, os, sys, threading, urllib.parse
import slipstream

bucket, n, targets = sys.argv[1], int(sys.argv[2]), [t.split(",") for t in sys.argv[3:]]
env = {"origin": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "edge": ("EDGE_ACCESS_KEY_ID", "EDGE_SECRET_ACCESS_KEY")}
header = os.environ.get("KIND") == "header"
requests = []  # per endpoint: (target, headers) for each of the n GETs
for endpoint, region, who in targets:
    key, secret = (os.environ[v] for v in env[who])
    if header:
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials as BotoCredentials
        signer = S3SigV4Auth(BotoCredentials(key, secret), "s3", region)
        mine = []
        for i in range(n):
            r = AWSRequest(method="GET", url=f"{endpoint}/{bucket}/cpu/o{i % 10}")
            signer.add_auth(r)
            mine.append((f"/{bucket}/cpu/o{i % 10}", dict(r.headers.items())))
        requests.append(mine)
    else:
        p = slipstream.Presigner(bucket, region=region, credentials=slipstream.Credentials(key, secret),
                                 endpoint_url=endpoint, addressing="path")
        mine = []
        for i in range(n):
            s = urllib.parse.urlsplit(p.presign_get(f"cpu/o{i % 10}", expires_in=3600))
            mine.append((s.path + "?" + s.query, {}))
        requests.append(mine)
failed = []

def fetch(thread):
    conns = [http.client.HTTPConnection(urllib.parse.urlsplit(t[0]).netloc, timeout=30) for t in targets]
    for i in range(thread, n, 4):
        # The order turns with each request, so no endpoint always follows the same one.
        k = i % len(targets)
        for c, mine in zip(conns[k:] + conns[:k], requests[k:] + requests[:k]):
            target, headers = mine[i]
            c.request("GET", target, headers=headers)
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or len(body) != 4096:
                failed.append((r.status, body[:200]))

threads = [threading.Thread(target=fetch, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert not failed, failed[:3]
print(n)
