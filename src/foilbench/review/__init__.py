"""Human QC review of a pair benchmark, CompoSET's three phases (App. B.4).

``units`` groups items into scenes and instances, ``store`` keeps the decision log
(SQLite, one transaction per decision), ``state`` derives statuses, progress and discard rates,
``export`` writes the accepted benchmark and the QC report, ``app``/``serve`` are the web app
(Starlette under uvicorn), ``views``/``drift``/``text`` prepare what the reviewer sees.
Auto-Comp's human studies (§6, A.10): ``concepts`` (concordance) and ``solvability``, on
``study_log``/``study_app``/``study_sample``/``study_export``.
Importing this package imports nothing heavy; the web stack loads only in ``app``/``serve``.
"""
