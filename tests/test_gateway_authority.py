"""`slipstream authority` and a verifying edge that gets its keys from it (`--authority`), in
front of the local versitygw. The authority holds the secrets (sealed under a master key, in
SQLite); the edge is handed per-day keys, public keys, token hashes and policies, caches them,
and follows the authority's change stream. The origin knows none of these keys: every success
proves verify + re-sign. With PostgreSQL (the cluster scripts/with-postgres.sh starts), two
authority replicas share one database and NOTIFY carries a change to both replicas' edges."""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from gateway_support import free_port, log_lines, make_cert, running
from support import run_cli, wait_for

EDGE_REGION = "eu-edge-1"
TOKEN = "edge-token-0123456789abcdef"
ALLOW_ALL = {"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}


class Authority:
    """`slipstream authority serve` over TLS on a free port, with its store and master key in
    `directory`; `create(policy)` makes a key through the CLI."""

    def __init__(self, binary: str, directory, pki: dict, database: str | None = None) -> None:
        self.binary = binary
        self.directory = directory
        self.master = directory / "master.key"
        self.db = directory / "authority.db"
        self.database = database or str(self.db)
        self.tokens = directory / "edge-tokens"
        self.tokens.write_text(f"# the test's edge\n{TOKEN}\n")
        self.pki = pki
        self.port = free_port()
        self.url = f"https://localhost:{self.port}"
        self.proc = None
        if not self.master.exists():
            run_cli(binary, "authority", "master-key", str(self.master))

    def store(self) -> list[str]:
        return ["--database", self.database, "--master-key-file", str(self.master)]

    def start(self, *extra: str) -> None:
        first = self.proc is None
        for attempt in range(3):
            err = open(self.directory / f"authority-{self.port}.err", "wb")
            self.proc = subprocess.Popen([self.binary, "authority", "serve", *self.store(), *extra, "--listen", f"127.0.0.1:{self.port}",
                                          "--tls-cert", str(self.pki["auth_cert"]), "--tls-key", str(self.pki["auth_key"]),
                                          "--edge-token-file", str(self.tokens), *self.database_tls()],
                                         stdout=subprocess.DEVNULL, stderr=err)
            self.stderr_path = err.name
            wait_for(lambda: "listening on" in open(self.stderr_path).read() or self.proc.poll() is not None, 20, "the authority")
            taken = self.proc.poll() is not None and "Address already in use" in open(self.stderr_path).read()
            # A free port can be taken before the bind: a new one, while no edge knows the URL.
            if not (taken and first and attempt < 2):
                break
            self.port = free_port()
            self.url = f"https://localhost:{self.port}"
        assert self.proc.poll() is None, open(self.stderr_path).read()

    def stop(self) -> int:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
        return self.proc.returncode if self.proc else 0

    def key(self, *args: str) -> subprocess.CompletedProcess:
        return run_cli(self.binary, "authority", "key", *args, *self.store(), *self.database_tls(), check=False)

    def database_tls(self) -> list[str]:
        ca = os.environ.get("SLIPSTREAM_TEST_POSTGRES_CA")
        return ["--database-ca-bundle", ca] if ca and self.database.startswith("postgres") else []

    def create(self, policy: dict, *extra: str) -> tuple:
        p = self.key("create", "--policy", json.dumps(policy), *extra)
        assert p.returncode == 0, p.stderr.decode()
        k = json.loads(p.stdout)["AccessKey"]
        return (k["AccessKeyId"], k["SecretAccessKey"]) + ((k["SessionToken"],) if "SessionToken" in k else ())

    def get(self, path: str, token: str | None = TOKEN) -> tuple[int, str]:
        context = ssl.create_default_context(cafile=self.pki["ca"])
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {token}"} if token else {})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metric(self, name: str) -> float:
        text = self.get("/metrics", token=None)[1]
        return float(next(line.split()[1] for line in text.splitlines() if line.startswith(name + " ")))


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("authority-pki")
    auth_cert, auth_key = make_cert(d, "authority", ["localhost"])
    return {"ca": str(d / "ca.pem"), "auth_cert": auth_cert, "auth_key": auth_key}


@pytest.fixture()
def authority(slipstream_bin, tmp_path, pki):
    a = Authority(slipstream_bin, tmp_path, pki)
    a.start()
    yield a
    assert a.stop() == 0, open(a.stderr_path).read()


def edge_args(a: Authority, *extra: str) -> list[str]:
    return ["--mode", "verify", "--region", EDGE_REGION, "--authority", a.url, "--authority-token-file", str(write_token(a)),
            "--authority-ca-bundle", a.pki["ca"], *extra]


def write_token(a: Authority):
    path = a.directory / "edge-token"
    path.write_text(TOKEN + "\n")
    return path


def client(endpoint: str, key: tuple, region: str = EDGE_REGION):
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=endpoint, region_name=region,
                        aws_access_key_id=key[0], aws_secret_access_key=key[1],
                        aws_session_token=key[2] if len(key) > 2 else None,
                        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))


