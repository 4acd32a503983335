"""jitensor.hub (torch.hub): the cache folder (set_dir, $TORCH_HOME, $XDG_CACHE_HOME, torch's
own), downloads (hash prefixes, nothing partial left behind), load_state_dict_from_url of files
jt.save and torch.save wrote (cached, check_hash), hubconf entrypoints of a local folder and of
a GitHub repository (its zipball served by a fake urlopen: the tests use no network), the
trust prompt, and torch.hub itself on the same inputs where it is cheap to compare."""
import email.message
import hashlib
import io
import os
import subprocess
import sys
import textwrap
import urllib.request
import zipfile
from urllib.error import HTTPError, URLError

import numpy as np
import pytest
from conftest import REPO

import jitensor as jt
from jitensor import hub

REAL_URLOPEN = urllib.request.urlopen

HUBCONF = textwrap.dedent('''
    """A hub for the tests."""
    import jitensor
    from hubtest_helper import WIDTH  # the repository's own module, found on sys.path

    dependencies = ["numpy"]
    NOT_CALLABLE = 3


    def linear(in_features=WIDTH, out_features=2, bias=True):
        """A Linear layer, in_features -> out_features."""
        return jitensor.nn.Linear(in_features, out_features, bias=bias)


    def width():
        return WIDTH


    def _private():
        pass
''')


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """Each test gets its own hub folder, and forgets the repositories' helper module."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    for var in ("TORCH_HOME", "XDG_CACHE_HOME", "TORCH_HUB", "TORCH_MODEL_ZOO", "GITHUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield
    sys.modules.pop("hubtest_helper", None)


@pytest.fixture
def hub_dir(tmp_path):
    hub.set_dir(tmp_path / "hub")
    return tmp_path / "hub"


def make_repo(path, hubconf=HUBCONF, width=3):
    path.mkdir(parents=True, exist_ok=True)
    (path / "hubconf.py").write_text(hubconf)
    (path / "hubtest_helper.py").write_text(f"WIDTH = {width}\n")
    return path


def zipball(path, files, top="owner-repo-0123abc"):
    """A zip laid out as GitHub's zipball: one top folder (listed first) holding the files."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{top}/", "")
        for name, text in files.items():
            zf.writestr(f"{top}/{name}", text)
    return path


def repo_files(width=3, hubconf=HUBCONF):
    return {"hubconf.py": hubconf, "hubtest_helper.py": f"WIDTH = {width}\n"}


class FakeWeb:
    """urlopen for the tests: the URLs given a file serve it (through the real urlopen's
    file:// support), those given an exception raise it, and any other URL fails as it would
    offline."""

    def __init__(self):
        self.routes = {}
        self.opened = []

    def __call__(self, req, *args, **kwargs):
        url = req.full_url if isinstance(req, urllib.request.Request) else req
        self.opened.append(url)
        answer = self.routes.get(url)
        if answer is None:
            raise URLError(f"no network in the tests ({url})")
        if isinstance(answer, BaseException):
            raise answer
        return REAL_URLOPEN(answer.as_uri())

    def downloads(self):
        return [u for u in self.opened if "/zipball/" in u]


def http_error(url, code):
    return HTTPError(url, code, "error", email.message.Message(), io.BytesIO())


@pytest.fixture
def web(monkeypatch):
    fake = FakeWeb()
    monkeypatch.setattr(urllib.request, "urlopen", fake)
    return fake


ZIPBALL = "https://github.com/owner/repo/zipball/"


def serve_repo(web, tmp_path, ref="main", width=3, owner="owner", **kw):
    url = f"https://github.com/{owner}/repo/zipball/{ref}"
    web.routes[url] = zipball(tmp_path / f"served-{owner}-{ref.replace('/', '_')}-{width}.zip",
                              repo_files(width), **kw)
    return url


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the cache folder ----------------------------------------------------------------------------

