"""tessera for Python: the tables face (Piccolo's model) over tessera's C runtime.

A program creates a Context, its tables and kernels (the same on every rank),
then calls Context.main(control): rank 0 runs control(ctx), which launches
kernels with ctx.run() and waits with ctx.barrier(); the other ranks serve.
Kernels run on tessera's worker threads and take the GIL while their Python
code runs; bulk table operations (update_many, read_range, put_range,
gather) release it.  See docs/python.md.
"""

import pickle
from collections import namedtuple

from . import _tessera
from ._tessera import Error, KernelError, Task, have_opencl, version

__all__ = ["Context", "Table", "Task", "Error", "KernelError", "OpenCLKernel", "have_opencl",
           "version"]

OpenCLKernel = namedtuple("OpenCLKernel", "source name params options", defaults=("in,out,cells",
                                                                                  None))
OpenCLKernel.__doc__ = """A tile job's OpenCL kernel: OpenCL C `source`, the __kernel function
`name`, `params` naming its leading parameters in order (comma-separated: in, out, cells,
loD, hiD; docs/tiles.md) and build `options` (e.g. "-DSCALE=2", or None).  One work-item per
cell of the tile, row-major; work-items at or past `cells` must return at once."""


def _np():
    import numpy

    return numpy


class Table(_tessera.Table):
    """A partitioned key/value table; keys are ints, values float, int or bytes.

    Single-key operations: get, put, update, contains, remove, flush.
    Bulk (NumPy, GIL released): update_many, read_range, put_range, gather.
    """

    def _dtype(self):
        np = _np()
        return np.float64 if self.value_type == "float" else np.int64

    def update_many(self, keys, values):
        """Accumulate values[i] into keys[i] for every i (one call, GIL released)."""
        np = _np()
        keys = np.ascontiguousarray(keys, dtype=np.uint64 if self.dense else np.int64)
        if np.ndim(values) == 0:
            values = np.full(keys.shape, values, dtype=self._dtype())
        values = np.ascontiguousarray(values, dtype=self._dtype())
        super().update_many(keys, values)

    def update_fanout(self, keys, offsets, updates):
        """Accumulate updates[i] into every key of keys[offsets[i]:offsets[i+1]] (a CSR of
        edges and one value per source, as a vertex sends its share to its out-neighbours;
        one call, GIL released)."""
        np = _np()
        super().update_fanout(np.ascontiguousarray(keys, dtype=np.uint64 if self.dense else np.int64),
                              np.ascontiguousarray(offsets, dtype=np.int64),
                              np.ascontiguousarray(updates, dtype=self._dtype()))

    def read_range(self, first, count, out=None):
        """Dense tables: the values of keys first..first+count-1 as an array."""
        if out is None:
            out = _np().empty(count, dtype=self._dtype())
        super().read_range_into(first, out)
        return out

    def read_partition(self, p):
        """Dense tables: (first key, values of partition p as an array)."""
        first, count = self.dense_range(p)
        return first, self.read_range(first, count)

    def put_range(self, first, values):
        """Dense tables: set keys first.. to values (one copy for a local partition)."""
        super().put_range(first, _np().ascontiguousarray(values, dtype=self._dtype()))

    def gather(self):
        """Dense tables, control function: the whole table as an array."""
        out = _np().empty(self.key_count, dtype=self._dtype())
        self.gather_into(out)
        return out

    def replica(self):
        """Dense tables with a replica (replicated=True): this rank's read-only copy of the
        whole table as an array, without copying; None while there is none.  A kernel
        reads the previous epoch's values while put_range writes the next (visible after
        the barrier); the array is valid until the next barrier, so take it anew in each
        kernel."""
        view = self.replica_view()
        return None if view is None else _np().frombuffer(view, self._dtype())

    def replica_sums(self, keys, offsets, out=None):
        """Float tables with a replica: out[i] = the sum of the replica's values at
        keys[offsets[i]:offsets[i+1]], added in that order (a CSR gather and sum, as a pull
        kernel sums its in-neighbours' shares; one pass in C, GIL released)."""
        np = _np()
        if out is None:
            out = np.empty(len(offsets) - 1)
        super().replica_sums_into(np.ascontiguousarray(keys, dtype=np.int64),
                                  np.ascontiguousarray(offsets, dtype=np.int64), out)
        return out

    def items(self, partition=None):
        """(key, value) pairs of one partition, or of every partition."""
        parts = range(self.partitions) if partition is None else [partition]
        for p in parts:
            yield from self.items_of(p)

    def __getitem__(self, key):
        return self.get(key)

    def __setitem__(self, key, value):
        self.put(key, value)

    def __contains__(self, key):
        return self.contains(key)


