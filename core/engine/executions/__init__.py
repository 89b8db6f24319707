"""Execution modes by name (core.settings.config.EXECUTIONS): how one epoch of training runs.

keras-fit (compile + fit), keras-fit-spe (the same with steps_per_execution) and multi-step-loop
(many steps in one tf.function). All three train the same batches in the same order, with the same
jit_compile, so what differs between them is how the steps are executed.
"""

from __future__ import annotations

from core.engine.executions.base import Execution, jit_compile_for, make_optimizer
from core.engine.executions.fit import KerasFit, KerasFitSpe
from core.engine.executions.loop import MultiStepLoop

REGISTRY: dict[str, type[Execution]] = {cls.name: cls for cls in (KerasFit, KerasFitSpe, MultiStepLoop)}

__all__ = ["REGISTRY", "Execution", "jit_compile_for", "make_optimizer"]
