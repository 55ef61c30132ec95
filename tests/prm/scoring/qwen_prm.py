"""A tiny random PRM in Qwen2.5-Math-PRM's own folder layout: ``Qwen2ForProcessRewardModel`` (a Qwen2 model and
a Linear-ReLU-Linear head of 2 labels) kept as code in the folder (``auto_map``), as the published checkpoint
ships it, with the tag ``<extra_0>`` and the chat template of tests/tiny_models.py.

transformers loads it through ``AutoModel`` with ``trust_remote_code``; vLLM runs its native
``Qwen2ForProcessRewardModel`` over the same weights (``score.0``, ``score.2``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from prm.format import CONVENTIONS

MODULE = "modeling_qwen2_rm"
# The head as the model card's code builds it, reduced to what scoring calls.
CODE = '''
from torch import nn
from transformers import Qwen2Model, Qwen2PreTrainedModel
from transformers.modeling_outputs import TokenClassifierOutput


class Qwen2ForProcessRewardModel(Qwen2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = 2
        self.model = Qwen2Model(config)
        self.score = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size), nn.ReLU(),
                                   nn.Linear(config.hidden_size, self.num_labels))
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, **kwargs)[0]
        return TokenClassifierOutput(logits=self.score(hidden))
'''


def build_qwen_prm(folder: Path, **sizes) -> Path:
    """Save the tiny PRM and its convention (seed 0; an init range at which the two-layer head spreads scores
    over (0, 1) without saturating)."""
    import torch
    from transformers import Qwen2Config

    from tests.tiny_models import CONTEXT, QWEN_SPECIALS, QWEN_TEMPLATE, char_tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{MODULE}.py").write_text(CODE)
    spec = importlib.util.spec_from_file_location(f"tiny_{MODULE}", folder / f"{MODULE}.py")
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    tok = char_tokenizer(bos=False, specials=QWEN_SPECIALS, chat_template=QWEN_TEMPLATE)
    config = Qwen2Config(vocab_size=len(tok), num_hidden_layers=2, max_position_embeddings=CONTEXT,
                         initializer_range=0.1, pad_token_id=tok.pad_token_id, num_labels=2, **sizes)
    torch.manual_seed(0)
    code.Qwen2ForProcessRewardModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    saved = json.loads((folder / "config.json").read_text())
    saved |= {"architectures": ["Qwen2ForProcessRewardModel"],
              "auto_map": {"AutoModel": f"{MODULE}.Qwen2ForProcessRewardModel"}}
    (folder / "config.json").write_text(json.dumps(saved, indent=2))
    CONVENTIONS["qwen2.5-math-prm"].save(folder)
    return folder
