"""What a run looks like outside the terminal: the HTML report, the comparison page, JUnit XML.

Its face: :func:`~tsuka_core.report.html.write_report`, :func:`~tsuka_core.report.compare_html.write_comparison`
and :func:`~tsuka_core.report.junit.write_junit`; templates, charts and view models are behind them.
"""
