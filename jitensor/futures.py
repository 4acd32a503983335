"""torch.futures: a Future holds the result of a call; `jt.fork` runs its function at once (as
torch does outside TorchScript) and returns a Future already complete."""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """torch.futures.Future: `wait()`/`value()` give the result (or raise the exception set),
    `then(fn)` chains a Future of fn(self), `add_done_callback(fn)` calls fn(self) once done."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._result = self._error = None
        self._callbacks = []
        self._lock = threading.Lock()

    def done(self):
        return self._done.is_set()

    def wait(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def value(self):
        if not self.done():
            raise RuntimeError("Future.value(): the future is not complete yet; call wait()")
        return self.wait()

    def _finish(self, result, error):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._result, self._error = result, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception(): expected an exception, not {type(result).__name__}")
        self._finish(None, result)

    def add_done_callback(self, callback):
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        chained = Future()

        def run(done):
            try:
                chained.set_result(callback(done))
            except Exception as error:  # the chained future carries the callback's failure
                wrapped = RuntimeError("Got the following error when running the callback: "
                                       f"{type(error).__name__}: {error}")
                wrapped.__cause__ = error
                chained.set_exception(wrapped)
        self.add_done_callback(run)
        return chained


def collect_all(futures):
    """A Future of the list of `futures`, complete when all of them are."""
    futures = list(futures)
    together, left, lock = Future(), [len(futures)], threading.Lock()

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            together.set_result(futures)
    if not futures:
        together.set_result([])
    for future in futures:
        future.add_done_callback(one_done)
    return together


def wait_all(futures):
    """The values of `futures`, waiting for each (the first exception raised)."""
    return [future.wait() for future in futures]


def fork(func, *args, **kwargs):
    """torch.jit.fork outside TorchScript: func(*args, **kwargs) runs now (an exception it
    raises propagates, as in torch) and the returned Future holds its result."""
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future):
    """The result of a Future of `fork`, waiting for it."""
    return future.wait()
