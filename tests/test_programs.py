"""Well-known public PyTorch programs, written by others, run unchanged on jitensor (issue #30).

tests/programs/ holds copies of them (its README.md names each one's repository, path, commit
and licence, and what was replaced: only dataset downloads, by synthetic data). Each test copies
a program into a temporary folder and runs it at tiny sizes (through its own command line or
config) with `python -m jitensor.run`, in a subprocess, and checks what it prints and writes.
Where torch is installed the same runs go through real torch too: they must pass there (so the
program, arguments and data are right) and print the same lines with the numbers masked (the
two libraries' random streams differ, so their numbers do); and `tests/programs/_harness.py`
takes one training step of each program's own model under both libraries from the same weights,
compared here: loss, gradients, parameters after the program's update, eval-mode outputs.

A program that stops at something jitensor lacks carries that gap as a strict xfail, raised
only when its run fails with that gap's error: a failure for any other reason fails, and the
test flips to a failure (XPASS, strict) once the gap is closed, to have its mark removed."""
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

PROGRAMS = Path(__file__).resolve().parent / "programs"
SHIMS = PROGRAMS / "_shims"  # torchvision and requests stand-ins (synthetic data sets)
TIMEOUT = 600  # seconds per run: a cold kernel cache compiles for minutes, a warm one seconds


class MissingFeature(AssertionError):
    """A program stopped at the jitensor gap its xfail names."""


@dataclass(frozen=True)
class Run:
    script: str  # relative to the program's working folder
    args: tuple = ()
    expect: tuple = ()  # regexes (multiline) stdout must match
    files: tuple = ()  # what the run must leave, relative to the working folder
    torch: bool = True  # False: a data step in plain Python, run without either library
    env: tuple = ()  # (name, value) pairs added to the environment


@dataclass(frozen=True)
class Program:
    folder: str  # under tests/programs
    runs: tuple
    cwd: str = "."  # the working folder, inside the copy
    shims: bool = False  # the program imports torchvision or requests: give it _shims
    path: tuple = ()  # folders of the copy put on PYTHONPATH (as `pip install -e .` would)
    same: str = ""  # regex of the stdout lines compared with torch's ("": every line)
    gap: tuple = ()  # (the missing jitensor feature, regex of its error): strict xfail
    needs: tuple = ()  # modules real torch needs for this program (skipped without them)


def _makemore_runs():
    tiny = ("-i", "names.txt", "--num-workers", "0", "--n-layer", "2", "--n-head", "2",
            "--n-embd", "16", "--n-embd2", "16", "--batch-size", "8")
    runs = [Run("synthetic_names.py", torch=False, files=("names.txt",))]
    for kind in ("transformer", "bigram", "mlp", "rnn", "gru", "bow"):
        runs.append(Run("makemore.py", tiny + ("-o", "out_" + kind, "--max-steps", "3",
                                               "--type", kind),
                        expect=(r"^model #params: \d+", r"^step 0 \| loss \d")))
    runs.append(Run("makemore.py", tiny + ("-o", "out", "--max-steps", "501", "--type", "bigram"),
                    expect=(r"^\d+ samples that are new:", r"^step 500 train loss: \d.* test loss"),
                    files=("out/model.pt",)))
    runs.append(Run("makemore.py", tiny + ("-o", "out", "--type", "bigram", "--sample-only"),
                    expect=(r"^resuming from existing model", r"^\d+ samples that are new:")))
    return tuple(runs)


_NANOGPT = ("--device=cpu", "--compile=False", "--dtype=float32", "--dataset=synthetic_char",
            "--n_layer=2", "--n_head=2", "--n_embd=32", "--block_size=16", "--batch_size=4",
            "--gradient_accumulation_steps=1", "--eval_interval=2", "--eval_iters=2",
            "--warmup_iters=2", "--lr_decay_iters=4", "--out_dir=out")
_WLM = ("--data", "data/synthetic", "--emsize", "16", "--nhid", "16", "--nlayers", "2")
_WLM_MAIN = {"RNN_TANH": (), "RNN_RELU": (), "LSTM": ("--tied",), "GRU": ("--use-optimizer",),
             "Transformer": ()}
