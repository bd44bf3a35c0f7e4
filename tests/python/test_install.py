"""The module imports from a `make install` prefix (cmake --install of this build
into a temporary prefix), outside the build tree, and runs a kernel."""

import os
import subprocess
import sys
import sysconfig

import pytest

CMAKE, BUILD = os.environ.get("TESS_CMAKE"), os.environ.get("TESS_BUILD_DIR")


@pytest.mark.skipif(not CMAKE or not BUILD, reason="run by ctest (TESS_CMAKE, TESS_BUILD_DIR)")
def test_import_from_install_prefix(tmp_path):
    prefix = tmp_path / "prefix"
    r = subprocess.run([CMAKE, "--install", BUILD, "--prefix", str(prefix)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ver = sysconfig.get_python_version()
    site = [p for p in prefix.rglob(f"python{ver}/site-packages") if (p / "tessera").is_dir()]
    assert len(site) == 1, list(prefix.rglob("*"))
    code = ("import tessera\n"
            "with tessera.Context(workers=1, mode='embedded') as c:\n"
            "    t = c.table('t', key_count=4, accum='sum')\n"
            "    c.kernel(lambda task, a: t.update(task.instance, 2.5), name='k')\n"
            "    def ctl(x):\n"
            "        x.run('k', instances=4); x.barrier(); print(tessera.__file__, t.gather().sum())\n"
            "    c.main(ctl)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site[0])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    path, total = r.stdout.split()
    assert path.startswith(str(prefix)) and float(total) == 10.0
