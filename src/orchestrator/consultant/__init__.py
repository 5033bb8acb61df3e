"""The consultant (seed 002's escalation ladder): level 1 decides alone what changes for a task's
next attempts, level 2 asks a person; both leave their files under the task's `escalation` folder.

- `analysis`: reading the attempts, the rules, the optional LLM → `ConsultantDecision`;
- `apply`: what a decision changes (overrides, revert target), as a pure function;
- `request`: the level-2 `hil-request.json`;
- `files`: the level folders, atomic writes, the one reader of `user-decision.json`.
"""

from __future__ import annotations

from orchestrator.consultant.analysis import consult
from orchestrator.consultant.apply import Applied, apply_decision, checkpoint_before
from orchestrator.consultant.decision import (
    ACCEPTANCE_KEY,
    Analysis,
    ConsultantDecision,
    DecisionBody,
    ModelSwitch,
    PlanRevert,
)
from orchestrator.consultant.files import (
    level_dir,
    read_decision_file,
    read_user_decision,
    write_level1,
    write_level2,
    write_resolution,
    write_user_decision,
)
from orchestrator.consultant.request import build_hil_request, hil_options

__all__ = [
    "ACCEPTANCE_KEY",
    "Analysis",
    "Applied",
    "ConsultantDecision",
    "DecisionBody",
    "ModelSwitch",
    "PlanRevert",
    "apply_decision",
    "build_hil_request",
    "checkpoint_before",
    "consult",
    "hil_options",
    "level_dir",
    "read_decision_file",
    "read_user_decision",
    "write_level1",
    "write_level2",
    "write_resolution",
    "write_user_decision",
]