class Context(_tessera.Context):
    """A tessera runtime: Context(workers=0, mode="auto"|"embedded"|"mpi")."""

    def __init__(self, workers=0, mode="auto", handle_signals=False):
        super().__init__(workers, mode, handle_signals)
        self._kernels = {}

    def table(self, name, *, partitions=1, value="float", accum="replace", key_count=0,
              group_with=None, replicated=False):
        """Create a table (before main, identically on every rank).

        key_count > 0 makes a dense table of keys 0..key_count-1.  value is
        "float", "int" or "bytes"; accum "replace", "sum", "min", "max" or
        "product" (bytes take replace only).
        """
        t = self._create_table(Table, name, partitions, value, accum, key_count, group_with,
                               replicated)
        t.value_type = "float" if value in ("float", "f64") else "int" if value in ("int", "i64") \
            else "bytes"
        t.key_count = key_count
        t.dense = key_count > 0
        return t

    def kernel(self, fn=None, *, name=None):
        """Register fn(task, args) as a kernel (decorator; before main, same order on every rank)."""
        def register(f):
            kname = name or f.__name__

            def call(task, raw, f=f):
                return f(task, pickle.loads(raw) if raw else None)

            call.__name__ = kname
            self._kernels[kname] = self._register_kernel(kname, call)
            return f

        return register(fn) if fn is not None else register

    def run(self, kernel, instances=None, locality=None, args=None):
        """Launch a kernel (control function): one instance per partition of locality."""
        kname = kernel if isinstance(kernel, str) else kernel.__name__
        if kname not in self._kernels:
            raise Error(f"tessera: no kernel named '{kname}' (register it with Context.kernel)")
        if instances is None:
            if locality is None:
                raise Error("tessera: run() needs instances or a locality table")
            instances = locality.partitions
        payload = pickle.dumps(args) if args is not None else b""
        self._run(kname, self._kernels[kname], instances, locality, payload)

    def tile_job(self, name, kernel, extent, *, min_tile, max_tile, input=None, output=None,
                 out_dtype="float64", out_cell=(), opencl=None):
        """Register a tiles job (before main, identically on every rank).

        kernel(lo, hi, inp, out) computes the tile lo..hi (tuples, hi exclusive): inp is
        a read-only NumPy view of its input (shape hi-lo, then the input's cell shape),
        out a writable view of its output (hi-lo, then out_cell); valid only during the
        call.  input: an array of shape extent + cell shape, given on rank 0 (other ranks
        may pass None); output: an array of shape extent + out_cell on rank 0, filled by
        tile_run.  The kernel runs on the tiles face's CPU processors, any policy.
        opencl: an OpenCLKernel for the job's OpenCL processors (kernel may then be None,
        for a job that runs on OpenCL processors only).
        """
        np = _np()
        extent = tuple(int(e) for e in extent)
        nd, odt, out_cell = len(extent), np.dtype(out_dtype), tuple(out_cell)
        if input is None:
            raise ValueError(f"tessera: tile_job {name}: give the input array (on every rank; "
                             "rank 0's is used)")
        input = np.ascontiguousarray(input)
        if input.shape[:nd] != extent:
            raise ValueError(f"tessera: tile_job {name}: input shape {input.shape} does not "
                             f"start with the extent {extent}")
        idt, icell = input.dtype, input.shape[nd:]
        if output is not None and (output.shape != extent + out_cell or output.dtype != odt
                                   or not output.flags.c_contiguous):
            raise ValueError(f"tessera: tile_job {name}: output must be a C-contiguous "
                             f"{odt} array of shape {extent + out_cell}")

        if kernel is None and opencl is None:
            raise ValueError(f"tessera: tile_job {name}: give a kernel, an opencl kernel or both")
        if opencl is not None and not isinstance(opencl, OpenCLKernel):
            raise TypeError(f"tessera: tile_job {name}: opencl must be a tessera.OpenCLKernel")

        def call(lo, hi, inp, out):
            shape = tuple(h - l for l, h in zip(lo, hi))
            kernel(lo, hi, np.frombuffer(inp, idt).reshape(shape + icell),
                   np.frombuffer(out, odt).reshape(shape + out_cell))

        in_bytes = idt.itemsize * int(np.prod(icell, dtype=np.int64))
        out_bytes = odt.itemsize * int(np.prod(out_cell, dtype=np.int64))
        rank0 = self.rank == 0
        return self._tile_job(name, tuple(int(x) for x in extent), tuple(min_tile),
                              tuple(max_tile), in_bytes, out_bytes,
                              call if kernel is not None else None,
                              input if rank0 else b"", 0, extent[0] if rank0 else 0,
                              output if rank0 else None,
                              tuple(opencl) if opencl is not None else None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()
        return False
