"""Programs forked from a zygote that imported their modules once (core.spawn.zygote, and tests/forked.py, which runs
one to its end): real processes, real forks.

The jobs and programs here import nothing heavy (the zygote preloads `colorsys`, which nothing else here imports),
so each test takes a second; the engine's own workers and the CLI (TensorFlow preloaded) run through the same paths
in every other test (tests/conftest.py's run_cli).
"""

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from multiprocessing.connection import Pipe

import pytest

from core.runner import Runner
from core.runner.kind import Kind
from core.runner.protocol import Exit, Hello
from core.spawn import zygote
from core.spawn.messages import Fork
from tests import forked
from tests.conftest import ROOT, wait_until

PRELOADED = "colorsys"


@dataclass(frozen=True)
class Look:
    """A job that says what its worker process sees; exit_code: it ends its process that way instead."""

    exit_code: int | None = None


def look(config: Look, on_item, should_stop, run_id):
    if config.exit_code is not None:
        os._exit(config.exit_code)
    return {
        "preloaded": PRELOADED in sys.modules,  # nothing in this worker imported it: its zygote did, before the fork
        "parent": os.getppid(),
        "env": os.environ.get("TFDASH_ZYGOTE_TEST"),
        "cwd": os.getcwd(),
    }


KINDS = {Look: Kind(look, preload=(PRELOADED,))}


def looked(config: Look = Look()):
    with Runner(KINDS) as runner:
        return runner.wait(runner.submit(config), 60)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except FileNotFoundError:
        return False


def test_a_worker_is_forked_after_its_kinds_imports_with_the_parents_environment_and_folder_of_the_moment(
    tmp_path, monkeypatch
):
    assert looked().state == "completed"  # the process's zygote exists from here on
    monkeypatch.setenv("TFDASH_ZYGOTE_TEST", "set after the zygote started")
    monkeypatch.chdir(tmp_path)
    status = looked()
    assert status.state == "completed", status.error
    assert status.result == {
        "preloaded": True,
        "parent": zygote._zygote.proc.pid,  # the zygote's child, not this process's
        "env": "set after the zygote started",
        "cwd": str(tmp_path),
    }


def test_another_import_environment_gets_a_zygote_of_its_own_and_tfdash_zygote_0_a_fresh_interpreter(
    tmp_path, monkeypatch
):
    first = looked().result["parent"]
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))  # read when keras is imported: the first zygote's import did not
    again = looked().result
    assert again["preloaded"] and again["parent"] not in (first, os.getpid())
    monkeypatch.setenv(zygote.USE_ENV, "0")
    fresh = looked().result
    assert fresh["parent"] == os.getpid() and not fresh["preloaded"]


def test_a_forked_worker_that_exits_is_said_with_its_code_as_a_fresh_one_is():
    status = looked(Look(exit_code=3))
    assert status.state == "interrupted"
    assert status.error.startswith("The worker process (pid ") and "exited (code 3)" in status.error, status.error


def serving(own: zygote.Zygote, theirs) -> zygote.Child:
    """A worker (core.runner.serve) forked by `own` on its end of a pipe, as zygote.start forks one."""
    fork = Fork("core.runner.serve", (), dict(os.environ), os.getcwd(), pipe=True)
    return own.fork((PRELOADED,), fork, (theirs.fileno(),))


def test_when_a_zygote_dies_its_children_die_with_it_and_say_so():
    own = zygote.Zygote()  # not the process's: the tests' shared runners keep workers forked from that one
    mine, theirs = Pipe()
    child = serving(own, theirs)
    theirs.close()
    mine.send(Hello(list(sys.path), []))
    pid = child.pid
    assert mine.recv().pid == pid  # Ready: the child serves its pipe
    assert child.poll() is None
    own.proc.kill()
    assert child.wait(30) == -signal.SIGKILL
    wait_until(lambda: not alive(pid), 30, "the child's end")
    assert mine.poll(5)
    wait_until(lambda: not own.serves(), 5, "the zygote counted as gone")
    own.proc.wait(5)


def test_a_retired_zygote_forks_no_more_and_exits_after_its_last_child():
    own = zygote.Zygote()
    mine, theirs = Pipe()
    child = serving(own, theirs)
    theirs.close()
    mine.send(Hello(list(sys.path), []))
    assert mine.recv().pid == child.pid
    own.retire()
    assert not own.serves() and own.proc.poll() is None  # its child lives on, and so does it
    mine.send(Exit())
    assert child.wait(30) == 0
    assert own.proc.wait(30) == 0  # then it exits