def error_code(call) -> str:
    import botocore.exceptions

    with pytest.raises(botocore.exceptions.ClientError) as refused:
        call()
    return refused.value.response["Error"]["Code"]


def test_an_edge_verifies_with_keys_from_the_authority(slipstream_bin, server, bucket, s3, authority, tmp_path):
    admin = authority.create(ALLOW_ALL)
    reader = authority.create({"Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"],
                                              "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]})
    session = authority.create(ALLOW_ALL, "--session-duration", "1h")
    assert len(session) == 3 and admin[0].startswith("SLIP") and len(admin[1]) == 40
    with running(slipstream_bin, server["endpoint"], tmp_path, extra=edge_args(authority)) as edge:
        a = client(edge.url, admin)
        body = os.urandom(200_000)
        a.put_object(Bucket=bucket, Key="from-authority", Body=body)
        assert a.get_object(Bucket=bucket, Key="from-authority")["Body"].read() == body
        assert s3.get_object(Bucket=bucket, Key="from-authority")["Body"].read() == body
        r = client(edge.url, reader)
        assert [o["Key"] for o in r.list_objects_v2(Bucket=bucket)["Contents"]] == ["from-authority"]
        assert error_code(lambda: r.put_object(Bucket=bucket, Key="no", Body=b"x")) == "AccessDenied"
        assert client(edge.url, session).head_object(Bucket=bucket, Key="from-authority")["ContentLength"] == len(body)
        assert error_code(lambda: client(edge.url, session[:2] + ("forged-token",)).head_object(Bucket=bucket, Key="from-authority")) in ("InvalidToken", "400", "403")
        assert error_code(lambda: client(edge.url, (admin[0], "wrong" + admin[1])).get_object(Bucket=bucket, Key="from-authority")) == "SignatureDoesNotMatch"
        assert error_code(lambda: client(edge.url, ("SLIPNOSUCHKEY0000000", admin[1])).get_object(Bucket=bucket, Key="from-authority")) == "InvalidAccessKeyId"
        # Presigned URLs (checked with the day's key the authority handed out).
        url = a.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "from-authority"}, ExpiresIn=300)
        assert urllib.request.urlopen(url, timeout=10).read() == body
        refused = [l for l in log_lines(edge) if l["status"] >= 400]
        assert len(refused) == 4 and all(l["upstream_reused"] is None for l in refused)
        m = edge.metrics()
        assert m["gateway_key_cache_hits_total"] > 0 and m["gateway_key_cache_misses_total"] >= 3
        assert m["gateway_key_cache_negative_hits_total"] >= 0 and m["gateway_key_fetch_failures_total"] == 0
        assert admin[1] not in edge.stderr() and admin[1] not in edge.log.read_text()


