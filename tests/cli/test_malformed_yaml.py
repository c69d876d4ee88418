"""``validate``, ``render`` and ``simulate`` fed malformed YAML: one clear line, exit 1 or 2, no traceback.

What the real programs do, measured (kubectl and kube-apiserver v1.35.4,
``crossplane render`` v2.2.1), and what these commands do alike:

- a key given twice: kubectl and crossplane render both accept it and keep
  the last value (kubectl turns YAML into JSON before sending, so the API
  server never sees the duplicate); so do ``validate``, ``render`` and
  ``simulate``;
- size: crossplane render has no limit (a 50 MB XR loads in 3 s, 0.5 GB);
  the API server refuses a request over 3 MiB ("Request entity too large:
  limit is 3145728") and etcd an object over 1.5 MiB ("etcdserver: request is
  too large"), so ``validate`` fails a resource over either, in those words;
- UTF-16 with a byte-order mark: both accept it, and so do ``validate``,
  ``simulate`` and ``render``; UTF-32 with a mark: both refuse it (``yaml:
  control characters are not allowed``), these commands read it (YAML 1.2);
- nesting: both read 10,000 levels and refuse 10,001 (``exceeded max depth
  of 10000``), and so do these commands;
- aliases: both refuse a billion laughs ("document contains excessive
  aliasing") and an anchor holding itself; so do these commands, by go-yaml's
  alias budget (``modelplane.render.reader``).
"""
from __future__ import annotations

import pytest

from tests.cli import hostile_yaml as H


def _one_error(answer: H.Answer, name: str, where: str) -> str:
    assert answer.code in (1, 2), answer
    text = answer.out + answer.err
    assert "Traceback" not in text and "internal error" not in text, text
    errors = [line for line in answer.lines if name in line]
    assert len(errors) == 1, answer.lines
    assert where in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize("bad", H.BAD, ids=lambda b: b.name)
def test_validate_names_the_file_and_where(tmp_path, bad):
    path = tmp_path / "bad.yaml"
    path.write_bytes(bad.content)
    line = _one_error(H.validate(path), "bad.yaml", bad.where)
    assert line.startswith("[x] ")


@pytest.mark.parametrize("bad", H.BAD, ids=lambda b: b.name)
def test_render_names_the_file_and_where(tmp_path, bad):
    xr, fns = tmp_path / "xr.yaml", tmp_path / "functions.yaml"
    xr.write_bytes(bad.content)
    fns.write_bytes(H.FUNCTIONS)
    where = "object" if bad.where in ("list", "scalar") else bad.where   # render reads one object per file
    if bad.where == "list":
        xr.write_bytes(b"- a\n- b\n")
    line = _one_error(H.render(xr, fns), "xr.yaml", where)
    assert line.startswith("crossplane: error: cannot load composite resource from")


@pytest.mark.parametrize("bad", H.BAD, ids=lambda b: b.name)
def test_simulate_names_the_file_and_where(tmp_path, bad):
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "bad.yaml").write_bytes(bad.content)
    line = _one_error(H.simulate(tmp_path / "fleet"), "bad.yaml", bad.where)
    assert line.startswith("modelplane simulate: ")


def test_render_names_the_bad_file_inside_a_folder_argument(tmp_path):
    xr, observed = tmp_path / "xr.yaml", tmp_path / "observed"
    xr.write_bytes(b"apiVersion: modelplane.ai/v1alpha1\nkind: ModelService\nmetadata:\n  name: s\n  namespace: ml\n")
    observed.mkdir()
    (observed / "a.yaml").write_bytes(H.CONFIGMAP)
    (observed / "b.yaml").write_bytes(H.CONFIGMAP + b"data:\n  x: caf\xe9\n")
    (tmp_path / "functions.yaml").write_bytes(H.FUNCTIONS)
    import io

    from modelplane import paths
    from modelplane.cli import render as cli
    err = io.StringIO()
    code = cli.run([str(xr), str(paths.APIS / "modelservices" / "composition.yaml"), str(tmp_path / "functions.yaml"),
                    "-o", str(observed)], stdout=io.StringIO(), stderr=err)
    assert code == 1
    assert err.getvalue().strip() == (f'crossplane: error: cannot load observed resources from "{observed / "b.yaml"}": '
                                      "yaml: invalid UTF-8: byte 0xe9 at line 7, column 9")


