"""Failures from Python give one clear line: an exception in a kernel (a clean
failure of the run, its traceback on stderr, no crash or hang), a wrong key or
value type, and a call outside its context."""

import pytest

import tessera
from conftest import run_python

KERNEL_RAISES = """
import tessera
ctx = tessera.Context(workers=2, mode="embedded")
t = ctx.table("t", partitions=4, accum="sum")

@ctx.kernel
def boom(task, args):
    if task.instance == 2:
        raise ValueError("bad vertex 17")
    t.update(task.instance, 1.0)

def control(c):
    c.run("boom", locality=t)
    try:
        c.barrier()
    except tessera.KernelError as e:
        print("caught:", e)
    c.run("boom", locality=t)   # the runtime is still usable
    c.barrier()

ctx.main(control)
"""


def test_kernel_exception_fails_run_cleanly(tmp_path):
    script = tmp_path / "raises.py"
    script.write_text(KERNEL_RAISES)
    r = run_python([str(script)], timeout=30)
    assert r.returncode == 1
    assert "Traceback" in r.stderr and 'raise ValueError("bad vertex 17")' in r.stderr
    caught = [ln for ln in r.stdout.splitlines() if ln.startswith("caught:")]
    assert len(caught) == 1
    assert "python kernel boom (instance 2) raised ValueError: bad vertex 17" in caught[0]
    # The uncaught second failure ends the program with the same one line.
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("tessera.KernelError:") and "bad vertex 17" in last


def test_wrong_types_and_calls_outside_context():
    with tessera.Context(workers=1, mode="embedded") as ctx:
        t = ctx.table("t", partitions=2, value="int")
        d = ctx.table("d", key_count=10, partitions=2, accum="sum")
        kept = []

        @ctx.kernel
        def keep(task, args):
            kept.append(task)

        with pytest.raises(tessera.Error, match=r"run\(\) is for the control function"):
            ctx.run("keep", instances=1)

        def control(c):
            with pytest.raises(TypeError, match="table 't' keys are int, not str"):
                t.put("seven", 1)
            with pytest.raises(TypeError, match="table 't' values are int, not float"):
                t.put(7, 1.5)
            with pytest.raises(OverflowError, match="uint64"):
                d.get(-1)
            with pytest.raises(tessera.Error, match="must come before Context.main"):
                ctx.table("late")
            c.run("keep", instances=1)
            c.barrier()
            with pytest.raises(tessera.Error, match="task used outside its kernel"):
                kept[0].instance
            with pytest.raises(tessera.Error, match="no kernel named 'nope'"):
                c.run("nope", instances=1)

        ctx.main(control)
    with pytest.raises(tessera.Error, match="finalized"):
        t.get(1)


def test_bulk_shape_errors():
    with tessera.Context(workers=1, mode="embedded") as ctx:
        d = ctx.table("d", key_count=10, partitions=2, accum="sum")

        def control(c):
            with pytest.raises(ValueError, match="3 keys but 2 values"):
                d.update_many([1, 2, 3], [1.0, 2.0])
            with pytest.raises(ValueError, match="offsets must be 3 ascending"):
                d.update_fanout([1, 2], [0, 5, 2], [1.0, 2.0])
            with pytest.raises(tessera.Error, match="key"):
                d.update_many([10], [1.0])  # outside the dense table

        ctx.main(control)