_DCGAN = ("--dataset", "fake", "--dry-run", "--workers", "0", "--batchSize", "4", "--nz", "8",
          "--ngf", "4", "--ndf", "4", "--manualSeed", "1", "--outf", "out")
_MNIST = ("--epochs", "1", "--dry-run", "--batch-size", "16", "--test-batch-size", "32",
          "--save-model")

PROGRAMS_RUN = {
    "nanogpt": Program(
        "nanogpt",
        (Run("data/synthetic_char/prepare.py", torch=False, expect=(r"^vocab size \d+",)),
         Run("train.py", _NANOGPT + ("--max_iters=4",), files=("out/ckpt.pt",),
             expect=(r"^step 4: train loss \d+\.\d+, val loss \d+\.\d+", r"^iter 4: loss \d")),
         Run("train.py", _NANOGPT + ("--init_from=resume", "--max_iters=6", "--lr_decay_iters=6"),
             expect=(r"^Resuming training from out", r"^iter 6: loss \d")))),
    "makemore": Program(
        "makemore", _makemore_runs(),
        same=r"^(step \d+ \||number of|max word|split up|dataset determined|model #params|resum)",
        needs=("tensorboard",)),
    "mingpt_adder": Program(
        "mingpt",
        (Run("adder.py", ("--data.ndigit=1", "--trainer.max_iters=3", "--trainer.num_workers=0",
                          "--trainer.batch_size=16"),
             expect=(r"^iter_dt .*; iter 0: train loss \d", r"^train final score: \d+/80 ",
                     r"^test final score: \d+/20 "),
             files=("out/adder/config.json", "out/adder/args.txt")),),
        cwd="projects/adder", path=(".",), same=r"^(?!GPT claims|saving model)"),
    "mnist": Program(
        "mnist",
        (Run("main.py", _MNIST, files=("mnist_cnn.pt",),
             expect=(r"^Train Epoch: 1 \[0/64 \(0%\)\]\tLoss: \d",
                     r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/32 ")),),
        shims=True),
    "mnist_rnn": Program(
        "mnist_rnn",
        (Run("main.py", _MNIST, files=("mnist_rnn.pt",),
             expect=(r"^Train Epoch: 1 \[0/64 \(0%\)\]\tLoss: \d",
                     r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/32 ")),),
        shims=True),
    "mnist_hogwild": Program(
        "mnist_hogwild",
        # two spawned processes train the one model in shared memory (Hogwild), then the
        # parent tests it; the children's lines interleave, so only the test line is compared
        (Run("main.py", ("--epochs", "1", "--dry-run", "--batch-size", "16",
                         "--test-batch-size", "32", "--num-processes", "2", "--save_model"),
             files=("MNIST_hogwild.pt",),
             expect=(r"Train Epoch: 1 \[0/64 \(0%\)\]\tLoss: \d",
                     r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/32 ")),),
        shims=True, same=r"^Test set"),
    "mnist_forward_forward": Program(
        "mnist_forward_forward",
        (Run("main.py", ("--epochs", "3", "--train_size", "64", "--test_size", "32",
                         "--log-interval", "1", "--save_model"), files=("mnist_ff.pt",),
             expect=(r"^training layer:  1", r"^train error: \d", r"^test error: \d")),),
        shims=True),
    "vae": Program(
        "vae",
        (Run("main.py", ("--batch-size", "16", "--epochs", "1", "--log-interval", "1"),
             expect=(r"^Train Epoch: 1 \[48/64 \(75%\)\]\tLoss: \d",
                     r"^====> Epoch: 1 Average loss: \d", r"^====> Test set loss: \d"),
             files=("results/reconstruction_1.png", "results/sample_1.png")),),
        shims=True),
    "dcgan": Program(
        "dcgan",
        (Run("main.py", _DCGAN, expect=(r"^\[0/1\]\[0/250\] Loss_D: \d+\.\d+ Loss_G: \d",),
             files=("out/real_samples.png", "out/fake_samples_epoch_000.png",
                    "out/netG_epoch_0.pth", "out/netD_epoch_0.pth")),
         Run("main.py", _DCGAN + ("--netG", "out/netG_epoch_0.pth", "--netD",
                                  "out/netD_epoch_0.pth"),
             expect=(r"^\[0/1\]\[0/250\] Loss_D: \d+\.\d+ Loss_G: \d",))),
        shims=True),
    "word_language_model": Program(
        "word_language_model",
        (Run("synthetic_corpus.py", torch=False, files=("data/synthetic/train.txt",)),
         *[run for kind, flags in _WLM_MAIN.items() for run in (
             Run("main.py", _WLM + flags + ("--model", kind, "--batch_size", "4", "--bptt", "8",
                                            "--epochs", "1", "--dry-run", "--save",
                                            f"model_{kind}.pt"),
                 expect=(r"^\| end of epoch +1 \| .* valid ppl +\d",
                         r"^\| End of training \| test loss +\d")),
             Run("generate.py", ("--data", "data/synthetic", "--checkpoint", f"model_{kind}.pt",
                                 "--words", "30", "--log-interval", "10", "--outf",
                                 f"generated_{kind}.txt"),
                 expect=(r"^\| Generated 20/30 words",), files=(f"generated_{kind}.txt",)))])),
    "word_language_model_generate": Program(
        "word_language_model",
        (Run("synthetic_corpus.py", torch=False, files=("data/synthetic/train.txt",)),
         *[run for kind in ("LSTM", "GRU", "Transformer") for run in (
             Run("untrained_checkpoint.py", _WLM + ("--model", kind, "--save", f"{kind}.pt"),
                 expect=(r"^saved an untrained",)),
             Run("generate.py", ("--data", "data/synthetic", "--checkpoint", f"{kind}.pt",
                                 "--words", "30", "--log-interval", "10", "--outf",
                                 f"generated_{kind}.txt"),
                 expect=(r"^\| Generated 20/30 words",), files=(f"generated_{kind}.txt",)))])),
    "time_sequence_prediction": Program(
        "time_sequence_prediction",
        (Run("generate_sine_wave.py", files=("traindata.pt",)),
         Run("synthetic_traindata.py", files=("traindata.pt",)),
         # (torch >= 2.6 loads weights only by default, and traindata.pt is a pickled NumPy
         # array: this switch is how the example runs on torch today)
         Run("train.py", ("--steps", "1"), env=(("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1"),),
             expect=(r"^STEP:  0", r"^test loss: \d"), files=("predict0.pdf",))),
        same=r"^(STEP|test loss)"),
    "gcn": Program(
        "gcn",  # sparse COO tensors: sparse_coo_tensor, to_sparse, dense + sparse, spmm
        (Run("main.py", ("--epochs", "3", "--val-every", "1", "--no-accel"),
             expect=(r"^Epoch: 0003 \(\d+\.\d+s\) loss_train: \d+\.\d+ acc_train: \d",
                     r"^Test set results: loss \d+\.\d+ accuracy \d")),),
        shims=True),
    "gat": Program(
        "gat",  # graph attention: torch.empty(size=...), masked attention over a dense graph
        (Run("main.py", ("--epochs", "2", "--val-every", "1", "--hidden-dim", "8",
                         "--num-heads", "2", "--no-accel"),
             expect=(r"^Epoch: 0002 \(\d+\.\d+s\) loss_train: \d+\.\d+ acc_train: \d",
                     r"^Test set results: loss \d+\.\d+ accuracy \d")),),
        shims=True),
    "regression": Program(
        "regression",
        (Run("main.py", expect=(r"^Loss: 0\.000\d+ after \d+ batches",
                                r"^==> Learned function:\ty = [-+]\d+\.\d\d x\^1 ",
                                r"^==> Actual function:\ty = ")),)),
}

# _harness.py's cases (one training step from torch's weights), by the program they come from
STEP_CASES = {
    "nanogpt": ("nanogpt", "nanogpt_bias"),
    "makemore": tuple("makemore_" + k for k in ("transformer", "bigram", "mlp", "rnn", "gru",
                                                 "bow")),
    "mingpt_adder": ("mingpt",),
    "mnist": ("mnist",),
    "mnist_rnn": ("mnist_rnn",),
    "mnist_forward_forward": ("mnist_forward_forward",),
    "vae": ("vae",),
    "dcgan": ("dcgan",),
    "word_language_model": tuple("word_language_model_" + k for k in _WLM_MAIN),
    "time_sequence_prediction": ("time_sequence_prediction",),
    "gcn": ("gcn",),
    "gat": ("gat",),
}
# the gaps that stop a harness case under jitensor, where not its program's run's gap
STEP_GAPS = {"nanogpt": (), "word_language_model": (), "time_sequence_prediction": ()}


def _gap(name, gaps=None):
    gap = PROGRAMS_RUN[name].gap if gaps is None else gaps
    if not gap:
        return ()
    return (pytest.mark.xfail(strict=True, raises=MissingFeature, reason=gap[0]),)


def _env(program, copy):
    env = dict(os.environ)
    paths = [str(REPO)] + [str(SHIMS)] * program.shims + [str(copy / p) for p in program.path]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # (nothing written into the checkout)
    env["MPLBACKEND"] = "Agg"
    env.pop("JITENSOR_DEBUG_EMPTY", None)
    # On the CPU, under both libraries: a program asks `torch.cuda.is_available()` or
    # `torch.accelerator.is_available()`, which numba's simulator (NUMBA_ENABLE_CUDASIM, set by
    # conftest.py without a GPU) answers True, and a GPU would make the runs differ.
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env["NUMBA_DISABLE_CUDA"] = "1"
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _text(output):
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def _run_program(name, lib, base):
    """Copy program `name` into base and run its runs under lib, 'jitensor' or 'torch', until
    one fails: ([(run, CompletedProcess)], working folder)."""
    program = PROGRAMS_RUN[name]
    copy = base / lib / name / program.folder
    shutil.copytree(PROGRAMS / program.folder, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    cwd = copy / program.cwd
    results = []
    for run in program.runs:
        head = [sys.executable]
        if run.torch and lib == "jitensor":
            head += ["-m", "jitensor.run"]
        try:
            done = subprocess.run([*head, run.script, *run.args], cwd=cwd, capture_output=True,
                                  text=True, timeout=TIMEOUT, check=False,
                                  env={**_env(program, copy), **dict(run.env)})
        except subprocess.TimeoutExpired as e:
            done = subprocess.CompletedProcess(e.cmd, -9, _text(e.stdout), _text(e.stderr) +
                                               f"\n(killed after {TIMEOUT} s)")
        results.append((run, done))
        if done.returncode:
            break
    return results, cwd


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """ran(name, lib): the runs of program `name` under lib, each program run once per module
    (the torch comparison reuses the jitensor run)."""
    base, cache = tmp_path_factory.mktemp("programs"), {}

    def get(name, lib):
        if (name, lib) not in cache:
            cache[name, lib] = _run_program(name, lib, base)
        return cache[name, lib]
    return get


def _tail(text, n=4000):
    return text if len(text) <= n else "..." + text[-n:]


def _check(name, results, cwd, lib):
    gap = PROGRAMS_RUN[name].gap
    for run, done in results:
        what = f"{lib}: {run.script} {' '.join(run.args)}"
        if done.returncode:
            error = MissingFeature if gap and re.search(gap[1], done.stderr) else AssertionError
            raise error(f"{what} exited {done.returncode}:\n{_tail(done.stderr)}")
        for pattern in run.expect:
            assert re.search(pattern, done.stdout, re.MULTILINE), \
                f"{what}: no line matches {pattern!r} in its output:\n{_tail(done.stdout)}"
        for path in run.files:
            assert (cwd / path).is_file(), f"{what} did not write {path}"


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b")


def _lines(stdout, same):
    """stdout's lines selected by `same`, numbers masked and spaces squeezed."""
    return [re.sub(r"\s+", " ", _NUMBER.sub("#", line)).strip()
            for line in stdout.splitlines() if not same or re.search(same, line)]


@pytest.mark.parametrize("name", [pytest.param(n, marks=_gap(n)) for n in PROGRAMS_RUN])
def test_program_runs_on_jitensor(name, ran):
    results, cwd = ran(name, "jitensor")
    _check(name, results, cwd, "jitensor")


@pytest.mark.torch
@pytest.mark.parametrize("name", list(PROGRAMS_RUN))
def test_program_prints_what_torch_prints(name, ran):
    """The same runs under real torch pass the same checks (so the program, its arguments and
    data are right), and print the same lines as under jitensor, numbers masked."""
    pytest.importorskip("torch")
    program = PROGRAMS_RUN[name]
    for module in program.needs:
        pytest.importorskip(module)
    theirs, cwd = ran(name, "torch")
    _check(name, theirs, cwd, "torch")
    mine, _ = ran(name, "jitensor")
    if len(mine) < len(theirs) or mine[-1][1].returncode:
        why = program.gap[0] if program.gap else "see test_program_runs_on_jitensor"
        pytest.skip(f"the jitensor run fails ({why}): nothing to compare")
    for (run, a), (_, b) in zip(mine, theirs, strict=True):
        assert _lines(a.stdout, program.same) == _lines(b.stdout, program.same), \
            f"{run.script} {' '.join(run.args)} prints otherwise than under torch"


@pytest.fixture(scope="module")
def stepped(tmp_path_factory):
    """stepped(program): (torch's, jitensor's) output folder of _harness.py for the program's
    cases, each side run once per module."""
    base, cache = tmp_path_factory.mktemp("steps"), {}

    def get(name):
        if name not in cache:
            theirs, mine = base / name / "torch", base / name / "jitensor"
            for lib, out, more in (("torch", theirs, ()), ("jitensor", mine,
                                                            ("--weights", str(theirs)))):
                done = subprocess.run(
                    [sys.executable, str(PROGRAMS / "_harness.py"), lib, str(out), *more,
                     *STEP_CASES[name]], cwd=base, capture_output=True, text=True,
                    timeout=TIMEOUT, check=False, env=_env(PROGRAMS_RUN[name], base))
                assert done.returncode == 0, f"_harness.py {lib}:\n{_tail(done.stderr)}"
            cache[name] = theirs, mine
        return cache[name]
    return get


def _close(key, theirs, mine):
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype, \
        (key, mine.shape, mine.dtype, theirs.shape, theirs.dtype)
    if theirs.dtype.kind not in "fc":
        np.testing.assert_array_equal(mine, theirs, err_msg=key)
        return
    if theirs.dtype == np.float64:
        rtol, atol = 1e-9, 1e-12
    elif key.startswith("after/"):  # (Adam's first step divides tiny gradients by their size)
        rtol, atol = 1e-4, 5e-5
    else:
        rtol, atol = 1e-5, 1e-6
    if theirs.size:
        err, scale = np.abs(mine - theirs).max(), np.abs(theirs).max()
        assert err <= atol + rtol * scale, f"{key}: max |jitensor - torch| {err:.3g} " \
                                           f"at scale {scale:.3g}"


@pytest.mark.torch
@pytest.mark.parametrize("name, case", [
    pytest.param(name, case, marks=_gap(name, STEP_GAPS.get(name)), id=case)
    for name, cases in STEP_CASES.items() for case in cases])
def test_one_step_matches_torch(name, case, stepped):
    """The program's own model, loss and update, from torch's weights: the loss, every
    gradient, the parameters and buffers after the update and the eval-mode outputs agree."""
    pytest.importorskip("torch")
    for module in PROGRAMS_RUN[name].needs:
        pytest.importorskip(module)
    theirs, mine = stepped(name)
    failed = theirs / f"{case}.err"
    assert not failed.exists(), f"the case fails under torch:\n{failed.read_text()}"
    failed = mine / f"{case}.err"
    if failed.exists():
        gap = STEP_GAPS.get(name, PROGRAMS_RUN[name].gap)
        text = failed.read_text()
        raise (MissingFeature if gap and re.search(gap[1], text) else AssertionError)(
            f"the case fails under jitensor:\n{_tail(text)}")
    a, b = np.load(theirs / f"{case}.npz"), np.load(mine / f"{case}.npz")
    assert sorted(b.files) == sorted(a.files)
    for key in a.files:
        _close(key, a[key], b[key])