DUPLICATE = H.CONFIGMAP.replace(b"  name: cm\n", b"  name: first\n  name: second\n") + b"data:\n  a: '1'\n  a: '2'\n"


def test_a_key_given_twice_keeps_the_last_value_as_kubectl_and_crossplane_render_do(tmp_path):
    from modelplane.render import loader
    from modelplane.validate import admission

    path = tmp_path / "dup.yaml"
    path.write_bytes(DUPLICATE)
    answer = H.validate(path)
    assert answer.code == 0 and "v1, Kind=ConfigMap, ml/second validated successfully" in answer.out, answer
    xr = loader.load_xr(str(path))
    assert xr["metadata"]["name"] == "second" and xr["data"] == {"a": "2"}
    _, others = admission.load_dir(tmp_path)
    assert others[0]["metadata"]["name"] == "second" and others[0]["data"] == {"a": "2"}


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_a_byte_order_mark_names_the_encoding_for_every_command(tmp_path, encoding):
    path = tmp_path / "marked.yaml"
    path.write_bytes(("\ufeff" + H.CONFIGMAP.decode() + "data:\n  note: café\n").encode(encoding))
    answer = H.validate(path)
    assert answer.code == 0 and "ml/cm validated successfully" in answer.out, answer
    fns = tmp_path / "functions.yaml"
    fns.write_bytes(H.FUNCTIONS)
    # Read: render goes on to check the ConfigMap against the ModelService's Composition.
    line = _one_error(H.render(path, fns), "crossplane: error", "does not match XR's kind (ConfigMap)")
    assert "marked.yaml" not in line, line


def test_render_reads_every_document_of_a_utf16_stream(tmp_path):
    """crossplane render v2.2.1 splits a stream into documents before decoding it, so of a UTF-16
    functions file it reads the first Function only ("unknown Function"); kubectl decodes first,
    and so does render here: every document counts."""
    from modelplane.render import loader
    two = H.FUNCTIONS + b"---\n" + H.FUNCTIONS.replace(b"model-service", b"model-endpoint")
    path = tmp_path / "functions.yaml"
    path.write_bytes(("\ufeff" + two.decode()).encode("utf-16-le"))
    got = [f["metadata"]["name"] for f in loader.load_functions(str(path))]
    assert got == ["modelplane-compose-model-service", "modelplane-compose-model-endpoint"]


def test_render_reads_a_document_10000_levels_deep(tmp_path):
    """The depth go-yaml allows reaches the composition check, where the ConfigMap stops it."""
    xr, fns = tmp_path / "xr.yaml", tmp_path / "functions.yaml"
    xr.write_bytes(H.CONFIGMAP + b"data:\n  x: " + b"[" * 9_998 + b"]" * 9_998 + b"\n")
    fns.write_bytes(H.FUNCTIONS)
    _one_error(H.render(xr, fns), "crossplane: error", "does not match XR's kind (ConfigMap)")


@pytest.mark.parametrize(("mib", "said"), [(1.6, "etcdserver: request is too large"),
                                           (3.1, "Request entity too large: limit is 3145728")])
def test_validate_refuses_a_resource_the_api_server_would(tmp_path, mib, said):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: big\n  namespace: ml\nstringData:\n  x: "
                     + b"y" * int(mib * 1024 * 1024) + b"\n")
    line = _one_error(H.validate(path), "big.yaml", said)
    assert "v1, Kind=Secret, ml/big" in line