def test_get_dir_follows_set_dir_then_torch_home_then_xdg(monkeypatch, tmp_path):
    assert hub.get_dir() == str(tmp_path / "home" / ".cache" / "torch" / "hub")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    monkeypatch.setenv("TORCH_HOME", "~/th")
    assert hub.get_dir() == str(tmp_path / "home" / "th" / "hub")
    hub.set_dir("~/mine")
    assert hub.get_dir() == str(tmp_path / "home" / "mine")
    hub.set_dir(tmp_path / "path")  # a PathLike is taken too, and given back as a str
    assert hub.get_dir() == str(tmp_path / "path")
    assert jt.hub is hub and "hub" in jt.__all__


def test_torch_hub_env_is_deprecated(monkeypatch):
    monkeypatch.setenv("TORCH_HUB", "/somewhere")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        hub.get_dir()


def test_get_dir_is_torchs(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    envs = [{}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")},
            {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "TORCH_HOME": "~/th"}]
    for env in envs:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert hub.get_dir() == torch.hub.get_dir()
    hub.set_dir("~/x")
    torch.hub.set_dir("~/x")
    assert hub.get_dir() == torch.hub.get_dir()


# -- downloads -----------------------------------------------------------------------------------

def test_download_checks_the_hash_prefix(tmp_path, capsys):
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(300_000))
    out = tmp_path / "out"
    out.mkdir()
    hub.download_url_to_file(src.as_uri(), str(out / "a.bin"), hash_prefix=sha256(src)[:10])
    assert (out / "a.bin").read_bytes() == src.read_bytes()
    hub.download_url_to_file(src.as_uri(), str(out / "b.bin"), progress=False)
    assert (out / "b.bin").read_bytes() == src.read_bytes()
    assert sorted(os.listdir(out)) == ["a.bin", "b.bin"]  # no temporary file left
    assert capsys.readouterr().err  # progress=True showed some progress


def test_a_bad_hash_leaves_no_file(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"some bytes" * 1000)
    out = tmp_path / "out"
    out.mkdir()
    expected = f'invalid hash value (expected "0000", got "{sha256(src)}")'
    with pytest.raises(RuntimeError) as caught:
        hub.download_url_to_file(src.as_uri(), str(out / "a.bin"), hash_prefix="0000",
                                 progress=False)
    assert str(caught.value) == expected
    assert os.listdir(out) == []
    # a working file of that name is kept, not replaced by the rejected download
    (out / "a.bin").write_bytes(b"previous")
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(src.as_uri(), str(out / "a.bin"), hash_prefix="0000")
    assert os.listdir(out) == ["a.bin"] and (out / "a.bin").read_bytes() == b"previous"


def test_a_failed_download_leaves_no_file(tmp_path):
    with pytest.raises(URLError):
        hub.download_url_to_file((tmp_path / "missing").as_uri(), str(tmp_path / "a.bin"))
    assert os.listdir(tmp_path) == []


def test_an_interrupted_download_leaves_no_file(tmp_path, monkeypatch):
    src = tmp_path / "src.bin"
    src.write_bytes(b"x" * (3 * hub.READ_DATA_CHUNK))

    class Interrupting:
        def update(self, n):
            raise KeyboardInterrupt

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(hub, "tqdm", lambda *a, **k: Interrupting())
    with pytest.raises(KeyboardInterrupt):
        hub.download_url_to_file(src.as_uri(), str(tmp_path / "a.bin"))
    assert os.listdir(tmp_path) == ["src.bin"]


def test_the_progress_line_without_tqdm(capsys):
    with hub._Progress(total=200) as bar:
        for _ in range(4):
            bar.update(50)
    assert capsys.readouterr().err == "\r25.0%\r50.0%\r75.0%\r100.0%\n"
    with hub._Progress(total=None, disable=True) as bar:
        bar.update(10)
    assert capsys.readouterr().err == ""


