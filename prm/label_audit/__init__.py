"""How good a label method's step labels are: against exact truth (:func:`audit_labels`: step accuracy/F1,
first-error accuracy, ProcessBench F1, cost), against people's first-error labels (:func:`audit_against_people`,
ProcessBench's metric with a problem-resampled interval), and the LLM judge against the graded outcome of the
solutions it judged (:func:`judge_outcome_verdict`).

Pure functions over ``step_labels``, ``steps`` and ``solutions`` rows: the partition stages of
:mod:`prm.labeling` read the warehouse and call them.
"""

from prm.label_audit.judge_outcome import JudgeOutcomeAgreement, JudgeOutcomeBand, judge_outcome_verdict
from prm.label_audit.people import PeopleAudit, audit_against_people, people_markdown, people_rows
from prm.label_audit.truth import AuditRow, audit_labels, audit_markdown, predicted_first_errors

__all__ = [
    "AuditRow",
    "JudgeOutcomeAgreement",
    "JudgeOutcomeBand",
    "PeopleAudit",
    "audit_against_people",
    "audit_labels",
    "audit_markdown",
    "judge_outcome_verdict",
    "people_markdown",
    "people_rows",
    "predicted_first_errors",
]
