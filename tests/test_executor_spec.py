"""The executor as a spec: ``--executor ray,KEY=VALUE...`` read into its declared settings,
the older ``run`` flags as aliases, and ``--placement MODEL@...`` per model."""

import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.executors import Placement, RaySettings, check_placed, parse_executor
from faithprobe.subjects import parse_model


def test_the_spec_fills_the_declared_settings():
    spec = parse_executor("ray,address=head:6379,workers=4,gpus_per_worker=1,max_replacements=0")
    assert spec.name == "ray"
    assert spec.settings == RaySettings(
        address="head:6379", workers=4, gpus_per_worker=1.0, max_replacements=0
    )
    assert parse_executor("ray").settings == RaySettings()
    assert parse_executor("inprocess").record() == {"name": "inprocess"}
    assert parse_executor("ray,address=").settings.address is None  # empty: none


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("dask", "--executor 'dask': choose from inprocess, ray"),
        ("ray,workers=0", "option workers=0: expected a number from 1 to 4096"),
        ("ray,workers=two", "option workers='two': expected int"),
        ("ray,nodes=3", "executor 'ray' has no option 'nodes'"),
        ("ray,workers=2,workers=3", "workers given twice"),
        ("ray,4", "'4' is not KEY=VALUE"),
        ("inprocess,workers=2", "executor 'inprocess' has no option 'workers'"),
        ("ray,workers=1000000000", "option workers=1000000000: expected a number from 1 to 4096"),
        ("ray,num_cpus=" + "9" * 30, "expected a number from 1 to 4096"),
        ("ray,gpus_per_worker=1e30", "option gpus_per_worker=1e+30: expected a number from 0"),
        ("ray,replace_timeout=1e9", "expected a number from 1 to 86400"),
        ("ray,address=::::", "option address='::::': expected auto, HOST:PORT or ray://HOST:PORT"),
        ("ray,address=a=b", "option address='a=b': expected auto"),
        ("ray,address=head", "option address='head'"),
        ("ray,address=head:0", "option address='head:0'"),
        ("ray,address=head:65536", "option address='head:65536'"),
        ("ray,address=::1:6379", "an IPv6 host in brackets"),
        ("ray,address=ray://", "option address='ray://'"),
        ("ray,address=http://head:8265", "option address='http://head:8265'"),
        ("ray,address=-head:1", "option address='-head:1'"),
    ],
)
def test_a_bad_spec_is_one_line(text, said):
    with pytest.raises(UsageError) as err:
        parse_executor(text)
    assert said in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "address", ["auto", "head:6379", "ray://head:10001", "10.0.0.5:6379", "[::1]:6379",
                "ray://[fe80::1]:10001", "ray-head.ns.svc.cluster.local:6379", "ray_head:6379"],
)  # fmt: skip
def test_the_address_forms_ray_takes_are_taken(address):
    assert parse_executor(f"ray,address={address}").settings.address == address


def test_the_older_flags_fill_the_spec_and_must_agree_with_it():
    aliases = {"address": "head:6379", "workers": 3, "gpus_per_worker": None}
    assert parse_executor("ray", aliases=aliases).settings == RaySettings("head:6379", 3)
    assert parse_executor("ray,workers=3", aliases=aliases).settings.workers == 3
    with pytest.raises(UsageError, match="disagree: give the setting once"):
        parse_executor("ray,workers=2", aliases=aliases)
    with pytest.raises(UsageError, match="--address is for --executor ray"):
        parse_executor("inprocess", aliases=aliases)


def test_a_placement_gives_one_model_its_own_share():
    models = [parse_model("ref:reader"), parse_model("ref:constant")]
    spec = parse_executor(
        "ray,workers=2,gpus_per_worker=1", ["ref:reader@workers=1,gpus_per_worker=4"]
    )
    check_placed(spec, models)
    assert spec.placements == {"ref:reader": Placement(workers=1, gpus_per_worker=4.0)}
    assert spec.placed("ref:reader") == RaySettings(workers=1, gpus_per_worker=4.0)
    assert spec.placed("ref:constant") == RaySettings(workers=2, gpus_per_worker=1.0)
    assert spec.record()["placements"] == {
        "ref:reader": {"workers": 1, "gpus_per_worker": 4.0, "cpus_per_worker": None}
    }
    with pytest.raises(UsageError, match="no --model of that name or text"):
        check_placed(parse_executor("ray", ["ref:random@workers=1"]), models)
    for bad, said in [
        (["ref:reader"], "expected MODEL@KEY=VALUE"),
        (["ref:reader@workers=1", "ref:reader@workers=2"], "placed twice"),
        (["ref:reader@gpus=1"], "has no option 'gpus'"),
        (["ref:reader@workers=" + "1" * 31], "expected a number from 1 to 4096"),
    ]:
        with pytest.raises(UsageError, match=said):
            parse_executor("ray", bad)
    with pytest.raises(UsageError, match="is for --executor ray"):
        parse_executor("inprocess", ["ref:reader@workers=1"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--executor", "ray,workers=0"], "workers=0"),
        (["--executor", "ray,address=a=b"], "address='a=b'"),
        (["--executor", "ray", "--placement", "ref:nobody@workers=1"], "ref:nobody"),
        (["--placement", "ref:reader@workers=1"], "is for --executor ray"),
    ],
)
def test_the_audit_refuses_a_bad_executor_before_any_work(tmp_path, args, said):
    res = CliRunner().invoke(
        app, ["audit", "--model", "ref:reader", "--out", str(tmp_path / "a"), *args]
    )
    assert res.exit_code == 2 and said in res.output
    assert not (tmp_path / "a").exists()