def test_the_bad_hash_error_is_torchs(tmp_path):
    torch = pytest.importorskip("torch")
    src = tmp_path / "src.bin"
    src.write_bytes(b"abc")
    errors = []
    for download in (hub.download_url_to_file, torch.hub.download_url_to_file):
        with pytest.raises(RuntimeError) as caught:
            download(src.as_uri(), str(tmp_path / "dst"), hash_prefix="ffff", progress=False)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert sorted(os.listdir(tmp_path)) == ["src.bin"]


# -- load_state_dict_from_url --------------------------------------------------------------------

def state_dict():
    lin = jt.nn.Linear(3, 2)
    return {k: v.detach() for k, v in lin.state_dict().items()}


def assert_same_state(got, expected):
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        assert isinstance(got[key], jt.Tensor)
        np.testing.assert_array_equal(got[key].numpy(), np.asarray(value))


def test_load_state_dict_from_url_caches_the_file(tmp_path, hub_dir, capsys):
    sd = state_dict()
    src = tmp_path / "weights.pt"
    jt.save(sd, src)
    got = hub.load_state_dict_from_url(src.as_uri(), progress=False)
    assert_same_state(got, {k: v.numpy() for k, v in sd.items()})
    cached = hub_dir / "checkpoints" / "weights.pt"
    assert cached.read_bytes() == src.read_bytes()
    assert f'Downloading: "{src.as_uri()}" to {cached}' in capsys.readouterr().out
    src.unlink()  # the second call reads the cached file, downloading nothing
    again = hub.load_state_dict_from_url(src.as_uri(), weights_only=True)
    assert_same_state(again, {k: v.numpy() for k, v in sd.items()})
    assert "Downloading" not in capsys.readouterr().out


def test_load_state_dict_from_url_model_dir_and_file_name(tmp_path):
    src = tmp_path / "weights.pt"
    jt.save({"a": jt.arange(4)}, src)
    got = hub.load_state_dict_from_url(src.as_uri(), model_dir=str(tmp_path / "models"),
                                       file_name="renamed.pt", map_location="cpu")
    assert_same_state(got, {"a": np.arange(4)})
    assert os.listdir(tmp_path / "models") == ["renamed.pt"]
    assert not os.path.exists(hub.get_dir())  # the hub folder is left alone


def test_load_state_dict_from_url_reads_torch_save(tmp_path, hub_dir, monkeypatch):
    torch = pytest.importorskip("torch")
    sd = {"weight": torch.arange(6.0).reshape(2, 3), "steps": torch.tensor(7)}
    src = tmp_path / "torch_weights.pth"
    torch.save(sd, src)
    for weights_only in (False, True):
        got = hub.load_state_dict_from_url(src.as_uri(), progress=False,
                                           weights_only=weights_only)
        assert_same_state(got, {k: v.numpy() for k, v in sd.items()})
    # and torch.hub reads what jitensor's cached
    jt.save({"w": jt.ones(2, 2)}, tmp_path / "jt_weights.pt")
    hub.load_state_dict_from_url((tmp_path / "jt_weights.pt").as_uri(), progress=False)
    monkeypatch.setattr(torch.hub, "_hub_dir", str(hub_dir))
    theirs = torch.hub.load_state_dict_from_url("file:///nowhere/jt_weights.pt")
    assert torch.equal(theirs["w"], torch.ones(2, 2))


def test_load_state_dict_from_url_weights_only_default_is_torchs():
    torch = pytest.importorskip("torch")
    import inspect
    mine = inspect.signature(hub.load_state_dict_from_url).parameters
    theirs = inspect.signature(torch.hub.load_state_dict_from_url).parameters
    assert list(mine) == list(theirs)
    assert {k: p.default for k, p in mine.items()} == {k: p.default for k, p in theirs.items()}


