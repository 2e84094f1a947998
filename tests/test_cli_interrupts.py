"""`slipstream cp` stopped by a signal, or facing a server that stops answering: nothing left
half-written (no temporary file, no open multipart upload), a documented exit code, and a
bounded wait."""

import os
import signal
import subprocess
import time
import uuid

import pytest

from relay import Relay
from support import cli_env, run_cli, wait_for

# What a shell reports for a process the signal ended: 128 + its number.
SIGNALS = [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP")]


def cli(bin_path, server, *args, check=True):
    return run_cli(bin_path, *args, "--endpoint-url", server["endpoint"], "--path-style", env=cli_env(server),
                   check=check)


def new_bucket(bin_path, server) -> str:
    bucket = f"cli-{uuid.uuid4().hex[:16]}"
    cli(bin_path, server, "mb", f"s3://{bucket}")
    return bucket


def put(bin_path, server, bucket, key, size, tmp_path) -> bytes:
    data = os.urandom(size)
    src = tmp_path / f"src-{key}"
    src.write_bytes(data)
    cli(bin_path, server, "cp", str(src), f"s3://{bucket}/{key}")
    src.unlink()
    return data


@pytest.mark.parametrize("sig,code,name", SIGNALS, ids=[s[2] for s in SIGNALS])
def test_a_signal_during_an_upload_aborts_it(slipstream_bin, server, s3, sig, code, name):
    bucket = new_bucket(slipstream_bin, server)
    proc = subprocess.Popen(
        [slipstream_bin, "cp", "-", f"s3://{bucket}/half", "--part-size", "5MiB",
         "--endpoint-url", server["endpoint"], "--path-style"],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(server))
    # Two parts' worth: the multipart upload is open and parts are on their way; stdin stays open.
    proc.stdin.write(os.urandom(11 * 1024 * 1024))
    proc.stdin.flush()
    wait_for(lambda: s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), 10, "the upload to start")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code and f"interrupted ({name})".encode() in err, (proc.returncode, err)
    assert b"no upload left open" in err, err
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), "the multipart upload was left open"
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


@pytest.mark.parametrize("sig,code,name", SIGNALS, ids=[s[2] for s in SIGNALS])
def test_a_signal_during_a_download_removes_the_temporary_file(slipstream_bin, server, tmp_path, sig, code, name):
    bucket = new_bucket(slipstream_bin, server)
    put(slipstream_bin, server, bucket, "big", 24 << 20, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    # At 4 MiB/s the download takes 6 s: the signal lands while the temporary file is there.
    with Relay(server["endpoint"], rate=4 << 20) as relay:
        proc = subprocess.Popen(
            [slipstream_bin, "cp", f"s3://{bucket}/big", str(out / "big"), "--endpoint-url", relay.endpoint,
             "--path-style"], stderr=subprocess.PIPE, env=cli_env(server))
        wait_for(lambda: any(out.iterdir()) and relay.relayed_down > (1 << 20), 30, "the download to start")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == code and f"interrupted ({name})".encode() in err, (proc.returncode, err)
    assert list(out.iterdir()) == [], "a file was left behind"


def test_a_frozen_server_fails_downloads_in_bounded_time(slipstream_bin, private_server, tmp_path):
    """The server process is stopped (SIGSTOP) mid-download: its connections stay open and
    nothing arrives. The download fails once nothing has moved for --stall-timeout, to a file
    and to standard output, and leaves no file."""
    server = private_server
    bucket = new_bucket(slipstream_bin, server)
    put(slipstream_bin, server, bucket, "big", 40 << 20, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    for dest in [str(out / "big"), "-"]:
        with Relay(server["endpoint"], rate=8 << 20) as relay:
            args = [slipstream_bin, "cp", f"s3://{bucket}/big", dest, "--stall-timeout", "3s",
                    "--endpoint-url", relay.endpoint, "--path-style"]
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=cli_env(server))
            wait_for(lambda: relay.relayed_down > (2 << 20), 30, "the download to start")
            server["process"].send_signal(signal.SIGSTOP)
            stopped = time.monotonic()
            try:
                _, err = proc.communicate(timeout=60)
            finally:
                server["process"].send_signal(signal.SIGCONT)
        waited = time.monotonic() - stopped
        assert proc.returncode == 1 and b"the server stopped sending" in err, (proc.returncode, err)
        # The bound is 3 s of silence (from the last byte that moved, which can be a few ms before
        # `stopped` is read); what was already in flight (relay and socket buffers) may add a
        # little, retries may not add their own timeouts (60 s a request).
        assert 2.5 <= waited < 20, waited
        assert list(out.iterdir()) == [], "a file was left behind"


def test_a_frozen_path_fails_an_upload_in_bounded_time(slipstream_bin, server, s3, tmp_path):
    """The path to the server goes dark mid-upload (the relay freezes: connections open,
    nothing moves). The upload fails after --stall-timeout and says so; once the path is back
    no object appeared."""
    bucket = new_bucket(slipstream_bin, server)
    src = tmp_path / "src"
    src.write_bytes(os.urandom(30 << 20))
    with Relay(server["endpoint"]) as relay:
        proc = subprocess.Popen(
            [slipstream_bin, "cp", str(src), f"s3://{bucket}/up", "--part-size", "5MiB", "--concurrency", "2",
             "--stall-timeout", "3s", "--endpoint-url", relay.endpoint, "--path-style"],
            stderr=subprocess.PIPE, env=cli_env(server))
        wait_for(lambda: s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), 10, "the upload to start")
        relay.freeze()
        frozen = time.monotonic()
        _, err = proc.communicate(timeout=60)
        waited = time.monotonic() - frozen
    assert proc.returncode == 1 and b"the server stopped taking data" in err, (proc.returncode, err)
    # 3 s of silence, then at most 10 s for the abort (which cannot reach a frozen server). The
    # silence starts at the last byte that moved, which can be a few ms before `frozen` is read.
    assert 2.5 <= waited < 25, waited
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


def test_stall_timeout_flag_is_checked(slipstream_bin, server, tmp_path):
    r = cli(slipstream_bin, server, "cp", "s3://b/k", str(tmp_path / "k"), "--stall-timeout", "soon", check=False)
    assert r.returncode == 2 and b"--stall-timeout" in r.stderr, r.stderr
