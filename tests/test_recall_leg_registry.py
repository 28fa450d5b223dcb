"""The recall legs are registered once (app/recall/legs.py) and every place that names them agrees."""

from __future__ import annotations

import re
from dataclasses import fields

from app.graph.settings import GraphSettings
from app.recall.legs import LEG_NAMES, LEGS, LegPlan
from app.recall.schemas import HitExplanation, LegWeights
from app.recall.settings import RecallSettings
from app.recall.sql import recall_sql
from app.recall.statement import RecallArgs
from app.ui.pages.recall import FIELDS
from memoria_bench.modes import ALL, MODE_WEIGHTS


def test_each_registered_leg_has_its_weight_parameter_rank_column_and_request_weight() -> None:
    statement = recall_sql()
    arg_names = {f.name for f in fields(RecallArgs)}
    for leg in LEGS:
        assert f"w_{leg.name}" in arg_names, leg.name
        assert re.search(rf"\b{leg.rank_column}\b", statement), leg.name
        assert leg.rank_column in HitExplanation.__struct_fields__, leg.name
        assert leg.name in LegWeights.__struct_fields__, leg.name
    assert {name for name in arg_names if name.startswith("w_")} == {f"w_{leg}" for leg in LEG_NAMES}


def test_the_plan_the_ui_and_the_bench_modes_follow_the_registry() -> None:
    plan = LegPlan.for_request(None, RecallSettings(), GraphSettings())
    assert tuple(plan.wanted) == LEG_NAMES
    assert [name for name in FIELDS if name.startswith("w_")] == [f"w_{leg}" for leg in LEG_NAMES]
    for leg in LEG_NAMES:
        alone = LegPlan.for_request(MODE_WEIGHTS[leg], RecallSettings(), GraphSettings())
        assert [other for other, weight in alone.wanted.items() if weight > 0] == [leg]
    assert MODE_WEIGHTS[ALL] is None
