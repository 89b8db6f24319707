"""auto's one rule (core.settings.config.XLA_AUTO_RULE), said the same in the CLI's help, the page's and the README, and
true of what the engine does with it."""

import re

import pytest

from core.cli import build_parser
from core.engine.executions.base import jit_compile_for
from core.settings.config import EXECUTIONS, MODELS, XLA_AUTO_RULE
from tests.conftest import ROOT


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("command", ["train", "compare", "sweep"])
def test_the_cli_help_says_the_rule(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    assert XLA_AUTO_RULE in flat(sub.format_help())


def test_the_readme_and_the_page_say_the_rule():
    assert XLA_AUTO_RULE in flat((ROOT / "README.md").read_text())
    assert "rule=_(XLA_AUTO_RULE)" in (ROOT / "ui" / "train_settings.py").read_text()


@pytest.mark.parametrize("execution", EXECUTIONS)
@pytest.mark.parametrize("model", MODELS)
def test_the_engine_does_what_the_rule_says(execution, model):
    on_cpu = execution == "multi-step-loop" and model in ("softmax", "mlp")  # the rule's words, read as a table
    assert jit_compile_for("cpu", model, "auto", {}, execution) is on_cpu
    assert jit_compile_for("gpu:0", model, "auto", {}, execution) is True  # a CUDA GPU, as a host without a name is
    metal = {"gpus": [{"index": 0, "name": "Apple M2", "backend": "metal"}]}
    assert jit_compile_for("gpu:0", model, "auto", metal, execution) is False
    assert jit_compile_for("cpu", model, "off", {}, execution) is False
