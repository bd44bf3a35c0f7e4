"""The tables face from Python: dense and hash tables, the built-in accumulators,
single-key and bulk operations, iteration and checkpoints (embedded mode)."""

import numpy as np
import pytest

import tessera


def run_job(setup, control, workers=2):
    """Create a context, call setup(ctx) -> state, run control(ctx, state) as the control function."""
    with tessera.Context(workers=workers, mode="embedded") as ctx:
        state = setup(ctx)
        out = {}

        def ctl(c):
            out["result"] = control(c, state)

        assert ctx.main(ctl) == 0
        return out["result"]


def test_accumulators_and_single_keys():
    def setup(ctx):
        t = {acc: ctx.table(acc, partitions=3, value="int", accum=acc)
             for acc in ("sum", "min", "max", "replace")}
        t["f"] = ctx.table("f", partitions=2, accum="sum")
        t["b"] = ctx.table("b", partitions=2, value="bytes")

        @ctx.kernel
        def add(task, args):
            for k in range(10):
                for acc in ("sum", "min", "max"):
                    t[acc].update(k, task.instance + k)
                t["f"].update(k, 0.5)
            t["b"].put(task.instance, bytes([task.instance]) * 300)

        return t

    def control(ctx, t):
        ctx.run("add", instances=4)
        ctx.barrier()
        t["replace"].put(-7, 3)
        t["replace"].put(-7, 4)
        t["replace"].flush()
        assert t["replace"].get(-7) == 4 and -7 in t["replace"]
        t["replace"].remove(-7)
        assert t["replace"].get(-7, None) is None
        with pytest.raises(KeyError):
            t["replace"].get(99)
        assert t["b"].get(3) == b"\x03" * 300  # longer than get's first buffer
        return ({k: t["sum"].get(k) for k in range(10)}, dict(t["min"].items()),
                dict(t["max"].items()), t["f"].get(9), t["sum"].size())

    sums, mins, maxs, f9, size = run_job(setup, control)
    assert sums == {k: sum(i + k for i in range(4)) for k in range(10)}
    assert mins == {k: k for k in range(10)} and maxs == {k: 3 + k for k in range(10)}
    assert f9 == 2.0 and size == 10


def test_dense_bulk_operations():
    n = 10000

    def setup(ctx):
        t = ctx.table("d", key_count=n, partitions=4, accum="sum")

        @ctx.kernel
        def scatter(task, args):
            keys = np.arange(n, dtype=np.uint64)
            t.update_many(keys, np.full(n, args["w"]))
            # vertex i of 3 sends args["w"] * (i+1) to its out-neighbours
            t.update_fanout([0, 1, 2, 5], [0, 2, 2, 4], np.array([1.0, 2.0, 3.0]) * args["w"])
            first, values = t.read_partition(task.instance)
            assert len(values) == t.dense_range(task.instance)[1]

        return t

    def control(ctx, t):
        t.put_range(0, np.arange(n, dtype=float))
        t.flush()
        ctx.barrier()
        ctx.run("scatter", locality=t, args={"w": 0.25})
        ctx.barrier()
        return t.gather(), t.read_range(100, 3)

    whole, part = run_job(setup, control)
    fanout = np.zeros(n)
    fanout[[0, 1, 2, 5]] = 4 * 0.25 * np.array([1.0, 1.0, 3.0, 3.0])
    np.testing.assert_array_equal(whole, np.arange(n) + 4 * 0.25 + fanout)
    np.testing.assert_array_equal(part, [101.0, 102.0, 103.0])


def test_checkpoint_and_restore(tmp_path):
    def setup(ctx):
        ctx.checkpoint_enable(str(tmp_path), "pytest")
        return ctx.table("c", partitions=2, value="int", accum="sum")

    def first(ctx, t):
        assert ctx.restore() is None
        for k in range(5):
            t.put(k, k * k)
        t.flush()
        ctx.barrier()
        ctx.checkpoint(b"epoch-one")
        return None

    def second(ctx, t):
        user = ctx.restore()
        return user, sorted(t.items())

    run_job(setup, first)
    user, items = run_job(setup, second)
    assert user == b"epoch-one" and items == [(k, k * k) for k in range(5)]


def test_replica_view_and_sums():
    """A replicated dense table: kernels read the previous epoch's values from the replica
    (a view) and sum them over a CSR of keys (replica_sums) while put_range writes the next."""
    def setup(ctx):
        r = ctx.table("r", key_count=10, partitions=2, replicated=True)
        plain = ctx.table("plain", key_count=10, partitions=2)
        seen = ctx.table("seen", key_count=2, partitions=1)

        @ctx.kernel
        def step(task, args):
            first, count = r.dense_range(task.instance)
            rep = r.replica()
            sums = r.replica_sums([0, 9, 9, 3, 1], [0, 2, 2, 5])  # rows {0,9}, {}, {9,3,1}
            seen.put(task.instance, float(sums @ [1, 10, 100]))
            r.put_range(first, rep[first:first + count] * 2)

        return r, plain, seen

    def control(ctx, state):
        r, plain, seen = state
        assert r.replica() is not None and plain.replica() is None
        r.put_range(0, np.arange(10.0))
        ctx.barrier()
        np.testing.assert_array_equal(r.replica(), np.arange(10.0))
        ctx.run("step", locality=r)
        ctx.barrier()
        got = [seen.get(0), seen.get(1)]
        np.testing.assert_array_equal(r.replica(), 2 * np.arange(10.0))  # the next epoch
        np.testing.assert_array_equal(r.replica_sums([9, 9], [0, 1, 2]), [18.0, 18.0])
        with pytest.raises(IndexError, match="a key outside table 'r'"):
            r.replica_sums([10], [0, 1])
        with pytest.raises(ValueError, match="offsets must be 3 ascending"):
            r.replica_sums([1, 2], [0, 2, 1])
        with pytest.raises(tessera.Error, match="needs a float table with a replica"):
            plain.replica_sums([1], [0, 1])
        return got

    assert run_job(setup, control) == [9.0 + 1300.0] * 2