def test_authority_answers_hold_no_secret(authority):
    key = authority.create(ALLOW_ALL)
    session = authority.create(ALLOW_ALL, "--session-duration", "2h")
    status, text = authority.get(f"/v1/keys/{key[0]}?region={EDGE_REGION}")
    assert status == 200, text
    answer = json.loads(text)
    assert answer["access_key_id"] == key[0] and answer["region"] == EDGE_REGION
    assert len(answer["signing_keys"]) == 9 and answer["sigv4a_public_key"].startswith("04")
    assert key[1] not in text
    status, text = authority.get(f"/v1/keys/{session[0]}?region={EDGE_REGION}")
    assert status == 200 and session[1] not in text and session[2] not in text
    assert json.loads(text)["session"]["token_sha256"] == __import__("hashlib").sha256(session[2].encode()).hexdigest()
    # The database holds no secret in the clear either.
    assert key[1].encode() not in authority.db.read_bytes()
    # Without the token, for unknown or disabled keys, or a bad region: refused.
    assert authority.get(f"/v1/keys/{key[0]}?region={EDGE_REGION}", token=None)[0] == 401
    assert authority.get(f"/v1/keys/{key[0]}?region={EDGE_REGION}", token="not-the-token-0000")[0] == 401
    assert authority.get(f"/v1/keys/SLIPNOSUCHKEY0000000?region={EDGE_REGION}")[0] == 404
    assert authority.key("disable", key[0]).returncode == 0
    assert authority.get(f"/v1/keys/{key[0]}?region={EDGE_REGION}")[0] == 404
    assert authority.get(f"/v1/keys/{session[0]}?region=Bad/Region")[0] == 400
    listed = [json.loads(line) for line in authority.key("list", "--json").stdout.decode().splitlines()]
    assert {k["AccessKeyId"]: k["Status"] for k in listed} == {key[0]: "Inactive", session[0]: "Active"}
    assert key[1] not in authority.key("list", "--json").stdout.decode()


