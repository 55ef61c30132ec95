"""The step format: segmentation with character spans, prefix rendering, the step separator, prompts, and
the first-error labeling convention.

Every producer and consumer of steps (datagen, rollouts, labelers, the judge, policy SFT data, PRMs and
reward adapters) goes through this package; nothing else decides where a step begins or ends.
"""

from prm.format.labels import (
    STATUS_BY_CONVENTION,
    STATUS_LABELED,
    STATUS_PSEUDO,
    STATUS_UNVERIFIABLE,
    first_error_of,
    labels_from_first_error,
    statuses_from_first_error,
)
from prm.format.markdown import cell, markdown_table
from prm.format.prm_input import (
    CONVENTION_FILE,
    CONVENTIONS,
    ContextOverflowError,
    EncodedSteps,
    StepTagConvention,
    encode_steps,
    tag_ids,
)
from prm.format.prompts import DEFAULT_TEMPLATE, PLAIN_PROMPT_SUFFIX, Prompter, PromptTemplate, format_prompt
from prm.format.steps import STEP_SEPARATOR, Segmented, from_spans, join_steps, segment, split_steps
from prm.format.tag_escape import escape_tag, unescape_tag

__all__ = [
    "CONVENTIONS",
    "CONVENTION_FILE",
    "DEFAULT_TEMPLATE",
    "PLAIN_PROMPT_SUFFIX",
    "STATUS_BY_CONVENTION",
    "STATUS_LABELED",
    "STATUS_PSEUDO",
    "STATUS_UNVERIFIABLE",
    "STEP_SEPARATOR",
    "ContextOverflowError",
    "EncodedSteps",
    "PromptTemplate",
    "Prompter",
    "Segmented",
    "StepTagConvention",
    "cell",
    "encode_steps",
    "escape_tag",
    "first_error_of",
    "format_prompt",
    "from_spans",
    "join_steps",
    "labels_from_first_error",
    "markdown_table",
    "segment",
    "split_steps",
    "statuses_from_first_error",
    "tag_ids",
    "unescape_tag",
]