def test_check_hash_takes_the_prefix_from_the_file_name(tmp_path, hub_dir):
    src = tmp_path / "weights.pt"
    jt.save({"a": jt.ones(3)}, src)
    digest = sha256(src)
    good = tmp_path / f"net-{digest[:8]}.pt"
    good.write_bytes(src.read_bytes())
    got = hub.load_state_dict_from_url(good.as_uri(), check_hash=True, progress=False)
    assert_same_state(got, {"a": np.ones(3, np.float32)})
    bad = tmp_path / "net-deadbeef.pt"
    bad.write_bytes(src.read_bytes())
    with pytest.raises(RuntimeError, match='expected "deadbeef"'):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert os.listdir(hub_dir / "checkpoints") == [good.name]
    # without check_hash the name is only a name
    hub.load_state_dict_from_url(bad.as_uri(), progress=False)
    assert sorted(os.listdir(hub_dir / "checkpoints")) == sorted([good.name, bad.name])


def test_a_zip_holding_one_checkpoint_still_loads(tmp_path, hub_dir):
    jt.save({"a": jt.ones(2)}, tmp_path / "inner.pt")
    with zipfile.ZipFile(tmp_path / "packed.zip", "w") as zf:
        zf.write(tmp_path / "inner.pt", "inner.pt")
    with pytest.warns(FutureWarning, match="old format"):
        got = hub.load_state_dict_from_url((tmp_path / "packed.zip").as_uri(), progress=False)
    assert_same_state(got, {"a": np.ones(2, np.float32)})


# -- hubconf entrypoints of a local folder -------------------------------------------------------

def test_local_list_help_load(tmp_path):
    repo = make_repo(tmp_path / "repo")
    assert hub.list(str(repo), source="local") == ["linear", "width"]
    assert hub.help(repo, "linear", source="local") == \
        "A Linear layer, in_features -> out_features."
    model = hub.load(str(repo), "linear", source="local")
    assert isinstance(model, jt.nn.Linear) and tuple(model.weight.shape) == (2, 3)
    model = hub.load(str(repo), "linear", 5, source="LOCAL", out_features=4, bias=False)
    assert tuple(model.weight.shape) == (4, 5) and model.bias is None
    assert str(repo) not in sys.path


