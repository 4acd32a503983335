"""torch.multiprocessing.spawn: run ``fn(i, *args)`` in processes i = 0..nprocs-1; the first
failure stops the others and is raised in the parent with the child's traceback."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import traceback


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process failed with an exception raised by `fn`."""


class ProcessExitedException(ProcessException):
    """A process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent after another process failed
    except Exception:
        # a file, not a queue: a one-shot message that cannot deadlock (torch's reasoning)
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait for the processes: True once all exited cleanly, False if some still run after
        `timeout`; on a failure, stop the rest and raise ProcessRaisedException (with the
        child's traceback) or ProcessExitedException."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.join(grace_period or 0)
            if p.is_alive():
                p.terminate()
            p.join(30)
            if p.is_alive():
                p.kill()
                p.join()
        process, path = self.processes[failed], self.error_files[failed]
        if not os.access(path, os.R_OK):
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {failed:d} terminated with signal {name}",
                                             failed, process.pid, code, name)
            raise ProcessExitedException(f"process {failed:d} terminated with exit code "
                                         f"{code:d}", failed, process.pid, code)
        with open(path, "rb") as f:
            trace = pickle.load(f)
        os.unlink(path)
        raise ProcessRaisedException(f"\n\n-- Process {failed:d} terminated with the following "
                                     f"error:\n{trace}", failed, process.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``fn(i, *args)`` in `nprocs` processes of `start_method`; with `join`, wait for
    them (raising the first failure), else return their ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="jitensor-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)  # its existence is the signal that the child failed
        process = context.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(path)
    ctx = ProcessContext(processes, error_files)
    if not join:
        return ctx
    while not ctx.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: `start_processes` with the 'spawn' start method (others
    are accepted with torch's warning)."""
    if start_method != "spawn":
        import warnings
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      f"To use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
