"""Many objects between two S3 services (--source-endpoint-url): cp and mv --recursive and sync
stream through this machine, the source listed, read and (for mv) deleted on its own service.
Two versitygw servers with their own data. Issue 19."""

import os
import time

from support import cli_env, run_cli, start_private_server


def cli(bin_path, server, endpoint, *args, check=True):
    return run_cli(bin_path, *args, "--endpoint-url", endpoint, "--path-style", env=cli_env(server), check=check)


def listing(bin_path, server, endpoint, uri):
    out = cli(bin_path, server, endpoint, "ls", "--recursive", uri).stdout.decode()
    return sorted(line.split(maxsplit=3)[3] for line in out.splitlines())


def test_many_objects_copy_move_and_sync_between_two_services(slipstream_bin, server, s3, bucket, tmp_path):
    names = ["a.txt", "dir/b c.bin", "dir/deeper/ü.dat", "empty"]
    bodies = {n: (os.urandom(6 << 20) if n.endswith(".bin") else n.encode() * 3) for n in names}
    bodies["empty"] = b""
    for n, body in bodies.items():
        s3.put_object(Bucket=bucket, Key=f"src/{n}", Body=body)
    far = ["--source-endpoint-url", server["endpoint"], "--part-size", "5MiB"]
    with start_private_server(server, tmp_path) as other:
        here = other["endpoint"]
        cli(slipstream_bin, server, here, "mb", "s3://dest")

        # cp --recursive: every object, nested names as they were.
        dry = cli(slipstream_bin, server, here, "cp", "--recursive", f"s3://{bucket}/src/", "s3://dest/cp/",
                  "--dryrun", *far).stdout.decode()
        assert len(dry.splitlines()) == 4 and all(line.startswith("(dryrun) copy:") for line in dry.splitlines())
        cli(slipstream_bin, server, here, "cp", "--recursive", f"s3://{bucket}/src/", "s3://dest/cp/", *far)
        assert listing(slipstream_bin, server, here, "s3://dest/cp/") == [f"cp/{n}" for n in sorted(names)]
        got = cli(slipstream_bin, server, here, "cat", "s3://dest/cp/dir/b c.bin").stdout
        assert got == bodies["dir/b c.bin"]

        # sync: nothing to do the second time; a changed and a deleted source show up.
        cli(slipstream_bin, server, here, "sync", f"s3://{bucket}/src/", "s3://dest/sync/", *far)
        assert listing(slipstream_bin, server, here, "s3://dest/sync/") == [f"sync/{n}" for n in sorted(names)]
        again = cli(slipstream_bin, server, here, "sync", f"s3://{bucket}/src/", "s3://dest/sync/", *far)
        assert "nothing to do, 4 already in sync" in again.stderr.decode()
        time.sleep(1.1)  # S3's times have seconds: the changed source must look newer
        s3.put_object(Bucket=bucket, Key="src/a.txt", Body=b"changed, longer")
        s3.delete_object(Bucket=bucket, Key="src/empty")
        out = cli(slipstream_bin, server, here, "sync", f"s3://{bucket}/src/", "s3://dest/sync/", "--delete",
                  *far).stdout.decode()
        assert sorted(out.splitlines()) == [f"copy: s3://{bucket}/src/a.txt to s3://dest/sync/a.txt",
                                            "delete: s3://dest/sync/empty"]
        assert cli(slipstream_bin, server, here, "cat", "s3://dest/sync/a.txt").stdout == b"changed, longer"

        # mv --recursive: the sources go from their own service once copied.
        cli(slipstream_bin, server, here, "mv", "--recursive", f"s3://{bucket}/src/dir/", "s3://dest/mv/", *far)
        assert listing(slipstream_bin, server, here, "s3://dest/mv/") == ["mv/b c.bin", "mv/deeper/ü.dat"]
    left = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="src/").get("Contents", []))
    assert left == ["src/a.txt"]


def test_source_flags_need_s3_on_both_sides_of_a_sync(slipstream_bin, server, bucket, tmp_path):
    proc = cli(slipstream_bin, server, server["endpoint"], "sync", f"s3://{bucket}/x/", str(tmp_path),
               "--source-endpoint-url", server["endpoint"], check=False)
    assert proc.returncode != 0 and "s3:// on both sides" in proc.stderr.decode()


def test_a_copy_between_services_keeps_the_sources_headers_unless_replaced(slipstream_bin, server, s3, bucket, tmp_path):
    """As a server-side copy (and the AWS CLI's) does: content headers and metadata come from the
    source, learnt from the download's first answer before the upload starts; --content-type and
    the other header flags replace them; --storage-class-like settings stay the command's."""
    import boto3
    from botocore.config import Config

    kept = {"ContentType": "image/png", "CacheControl": "max-age=60", "ContentDisposition": 'attachment; filename="a.png"',
            "ContentLanguage": "fr", "Metadata": {"owner": "ada", "note": "kept"}}
    s3.put_object(Bucket=bucket, Key="h/small.png", Body=b"tiny", **kept)
    s3.put_object(Bucket=bucket, Key="h/big.dat", Body=os.urandom(11 << 20), **kept)  # multipart on the way
    far = ["--source-endpoint-url", server["endpoint"], "--part-size", "5MiB"]
    with start_private_server(server, tmp_path) as other:
        here = other["endpoint"]
        dest = boto3.client("s3", endpoint_url=here, region_name=server["region"], aws_access_key_id=server["access_key"],
                            aws_secret_access_key=server["secret_key"], config=Config(s3={"addressing_style": "path"}))
        cli(slipstream_bin, server, here, "mb", "s3://dest")
        cli(slipstream_bin, server, here, "cp", f"s3://{bucket}/h/small.png", "s3://dest/one/small.png", *far)
        cli(slipstream_bin, server, here, "cp", "--recursive", f"s3://{bucket}/h/", "s3://dest/many/", *far)
        for key in ["one/small.png", "many/small.png", "many/big.dat"]:
            head = dest.head_object(Bucket="dest", Key=key)
            assert {k: head.get(k) for k in kept} == kept, key
        # Replaced when asked: the given headers, not the source's (nor its metadata).
        cli(slipstream_bin, server, here, "cp", f"s3://{bucket}/h/big.dat", "s3://dest/replaced.dat",
            "--content-type", "text/plain", *far)
        head = dest.head_object(Bucket="dest", Key="replaced.dat")
        assert head["ContentType"] == "text/plain" and head["Metadata"] == {} and "CacheControl" not in head