# A program that says what it was started with: its argv, a variable, its folder, what its stdin holds, whether its
# zygote had imported PRELOADED; then exits with the code it was given.
SAYS = "tests.data.says"


def test_run_captures_a_forked_programs_output_code_environment_and_folder(tmp_path):
    env = dict(os.environ, TFDASH_ZYGOTE_TEST="given")
    done = forked.run((PRELOADED,), SAYS, ("7", "two words"), env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 7
    said = dict(line.split("=", 1) for line in done.stdout.splitlines())
    assert said == {
        "argv": "['7', 'two words']",
        "env": "given",
        "cwd": str(tmp_path),
        "stdin": "''",
        "preloaded": "True",
        "main": "__main__",
    }
    assert done.stderr == "to stderr\n"
    assert zygote._zygote.serves() and done.args[1:3] == ["-m", SAYS]


def test_run_in_another_import_environment_is_a_fresh_interpreter_and_a_timeout_kills_the_program(tmp_path):
    forked.run((PRELOADED,), SAYS, ("0",), cwd=ROOT, timeout=60)  # this process's zygote exists
    env = dict(os.environ, KERAS_HOME=str(tmp_path), PYTHONPATH=str(ROOT))  # read when keras is imported
    done = forked.run((PRELOADED,), SAYS, ("0",), env=env, cwd=ROOT, timeout=60)
    assert "preloaded=False" in done.stdout and done.returncode == 0  # a fresh interpreter imported nothing more
    began = os.times().elapsed
    with pytest.raises(subprocess.TimeoutExpired):
        forked.run((PRELOADED,), SAYS, ("sleep",), cwd=ROOT, timeout=1)
    assert os.times().elapsed - began < 30  # killed, not waited for


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def served_after(own: zygote.Zygote, modules: tuple[str, ...]):
    """A worker `own` starts once it has imported `modules`, ready on the returned end of its pipe."""
    mine, theirs = Pipe()
    fork = Fork("core.runner.serve", (), dict(os.environ), os.getcwd(), pipe=True)
    child = own.fork(modules, fork, (theirs.fileno(),))
    theirs.close()
    mine.send(Hello(list(sys.path), []))
    assert mine.recv().pid == child.pid
    return child, mine


def test_a_zygote_with_a_second_thread_refuses_to_fork_the_program_starts_fresh_and_its_children_run_on(monkeypatch):
    own = zygote.Zygote()
    before, before_end = served_after(own, (PRELOADED,))
    assert parent_of(before.pid) == own.proc.pid and own.refused is None
    after, after_end = served_after(own, ("tests.data.threads",))  # its import starts a thread in the zygote
    assert parent_of(after.pid) == os.getpid()  # a fresh interpreter of this process's
    assert own.refused.startswith("it runs 2 threads (") and not own.serves()  # named as the kernel names them
    assert before.poll() is None and alive(before.pid)  # the worker forked before the refusal runs on
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    with open(os.devnull, "rb") as stdin:
        says = own.fork((), Fork(SAYS, ("5",), dict(os.environ), str(ROOT), stdio=True), (stdin.fileno(), out_w, err_w))
    os.close(out_w)
    os.close(err_w)
    done = forked._finish(says, out_r, err_r, [SAYS], 60)  # a program on stdio pipes starts fresh on them too
    assert done.returncode == 5 and "preloaded=False" in done.stdout and done.stderr == "to stderr\n"
    monkeypatch.setattr(zygote, "_zygote", own)  # as this process's: it stays refused, no new zygote replaces it
    assert zygote.serving(None) is None and zygote.start((PRELOADED,), SAYS, (), 0) is None
    for end, child in ((after_end, after), (before_end, before)):
        end.send(Exit())
        assert child.wait(30) == 0
    assert own.proc.wait(30) == 0  # retired at the refusal: it exits after its last child


def test_a_zygote_whose_import_listed_the_devices_refuses_to_fork():
    own = zygote.Zygote()  # tf.config.list_physical_devices runs cuInit: no child of it could use a GPU
    child, end = served_after(own, ("tests.data.lists_devices",))
    assert own.refused == "TensorFlow's runtime has started or listed its devices"
    assert parent_of(child.pid) == os.getpid()
    end.send(Exit())
    assert child.wait(30) == 0