def test_local_errors(tmp_path):
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(RuntimeError, match="^Cannot find callable nope in hubconf$"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable NOT_CALLABLE in hubconf"):
        hub.help(str(repo), "NOT_CALLABLE", source="local")
    with pytest.raises(ValueError, match="model should be a string"):
        hub.load(str(repo), 3, source="local")
    with pytest.raises(ValueError, match='Unknown source: "gitlab"'):
        hub.load(str(repo), "linear", source="gitlab")
    with pytest.raises(FileNotFoundError):
        hub.load(str(tmp_path), "linear", source="local")
    assert str(repo) not in sys.path


def test_missing_dependencies_are_named(tmp_path):
    hubconf = HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_a", "no_such_pkg_b"]')
    repo = make_repo(tmp_path / "repo", hubconf)
    with pytest.raises(RuntimeError, match="^Missing dependencies: no_such_pkg_a, no_such_pkg_b$"):
        hub.load(str(repo), "linear", source="local")
    assert hub.list(str(repo), source="local") == ["linear", "width"]  # list does not check


def test_local_load_matches_torch_hub(tmp_path):
    torch = pytest.importorskip("torch")
    repo = make_repo(tmp_path / "repo")
    missing = make_repo(tmp_path / "missing", HUBCONF.replace('["numpy"]', '["no_such_pkg"]'))
    results = []
    for load in (hub.load, torch.hub.load):
        model = load(str(repo), "linear", 4, source="local", bias=False)
        results.append((type(model), tuple(model.weight.shape), model.bias))
        for where, model, source in ((repo, "nope", "local"), (repo, "NOT_CALLABLE", "local"),
                                     (missing, "linear", "local"), (repo, 3, "local"),
                                     (repo, "linear", "svn")):
            with pytest.raises(Exception) as caught:
                load(str(where), model, source=source)
            results.append((type(caught.value), str(caught.value)))
    half = len(results) // 2
    assert results[:half] == results[half:]
    assert results[0] == (jt.nn.Linear, (2, 4), None)


# -- GitHub repositories -------------------------------------------------------------------------

def test_github_download_extract_and_cache(tmp_path, hub_dir, web, capsys):
    serve_repo(web, tmp_path, width=3)
    model = hub.load("owner/repo:main", "linear", trust_repo=True, skip_validation=True)
    assert isinstance(model, jt.nn.Linear) and tuple(model.weight.shape) == (2, 3)
    repo_dir = hub_dir / "owner_repo_main"
    # the repository's files (and the bytecode of importing hubconf, where Python writes it)
    assert sorted(set(os.listdir(repo_dir)) - {"__pycache__"}) == ["hubconf.py",
                                                                    "hubtest_helper.py"]
    # only the repository and the trust list: no zip, no extraction folder left
    assert sorted(os.listdir(hub_dir)) == ["owner_repo_main", "trusted_list"]
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    assert f'Downloading: "{ZIPBALL}main"' in capsys.readouterr().out
    # the cached copy serves from now on, even with a newer one online
    sys.modules.pop("hubtest_helper", None)
    serve_repo(web, tmp_path, width=5)
    assert hub.load("owner/repo:main", "width", skip_validation=True) == 3
    assert len(web.downloads()) == 1
    assert f"Using cache found in {repo_dir}" in capsys.readouterr().err
    assert hub.list("owner/repo:main", verbose=False) == ["linear", "width"]
    assert capsys.readouterr().err == ""
    assert hub.help("owner/repo:main", "linear").startswith("A Linear layer")
    sys.modules.pop("hubtest_helper", None)
    assert hub.load("owner/repo:main", "width", force_reload=True, skip_validation=True) == 5
    assert len(web.downloads()) == 2
    assert sorted(os.listdir(hub_dir)) == ["owner_repo_main", "trusted_list"]


def test_github_default_branch_and_offline_cache(tmp_path, hub_dir, web):
    # no ref: main where github.com/owner/repo/tree/main/ exists, else master
    web.routes["https://github.com/owner/repo/tree/main/"] = http_error("tree", 404)
    serve_repo(web, tmp_path, ref="master")
    assert hub.list("owner/repo", trust_repo=True, skip_validation=True) == ["linear", "width"]
    assert web.downloads() == [f"{ZIPBALL}master"]
    assert (hub_dir / "owner_repo_master" / "hubconf.py").exists()
    # offline, the cached copy still serves
    web.routes.clear()
    assert hub.load("owner/repo", "width") == 3
    with pytest.raises(RuntimeError, match="no internet connection"):
        hub.load("owner/other", "width", trust_repo=True)
    web.routes["https://github.com/owner/repo/tree/main/"] = http_error("tree", 500)
    with pytest.raises(HTTPError):
        hub.load("owner/repo", "width")


def test_github_ref_with_a_slash(tmp_path, hub_dir, web):
    serve_repo(web, tmp_path, ref="release/v1")
    assert hub.load("owner/repo:release/v1", "width", trust_repo=True,
                    skip_validation=True) == 3
    assert (hub_dir / "owner_repo_release_v1").is_dir()


def test_github_ambiguous_ref_takes_the_branch(tmp_path, hub_dir, web):
    web.routes[f"{ZIPBALL}v1"] = http_error("zip", 300)
    serve_repo(web, tmp_path, ref="refs/heads/v1")
    with pytest.warns(UserWarning, match="The ref v1 is ambiguous"):
        assert hub.load("owner/repo:v1", "width", trust_repo=True, skip_validation=True) == 3
    assert (hub_dir / "owner_repo_v1").is_dir()


def test_github_validation_refuses_a_foreign_ref(tmp_path, hub_dir, web, monkeypatch):
    api = "https://api.github.com/repos/owner/repo"
    pages = {f"{api}/branches?per_page=100&page=1": '[{"name": "main", "commit": {"sha": "a1"}}]',
             f"{api}/branches?per_page=100&page=2": "[]",
             f"{api}/tags?per_page=100&page=1": '[{"name": "v2", "commit": {"sha": "c0ffee"}}]',
             f"{api}/tags?per_page=100&page=2": "[]"}
    for i, (url, text) in enumerate(pages.items()):
        web.routes[url] = tmp_path / f"page{i}.json"
        web.routes[url].write_text(text)
    for ref in ("main", "v2", "c0f"):
        serve_repo(web, tmp_path, ref=ref)
        assert hub.load(f"owner/repo:{ref}", "width", trust_repo=True) == 3
    with pytest.raises(ValueError, match="Cannot find fork-branch in https://github.com/owner/"
                                         "repo. If it's a commit from a forked repo"):
        hub.load("owner/repo:fork-branch", "width", trust_repo=True)
    assert not (hub_dir / "owner_repo_fork-branch").exists()
    # a token is sent, and dropped on an HTTP error (it may lack the permissions)
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    sent = []

    def recording(req, *args, **kwargs):
        if isinstance(req, urllib.request.Request) and "api.github.com" in req.full_url:
            sent.append(req.get_header("Authorization"))
            if req.get_header("Authorization"):
                raise http_error(req.full_url, 401)
        return FakeWeb.__call__(web, req)

    monkeypatch.setattr(urllib.request, "urlopen", recording)
    hub._validate_not_a_forked_repo("owner", "repo", "main")
    assert sent == ["token secret", None]


def test_github_invalid_repo_names(hub_dir, web):
    for bad in ("owner", "owner/repo/extra", "owner/repo:a:b", "/repo"):
        with pytest.raises(ValueError, match="repo_owner/repo_name"):
            hub.load(bad, "linear", trust_repo=True)


def test_github_archive_must_stay_inside_the_cache(tmp_path, hub_dir, web):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("top/hubconf.py", "")
        zf.writestr("top/../../escaped.py", "")
    web.routes[f"{ZIPBALL}main"] = evil
    with pytest.raises(ValueError, match="directory traversal"):
        hub.load("owner/repo:main", "linear", trust_repo=True, skip_validation=True)
    assert not (tmp_path / "escaped.py").exists()
    assert sorted(os.listdir(hub_dir)) == ["trusted_list"]
    two = zipball(tmp_path / "two.zip", repo_files())
    with zipfile.ZipFile(two, "a") as zf:
        zf.writestr("other/file.py", "")
    web.routes[f"{ZIPBALL}main"] = two
    with pytest.raises(RuntimeError, match="expected one top-level folder"):
        hub.load("owner/repo:main", "linear", skip_validation=True)
    assert sorted(os.listdir(hub_dir)) == ["trusted_list"]


# -- trust ---------------------------------------------------------------------------------------

def answering(monkeypatch, *answers):
    asked = []
    replies = iter(answers)

    def fake_input(prompt):
        asked.append(prompt)
        return next(replies)

    monkeypatch.setattr("builtins.input", fake_input)
    return asked


def test_trust_repo(tmp_path, hub_dir, web, monkeypatch, capsys):
    serve_repo(web, tmp_path)
    asked = answering(monkeypatch, "n", "", "maybe", "Y", "yes")
    with pytest.raises(Exception, match="^Untrusted repository.$"):
        hub.load("owner/repo:main", "width", skip_validation=True)  # "check" is the default
    assert "The repository owner_repo does not belong to the list" in asked[0]
    with pytest.raises(Exception, match="Untrusted repository."):
        hub.list("owner/repo:main", skip_validation=True, trust_repo="check")
    with pytest.raises(ValueError, match="Unrecognized response maybe."):
        hub.load("owner/repo:main", "width", skip_validation=True)
    assert web.downloads() == []  # nothing was downloaded before the answer
    assert hub.load("owner/repo:main", "width", skip_validation=True) == 3
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    # trusted now: "check" asks no more; False asks always
    assert hub.load("owner/repo:main", "width") == 3
    assert len(asked) == 4
    capsys.readouterr()
    assert hub.load("owner/repo:main", "width", trust_repo=False) == 3
    assert len(asked) == 5 and "already trusted" in capsys.readouterr().out
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"


def test_trusted_owners_and_earlier_downloads(tmp_path, hub_dir, web, monkeypatch):
    answering(monkeypatch)  # any question fails the test (StopIteration)
    serve_repo(web, tmp_path, owner="pytorch")
    assert hub.load("pytorch/repo:main", "width", skip_validation=True) == 3
    assert (hub_dir / "trusted_list").read_text() == ""
    # a repository found in the cache counts as trusted (downloaded before trust_repo existed)
    make_repo(hub_dir / "someone_repo_main")
    assert hub.load("someone/repo:main", "width") == 3
    assert (hub_dir / "trusted_list").read_text() == ""  # trusted already, so not recorded
    # True trusts (and records) without asking
    serve_repo(web, tmp_path, owner="third")
    assert hub.load("third/repo:main", "width", trust_repo=True, skip_validation=True) == 3
    assert (hub_dir / "trusted_list").read_text() == "third_repo\n"


def test_github_cache_is_shared_with_torch_hub(tmp_path, hub_dir, web, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.hub, "urlopen", web)
    monkeypatch.setattr(torch.hub, "_hub_dir", str(hub_dir))
    serve_repo(web, tmp_path)
    web.routes["https://github.com/owner/repo/tree/main/"] = tmp_path / "tree.html"
    (tmp_path / "tree.html").write_text("<html/>")
    theirs = torch.hub.list("owner/repo", skip_validation=True, trust_repo=True)
    listing = sorted(os.listdir(hub_dir))
    trusted = (hub_dir / "trusted_list").read_text()
    capsys.readouterr()
    assert hub.list("owner/repo", skip_validation=True, trust_repo="check") == theirs
    assert "Using cache found in" in capsys.readouterr().err  # torch's download, reused
    assert len(web.downloads()) == 1
    assert (hub_dir / "trusted_list").read_text() == trusted
    # and a fresh download of ours lays out the cache as torch's did
    assert hub.list("owner/repo", force_reload=True, skip_validation=True) == theirs
    assert sorted(os.listdir(hub_dir)) == listing
    assert torch.hub.load("owner/repo", "width", skip_validation=True) == 3


# -- under jitensor.run --------------------------------------------------------------------------

@pytest.mark.subprocess
def test_a_torch_script_uses_torch_hub_under_jitensor_run(tmp_path):
    repo = make_repo(tmp_path / "repo", HUBCONF.replace("import jitensor", "import torch")
                     .replace("jitensor.nn.Linear", "torch.nn.Linear"))
    jt.save({"weight": jt.ones(2, 3), "bias": jt.zeros(2)}, tmp_path / "w.pt")
    (tmp_path / "script.py").write_text(textwrap.dedent(f"""
        import torch
        import torch.hub
        from torch.hub import load_state_dict_from_url
        torch.hub.set_dir({str(tmp_path / "hub")!r})
        model = torch.hub.load({str(repo)!r}, "linear", source="local")
        model.load_state_dict(load_state_dict_from_url({(tmp_path / "w.pt").as_uri()!r},
                                                       progress=False))
        assert type(model).__module__.startswith("jitensor"), type(model)
        print(model(torch.ones(1, 3)).tolist())
    """))
    done = subprocess.run([sys.executable, "-m", "jitensor.run", "script.py"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[[3.0, 3.0]]"


def test_model_zoo_is_the_older_name_of_load_state_dict_from_url():
    from jitensor.utils import model_zoo
    assert model_zoo.load_url is jt.hub.load_state_dict_from_url
