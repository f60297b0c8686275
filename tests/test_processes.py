"""Work spread over worker processes (forensics/render/processes.py): fresh interpreters fed
tasks by name, results in the tasks' order, failures raised here as they were raised there."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from forensics.errors import InputError, decode_utf8
from forensics.render.processes import Workers


def test_results_come_back_in_the_order_of_the_tasks():
    # the first task is by far the longest: the other process finishes the rest first
    tasks = [(range(3_000_000),), *((range(n),) for n in range(20))]
    with Workers(2, os.getpid, ()) as workers:
        results = list(workers.map(sum, tasks))
    assert results == [sum(range(3_000_000)), *(n * (n - 1) // 2 for n in range(20))]


def test_the_tasks_run_in_other_processes_each_set_up_once():
    with Workers(2, os.getpid, ()) as workers:
        pids = set(workers.map(os.getpid, [()] * 40))
    assert os.getpid() not in pids
    assert 1 <= len(pids) <= 2


def test_no_task_gives_no_result():
    with Workers(2, os.getpid, ()) as workers:
        assert list(workers.map(sum, [])) == []


def test_an_exception_raised_by_the_work_is_raised_here():
    with Workers(2, os.getpid, ()) as workers, pytest.raises(ValueError, match="'x'"):
        list(workers.map(int, [("1",), ("x",), ("3",)]))


def test_a_forensics_error_keeps_where_and_fix_across_processes():
    with Workers(1, os.getpid, ()) as workers, pytest.raises(InputError) as caught:
        list(workers.map(decode_utf8, [(b"ok\n\xff", "gateway.jsonl", InputError)]))
    assert caught.value.where == "gateway.jsonl:2"
    assert caught.value.fix == "save the file as UTF-8"


def test_a_failing_set_up_is_raised_by_the_first_task():
    with Workers(1, int, ("x",)) as workers, pytest.raises(ValueError, match="'x'"):
        list(workers.map(sum, [((1, 2),)]))


def test_a_process_that_stops_without_a_reply_is_an_error():
    with Workers(1, os.getpid, ()) as workers, pytest.raises(RuntimeError, match="status 3"):
        list(workers.map(os._exit, [(3,)]))


def test_a_print_in_the_work_does_not_reach_the_replies():
    with Workers(1, os.getpid, ()) as workers:
        assert list(workers.map(print, [("a line",), ("another",)])) == [None, None]


def test_a_script_without_a_main_guard_is_not_run_again_in_the_workers(tmp_path):
    """multiprocessing's spawn runs the caller's script again in each child (unguarded code
    and all); these workers only import the module of the work."""
    log = tmp_path / "runs.txt"
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os
            from forensics.render.processes import Workers
            with open({str(log)!r}, "a") as f:
                f.write("ran\\n")
            with Workers(2, os.getpid, ()) as workers:
                print(sum(workers.map(abs, [(-1,), (-2,), (-3,)])))
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout == "6\n"
    assert log.read_text() == "ran\n"
