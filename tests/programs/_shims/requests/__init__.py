"""A `requests` stand-in for tests/programs (jitensor's own code, not requests').

pytorch/examples' gcn and gat download the Cora citation graph with
``requests.get(url, stream=True)`` and untar ``.raw``. Here `get` serves a synthetic graph in
Cora's format instead, never touching the network: 1,800 papers (the programs split off 1,500
for test and validation) with 60 binary word features, 5 classes and ~5,000 citations, drawn
by NumPy from a fixed seed, so jitensor and torch read the same graph."""
import io
import tarfile

import numpy as np

__version__ = "0.0-jitensor-tests-shim"
CORA = "https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz"


def _cora():
    rng = np.random.default_rng(0)
    n, words, classes = 1800, 60, 5
    ids = rng.choice(10**6, n, replace=False)
    label = rng.integers(0, classes, n)
    # a class's papers use its own words more, and cite papers of their class more
    p = np.where(np.arange(words) % classes == label[:, None], 0.3, 0.03)
    features = (rng.random((n, words)) < p).astype(int)
    features[features.sum(1) == 0, 0] = 1
    src = rng.integers(0, n, 5000)
    same = rng.random(5000) < 0.8
    dst = np.array([rng.choice(np.flatnonzero(label == label[s])) if k else rng.integers(0, n)
                    for s, k in zip(src, same)])
    keep = src != dst
    content = "".join(f"{i}\t" + "\t".join(map(str, f)) + f"\tTopic_{c}\n"
                      for i, f, c in zip(ids, features, label))
    cites = "".join(f"{ids[a]}\t{ids[b]}\n" for a, b in zip(src[keep], dst[keep]))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in (("cora/cora.content", content), ("cora/cora.cites", cites)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Response:
    def __init__(self, body):
        self.raw, self.status_code = io.BytesIO(body), 200

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.raw.close()


def get(url, stream=False, **kwargs):
    if url != CORA:
        raise ConnectionError(f"tests/programs' requests stand-in serves only {CORA}, not {url}")
    return Response(_cora())
