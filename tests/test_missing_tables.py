"""Analyses on a case database that lacks a table they read: a one-line AnalysisError (or
the empty figures) when the table is absent, the database's own error when it is there."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from case_small_db import case_small, engine_with_requests

from forensics.analysis import integrity, summary
from forensics.analysis.classify import classify
from forensics.analysis.owners import attribute
from forensics.engines import DuckDBEngine
from forensics.errors import AnalysisError


def test_classify_without_bands_says_to_run_the_exposure_analysis():
    with engine_with_requests() as engine, pytest.raises(AnalysisError) as e:
        classify(engine, case_small())
    assert "the case database holds no bands table" in e.value.line()
    assert "run the exposure analysis (forensics analyze) first" in e.value.line()


def test_data_owners_without_bands_say_to_compute_them_first():
    with engine_with_requests() as engine, pytest.raises(AnalysisError) as e:
        attribute(engine, case_small())
    assert "data owners need the bands of this case" in e.value.line()


def test_a_bands_table_that_cannot_be_read_is_the_databases_error_not_a_missing_table():
    with engine_with_requests() as engine, pytest.raises(duckdb.Error):
        engine.execute("CREATE TABLE bands (nothing INTEGER)")
        attribute(engine, case_small())


def test_without_inputs_the_ingest_figures_are_zero_and_the_digest_is_of_no_inputs():
    with DuckDBEngine() as engine:
        assert summary.ingest_figures(engine) == (
            {"rows_read": 0, "rows_loaded": 0, "duplicates": 0, "quarantined": 0},
            [],
        )
        empty = integrity.inputs_digest(engine)
        engine.execute("CREATE TABLE inputs (path VARCHAR, sha256 VARCHAR, mapping_sha256 VARCHAR)")
        assert integrity.inputs_digest(engine) == empty  # an empty table: the same digest
        engine.execute("INSERT INTO inputs VALUES ('a.jsonl', 'abc', NULL)")
        assert integrity.inputs_digest(engine) != empty


def test_table_exists_answers_as_the_catalog_holds_tables_and_views():
    """A table, a temporary table and a view are there; a name never created is not; a view
    whose table was dropped is still there (as information_schema lists it); a system
    catalog's name (pg_class) is not a table of the case store."""
    with DuckDBEngine() as engine:
        engine.execute("CREATE TABLE t (a INTEGER)")
        engine.execute("CREATE TEMP TABLE tt (a INTEGER)")
        engine.execute("CREATE VIEW v AS SELECT * FROM t")
        engine.execute("CREATE TABLE gone (a INTEGER)")
        engine.execute("CREATE VIEW over_gone AS SELECT * FROM gone")
        engine.execute("DROP TABLE gone")
        found = {n: engine.table_exists(n) for n in ("t", "tt", "v", "over_gone", "nope", "gone")}
        assert found == {
            "t": True,
            "tt": True,
            "v": True,
            "over_gone": True,
            "nope": False,
            "gone": False,
        }
        assert not engine.table_exists("pg_class")


def test_table_exists_follows_what_the_engine_runs_after_a_question():
    """The names are read once and then kept: a table the engine writes is there at once, one
    dropped by a statement run through it is gone, and so is one created in a transaction
    that rolled back; a table created by SQL a caller ran (`sql_frame`, as the notebook's
    `sql`) is there too."""
    with DuckDBEngine() as engine:
        engine.execute("CREATE TABLE t (a INTEGER)")
        assert engine.table_exists("t") and not engine.table_exists("w")
        engine.write_frame("w", pl.DataFrame({"a": [1]}), "a")
        assert engine.table_exists("w")
        engine.execute("DROP TABLE t")
        assert not engine.table_exists("t")
        with pytest.raises(RuntimeError), engine.transaction():
            engine.write_frame("in_block", pl.DataFrame({"a": [1]}), "a")
            assert engine.table_exists("in_block")
            raise RuntimeError("the block fails")
        assert not engine.table_exists("in_block")
        engine.sql_frame("CREATE TABLE by_caller AS SELECT 1 AS a")
        assert engine.table_exists("by_caller")
