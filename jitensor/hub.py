"""torch.hub: load models from a GitHub repository's or a local folder's ``hubconf.py``, and
download checkpoints into a cache that is shared with torch's.

The cache is torch's own (`get_dir`: ``$TORCH_HOME/hub``, by default
``~/.cache/torch/hub``), so repositories and checkpoints torch downloaded are reused and
`load_state_dict_from_url` reads them with `jitensor.load`, which reads torch's checkpoint format.
Downloads go to a temporary file beside the target and are renamed into place only once
complete (and their SHA-256 prefix checked): an interrupted or rejected download never leaves a
partial file under the final name. Under ``python -m jitensor.run`` a hubconf's ``import torch``
gets jitensor, so hub repositories written for torch run unchanged where jitensor has what they
use."""
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.request
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse

from .serialization import _atomic_file  # jt.save's: a temporary beside the file, renamed
from .serialization import load as _load_checkpoint

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

# matches bfd8deac from resnet18-bfd8deac.pth
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_PATH_SEP_PATTERN = re.compile(r"[/\\]")
# owners whose repositories torch trusts without asking (trust_repo="check")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir: str | None = None


class _Progress:
    """A progress line on stderr, for where tqdm is not installed (the subset of tqdm's
    interface torch.hub uses, so ``from torch.hub import tqdm`` works either way)."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0
        self._shown = None

    def update(self, n):
        if self.disable:
            return
        self.n += n
        # redraw only when the figure shown changes: a line per chunk floods a slow terminal
        shown = (f"{self.n / 2**20:.1f} MiB" if not self.total
                 else f"{100 * self.n / self.total:.1f}%")
        if shown != self._shown:
            self._shown = shown
            sys.stderr.write(f"\r{shown}")
            sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        if not self.disable and self._shown is not None:
            sys.stderr.write("\n")
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


try:  # torch shows tqdm's bar where tqdm is installed; it is no dependency of either
    from tqdm import tqdm
except ImportError:
    tqdm = _Progress


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir() -> str:
    """The hub cache folder: the one `set_dir` gave, else ``$TORCH_HOME/hub``, where
    ``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch`` and ``$XDG_CACHE_HOME`` to ``~/.cache``
    (torch's folder, so what torch downloaded is reused)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use the folder `d` for the hub cache from now on (in this process)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# -- hubconf.py ----------------------------------------------------------------------------------

@contextlib.contextmanager
def _add_to_sys_path(path):
    # a hubconf imports its repository's own modules by their top-level names
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_attr_from_module(module, func_name):
    if func_name not in dir(module):
        return None
    return getattr(module, func_name)


def _check_dependencies(m):
    dependencies = _load_attr_from_module(m, VAR_DEPENDENCY)
    if dependencies is not None:
        missing = [pkg for pkg in dependencies if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    # a dependency the hubconf imports at its top level has failed its import already, with
    # Python's own error; the list names those only its entrypoints import
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def _repo_dir(github, source, force_reload, trust_repo, verbose, skip_validation):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return os.fspath(github)
    return _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                skip_validation=skip_validation)


# -- GitHub repositories -------------------------------------------------------------------------

def _git_archive_link(repo_owner, repo_name, ref):
    # https://docs.github.com/en/rest/repos/contents#download-a-repository-archive-zip
    return f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"


def _parse_repo_info(github):
    repo_info, _, ref = github.partition(":")
    parts = repo_info.split("/")
    if len(parts) != 2 or not all(parts) or ":" in ref:
        raise ValueError(f'Invalid github repo "{github}": expected "repo_owner/repo_name[:ref]"')
    repo_owner, repo_name = parts
    if ref:
        return repo_owner, repo_name, ref
    # no ref given: the default branch is main where it exists, else master (torch's guess)
    try:
        with urllib.request.urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
            return repo_owner, repo_name, "main"
    except HTTPError as e:
        if e.code == 404:
            return repo_owner, repo_name, "master"
        raise
    except URLError as e:
        # offline: a copy cached earlier still serves
        for possible_ref in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{repo_owner}_{repo_name}_{possible_ref}")):
                return repo_owner, repo_name, possible_ref
        raise RuntimeError("It looks like there is no internet connection and the repo could not "
                           f"be found in the cache ({get_dir()})") from e


def _read_url(url):
    with urllib.request.urlopen(url) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    # a ref of a fork is served under the parent's name too: only the repo's own branches,
    # tags and commits may load, so a fork's code never runs as the parent's
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for url_prefix in (f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
                       f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            url = f"{url_prefix}?per_page=100&page={page}"
            try:
                response = json.loads(_read_url(urllib.request.Request(url, headers=headers)))
            except HTTPError:
                if headers.pop("Authorization", None) is None:
                    raise
                # retry without the token, in case it lacked the permissions
                response = json.loads(_read_url(urllib.request.Request(url, headers=headers)))
            if not response:  # past the last page
                break
            for br in response:
                if br["name"] == ref or br["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. If it's "
                     "a commit from a forked repo, please call hub.load() with forked repo "
                     "directly.")


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(filepath):
        Path(filepath).touch()
    with open(filepath) as file:
        trusted_repos = tuple(line.strip() for line in file)
    # a repository downloaded before torch asked about trust counts as trusted
    trusted_repos_legacy = next(os.walk(hub_dir))[1]
    owner_name = f"{repo_owner}_{repo_name}"
    is_trusted = (owner_name in trusted_repos or owner_name_branch in trusted_repos_legacy
                  or repo_owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # (torch's type, which callers catch)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _remove_if_exists(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _safe_extract_zip(zip_file, extract_to):
    """Extract every member of `zip_file` under `extract_to`, refusing (ValueError) absolute
    paths and paths that climb out of it (zip slip)."""
    extract_to = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        filename = os.path.normpath(member.filename)
        if filename.startswith(("/", "\\")) or (
                len(filename) >= 2 and filename[1] == ":" and filename[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(_PATH_SEP_PATTERN, filename):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (extract_to / filename).resolve(strict=False).is_relative_to(extract_to):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, extract_to)


def _top_folder(zip_file, url):
    # GitHub's zipball holds one folder, <owner>-<repo>-<sha>/, whose name is not known
    # beforehand; it becomes the cache's <owner>_<repo>_<ref>
    names = [info.filename.replace("\\", "/") for info in zip_file.infolist()]
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) != 1 or not any("/" in name for name in names):
        raise RuntimeError(f"The archive downloaded from {url} is not a repository snapshot: "
                           f"expected one top-level folder, found {sorted(tops)}")
    return tops.pop()


def _download_repo(hub_dir, repo_owner, repo_name, ref, repo_dir):
    cached_file = f"{repo_dir}.zip"
    url = _git_archive_link(repo_owner, repo_name, ref)
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    try:
        try:
            download_url_to_file(url, cached_file, progress=False)
        except HTTPError as err:
            if err.code != 300:
                raise
            # 300 Multiple Choices: the ref names a tag and a branch; take the branch, as git does
            warnings.warn(
                f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
                "Torchhub will now assume that it's a branch. You can disambiguate tags and "
                "branches by explicitly passing refs/heads/branch_name or refs/tags/tag_name as "
                "the ref. That might require using skip_validation=True.", stacklevel=5)
            url = _git_archive_link(repo_owner, repo_name, f"refs/heads/{ref}")
            download_url_to_file(url, cached_file, progress=False)
        # extracted beside the cache and renamed into place whole: a failed extraction leaves
        # the previous copy (or none), never half a repository
        staging = tempfile.mkdtemp(prefix=".extracting-", dir=hub_dir)
        try:
            with zipfile.ZipFile(cached_file) as zf:
                top = _top_folder(zf, url)
                _safe_extract_zip(zf, staging)
            _remove_if_exists(repo_dir)
            os.replace(os.path.join(staging, top), repo_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        _remove_if_exists(cached_file)


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    # a branch name may hold "/" (never "\\"), which must not become a path separator
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    _download_repo(hub_dir, repo_owner, repo_name, ref, repo_dir)
    return repo_dir


# -- entrypoints ---------------------------------------------------------------------------------

def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True, *,
         source="github"):
    """The names of the entrypoints (callables not starting with "_") of the ``hubconf.py`` of
    the GitHub repo ``"repo_owner/repo_name[:ref]"`` (downloaded into `get_dir` unless cached),
    or with source="local" (jitensor's addition) of the folder `github`."""
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, verbose, skip_validation)
    hub_module = _hubconf(repo_dir)
    return [f for f in dir(hub_module)
            if callable(getattr(hub_module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check", *,
         source="github"):
    """The docstring of entrypoint `model` of the repo's (or with source="local", the folder's)
    ``hubconf.py``."""
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, True, skip_validation)
    return _load_entry_from_hubconf(_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entrypoint `model` of the ``hubconf.py`` of `repo_or_dir` with `args` and `kwargs`
    and return what it returns (usually a model). source="github": `repo_or_dir` is
    ``"repo_owner/repo_name[:ref]"`` (default branch: main, else master), downloaded into
    `get_dir` unless cached or force_reload; trust_repo "check" asks before running a repo not
    trusted yet, False always asks, True trusts it (and records that). skip_validation=False
    checks through GitHub's API that the ref is the repo's own, not a fork's.
    source="local": `repo_or_dir` is a folder."""
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose, skip_validation)
    return _load_local(repo_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    # the folder stays on sys.path while the entrypoint runs: it may import lazily
    with _add_to_sys_path(hubconf_dir):
        hub_module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)


# -- files ---------------------------------------------------------------------------------------

def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download `url` to the path `dst`. hash_prefix: the SHA-256 of the content must start
    with it (RuntimeError otherwise). progress: show the progress on stderr. The content goes
    to a temporary file beside `dst`, renamed to `dst` only when complete and checked: a failed
    or interrupted download leaves neither a partial `dst` nor the temporary file (nor does it
    replace a working `dst`)."""
    req = urllib.request.Request(url, headers={"User-Agent": "torch.hub"})
    with urllib.request.urlopen(req) as u, _atomic_file(os.path.expanduser(dst)) as f:
        content_length = u.info().get_all("Content-Length")
        file_size = int(content_length[0]) if content_length else None
        sha256 = hashlib.sha256() if hash_prefix is not None else None
        with tqdm(total=file_size, disable=not progress, unit="B", unit_scale=True,
                  unit_divisor=1024) as pbar:
            while True:
                buffer = u.read(READ_DATA_CHUNK)
                if len(buffer) == 0:
                    break
                f.write(buffer)
                if sha256 is not None:
                    sha256.update(buffer)
                pbar.update(len(buffer))
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(
                    f'invalid hash value (expected "{hash_prefix}", got "{digest}")')

def _is_legacy_zip_format(filename):
    # before torch 1.6 hub accepted a zip (made by hand) holding one torch.save file
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor "
                  "of default zipfile format introduced in 1.6. Please redo torch.save() to save "
                  "it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        _safe_extract_zip(f, model_dir)
    # (a file of torch's pre-1.6 pickle format inside is refused by jitensor.load, saying so)
    return _load_checkpoint(os.path.join(model_dir, members[0].filename),
                            map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False):
    """Download the checkpoint at `url` into `model_dir` (default ``get_dir()/checkpoints``)
    unless a file of its name (`file_name`, else the URL's) is there already, and return
    ``jitensor.load(file, map_location=map_location, weights_only=weights_only)``.
    check_hash: the file name is ``name-<sha256 prefix>.ext`` and the download must match that
    prefix. weights_only defaults to False, as in torch.hub: pass True for files you do not
    trust."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load_checkpoint(cached_file, map_location=map_location, weights_only=weights_only)
