"""Reports (statinterp.app.report): a chart that fails after the tables were made leaves the old
report set as it was (issue 16, defect 5)."""

from __future__ import annotations

from tests.support.cli import run_main
from tests.support.files import no_temporaries, old_report_set


def test_reproduce_failing_chart_leaves_the_old_report_set(tmp_path, monkeypatch, capsys):
    from statinterp.app import report

    folder = tmp_path / "reports"
    old = old_report_set(folder, "core")

    def broken_chart(rep):  # e.g. matplotlib failing after the tables were made
        raise RuntimeError("chart failed")

    monkeypatch.setattr(report, "reproduction_chart", broken_chart)
    code, _, err = run_main(capsys, "reproduce", "--methods", "core", "--out", str(folder), "--force", "-q")
    assert code == 1 and "chart failed" in err, err
    assert {p: p.read_bytes() for p in folder.iterdir()} == old
    assert no_temporaries(folder)
