"""The pair model: bge-small-zh's BERT reading [CLS] question [SEP] passage [SEP], one logit
from the CLS vector (the vector bge was trained to put meaning in)."""

from __future__ import annotations

import torch
from torch import nn
from transformers import BertModel


class PairModel(nn.Module):
    def __init__(self, bert: BertModel) -> None:
        super().__init__()
        self.bert = bert
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(bert.config.hidden_size, 1)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).last_hidden_state[:, 0]
        return self.head(self.dropout(hidden)).squeeze(-1)


def group_loss(logits: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Per group (rows: positive first, then negatives): listwise cross-entropy, a soft
    negative counting in the softmax in proportion to its weight, plus each pair's weighted
    binary cross-entropy, so that the logit is also a probability of answering (the verdict's
    floor reads it)."""
    offsets = torch.cat([torch.zeros_like(weights[:, :1]), weights.log()], dim=1)
    listwise = nn.functional.cross_entropy(logits + offsets,
                                           torch.zeros(len(logits), dtype=torch.long))
    labels = torch.zeros_like(logits)
    labels[:, 0] = 1.0
    pair_weights = torch.cat([torch.ones_like(weights[:, :1]) * weights.shape[1], weights], 1)
    pointwise = nn.functional.binary_cross_entropy_with_logits(
        logits, labels, weight=pair_weights / pair_weights.sum(1, keepdim=True) * logits.shape[1])
    return listwise + pointwise