def test_changes_reach_the_edge_within_a_second(slipstream_bin, server, bucket, s3, authority, tmp_path):
    key = authority.create(ALLOW_ALL)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    # Long TTLs: only the change stream can make the edge notice.
    with running(slipstream_bin, server["endpoint"], tmp_path,
                 extra=edge_args(authority, "--key-cache-soft-ttl", "10m", "--key-cache-hard-ttl", "20m")) as edge:
        c = client(edge.url, key)

        def takes_effect(change: tuple, expected: str) -> float:
            assert authority.key(*change).returncode == 0
            changed = time.time()
            while True:
                try:
                    c.get_object(Bucket=bucket, Key="k")["Body"].read()
                    got = "ok"
                except Exception as e:  # noqa: BLE001 - the code is what is compared
                    got = getattr(e, "response", {}).get("Error", {}).get("Code", repr(e))
                if got == expected:
                    return time.time() - changed
                assert time.time() - changed < 5, f"{change} not in effect: {got}"
                time.sleep(0.02)

        assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
        deny = {"Statement": [{"Effect": "Deny", "Action": "s3:GetObject", "Resource": "*"},
                              {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        delays = [
            takes_effect(("disable", key[0]), "InvalidAccessKeyId"),
            takes_effect(("enable", key[0]), "ok"),
            takes_effect(("set-policy", key[0], "--policy", json.dumps(deny)), "AccessDenied"),
            takes_effect(("delete", key[0]), "InvalidAccessKeyId"),
        ]
        assert max(delays) < 1.0, delays


def test_an_unreachable_authority_is_survived_within_the_hard_ttl_then_fails_closed(slipstream_bin, server, bucket, s3, authority, tmp_path):
    key = authority.create(ALLOW_ALL)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    with running(slipstream_bin, server["endpoint"], tmp_path,
                 extra=edge_args(authority, "--key-cache-soft-ttl", "1s", "--key-cache-hard-ttl", "4s")) as edge:
        c = client(edge.url, key)
        assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
        fetched = time.time()
        authority.stop()
        time.sleep(1.5)
        # Stale: served while the background refresh fails.
        assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
        assert error_code(lambda: client(edge.url, ("SLIPNEVERSEEN0000000", "x" * 40)).get_object(Bucket=bucket, Key="k")) == "ServiceUnavailable"
        time.sleep(max(0.0, fetched + 4.5 - time.time()))
        assert error_code(lambda: c.get_object(Bucket=bucket, Key="k")) == "ServiceUnavailable"
        assert edge.metrics()["gateway_key_fetch_failures_total"] >= 2
        assert "authority" in edge.stderr()
        authority.start()
        wait_for(lambda: _ok(lambda: c.get_object(Bucket=bucket, Key="k")), 10, "the edge to use the authority again")
        refused = [l for l in log_lines(edge) if l["status"] == 503]
        assert refused and all(l["upstream_reused"] is None for l in refused)


def _ok(call) -> bool:
    try:
        call()
        return True
    except Exception:  # noqa: BLE001
        return False


def test_a_cold_burst_for_one_key_makes_one_authority_call(slipstream_bin, server, bucket, s3, authority, tmp_path):
    key = authority.create(ALLOW_ALL)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    with running(slipstream_bin, server["endpoint"], tmp_path, extra=edge_args(authority)) as edge:
        url = client(edge.url, key).generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=300)
        before = authority.metric("authority_key_answers_total")
        with concurrent.futures.ThreadPoolExecutor(64) as pool:
            bodies = list(pool.map(lambda _: urllib.request.urlopen(url, timeout=30).read(), range(256)))
        assert bodies == [b"v"] * 256
        assert authority.metric("authority_key_answers_total") - before == 1
        m = edge.metrics()
        assert m["gateway_key_cache_misses_total"] + m["gateway_key_cache_hits_total"] == 256


def test_zero_ttls_ask_the_authority_for_every_request(slipstream_bin, server, bucket, s3, authority, tmp_path):
    key = authority.create(ALLOW_ALL)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    zero = ("--key-cache-soft-ttl", "0", "--key-cache-hard-ttl", "0s", "--key-cache-disconnected", "0s")
    with running(slipstream_bin, server["endpoint"], tmp_path, extra=edge_args(authority, *zero)) as edge:
        c = client(edge.url, key)
        before = authority.metric("authority_key_answers_total")
        for _ in range(5):
            assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
        assert authority.metric("authority_key_answers_total") - before == 5
        assert edge.metrics()["gateway_key_cache_hits_total"] == 0


def test_authority_and_edge_mistakes_exit_with_the_reason(slipstream_bin, server, authority, tmp_path):
    p = authority.key("create", "--policy", json.dumps({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Condition": {}}]}))
    assert p.returncode == 1 and b"Condition" in p.stderr
    assert authority.key("disable", "SLIPNOSUCHKEY0000000").returncode == 1
    assert authority.key("create", "--policy", "{not json").returncode == 2
    p = run_cli(slipstream_bin, "authority", "key", "list", "--database", str(tmp_path / "x.db"), "--master-key-file", str(tmp_path / "none"), check=False)
    assert p.returncode == 2 and b"master-key" in p.stderr
    assert run_cli(slipstream_bin, "authority", "master-key", str(authority.master), check=False).returncode == 2, "never overwritten"
    short = tmp_path / "short-tokens"
    short.write_text("abc\n")
    p = run_cli(slipstream_bin, "authority", "serve", *authority.store(), "--edge-token-file", str(short), "--listen", "127.0.0.1:0", check=False)
    assert p.returncode == 2 and b"too short" in p.stderr

    def gateway_fails(*args: str) -> str:
        p = subprocess.run([slipstream_bin, "gateway", "--listen", "127.0.0.1:0", "--origin", server["endpoint"], *args],
                           capture_output=True, timeout=20)
        assert p.returncode == 2, p
        return p.stderr.decode()

    assert "authority-token-file" in gateway_fails("--mode", "verify", "--authority", authority.url)
    keys = tmp_path / "keys.toml"
    keys.write_text("")
    assert "not both" in gateway_fails("--mode", "verify", "--authority", authority.url, "--keys", str(keys))
    assert "go with --authority" in gateway_fails("--mode", "verify", "--keys", str(keys), "--key-cache-hard-ttl", "1m")
    assert "longer than" in gateway_fails(*edge_args(authority, "--key-cache-soft-ttl", "10m", "--key-cache-hard-ttl", "1m"))


def postgres_database() -> str:
    """A new database in the run's PostgreSQL cluster, its URL requiring TLS (checked against the
    cluster's CA); skipped without a cluster, except under CI."""
    url = os.environ.get("SLIPSTREAM_TEST_POSTGRES")
    if not url:
        assert os.environ.get("CI") != "true", "CI needs SLIPSTREAM_TEST_POSTGRES (scripts/with-postgres.sh)"
        pytest.skip("no PostgreSQL cluster (run under scripts/with-postgres.sh)")
    name = f"t_{os.urandom(6).hex()}"
    psql = subprocess.run(["scripts/install-postgres.sh"], capture_output=True, text=True, check=True).stdout.strip() + "/psql"
    subprocess.run([psql if os.path.exists(psql) else "psql", url, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return f"{url.rsplit('/', 1)[0]}/{name}?sslmode=require"


def test_replicas_on_postgres_tell_every_edge_within_a_second(slipstream_bin, server, bucket, s3, tmp_path, pki):
    database = postgres_database()
    password = database.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    replicas = [Authority(slipstream_bin, tmp_path, pki, database) for _ in range(2)]
    for r in replicas:
        r.start()
    try:
        key = replicas[0].create(ALLOW_ALL)
        s3.put_object(Bucket=bucket, Key="k", Body=b"v")
        # The key, created through one replica's database, is answered by both.
        for r in replicas:
            status, text = r.get(f"/v1/keys/{key[0]}?region={EDGE_REGION}")
            assert status == 200 and key[1] not in text, text
        with running(slipstream_bin, server["endpoint"], tmp_path,
                     extra=edge_args(replicas[0], "--key-cache-soft-ttl", "10m", "--key-cache-hard-ttl", "20m")) as a, \
             running(slipstream_bin, server["endpoint"], tmp_path,
                     extra=edge_args(replicas[1], "--key-cache-soft-ttl", "10m", "--key-cache-hard-ttl", "20m")) as b:
            clients = [client(a.url, key), client(b.url, key)]
            assert all(c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v" for c in clients)
            # A management command (its own process, its own connection) disables the key: the
            # NOTIFY reaches both replicas, and each tells its edge.
            assert replicas[1].key("disable", key[0]).returncode == 0
            changed = time.time()
            for c in clients:
                wait_for(lambda c=c: error_code_or_ok(lambda: c.get_object(Bucket=bucket, Key="k")) == "InvalidAccessKeyId",
                         1.0 - (time.time() - changed), "the disabled key refused at both edges within a second")
            assert replicas[0].key("enable", key[0]).returncode == 0
            for c in clients:
                wait_for(lambda c=c: error_code_or_ok(lambda: c.get_object(Bucket=bucket, Key="k")) == "ok", 2, "enabled again")
        listed = replicas[1].key("list", "--json").stdout.decode()
        assert key[0] in listed and key[1] not in listed
        # The server's certificate is checked whatever sslmode says: without its CA, refused.
        p = run_cli(slipstream_bin, "authority", "key", "list", "--database", database, "--master-key-file",
                    str(replicas[0].master), check=False)
        assert p.returncode == 2 and b"--database-ca-bundle" in p.stderr and password.encode() not in p.stderr, p.stderr
    finally:
        codes = [r.stop() for r in replicas]
    logs = "".join(open(r.stderr_path).read() for r in replicas)
    assert codes == [0, 0], logs
    assert password not in logs and "postgres://127.0.0.1:" in logs, logs


def error_code_or_ok(call) -> str:
    try:
        call()
        return "ok"
    except Exception as e:  # noqa: BLE001 - the code is what is compared
        return getattr(e, "response", {}).get("Error", {}).get("Code", repr(e))


def test_a_postgres_url_that_cannot_be_used_exits_2_without_the_password(slipstream_bin, tmp_path):
    master = tmp_path / "master.key"
    run_cli(slipstream_bin, "authority", "master-key", str(master))
    closed = f"postgres://authority:s3cretpassw0rd@127.0.0.1:{free_port()}/authority"
    p = run_cli(slipstream_bin, "authority", "key", "list", "--database", closed, "--master-key-file", str(master), check=False)
    assert p.returncode == 2 and b"cannot connect to the database postgres://127.0.0.1:" in p.stderr, p.stderr
    assert b"s3cretpassw0rd" not in p.stderr
    # The URL from the environment, kept out of the process list, works the same way.
    env = dict(os.environ, SLIPSTREAM_AUTHORITY_DATABASE=closed)
    p = run_cli(slipstream_bin, "authority", "key", "list", "--master-key-file", str(master), env=env, check=False)
    assert p.returncode == 2 and b"cannot connect" in p.stderr and b"s3cretpassw0rd" not in p.stderr
