# SPDX-License-Identifier: Apache-2.0
"""Every transformers model family whose modules are decorated with `use_kernel_forward_from_hub`,
built tiny on the CPU, kernelized with kernelhub's layer API onto our example kernels, run by
test_layers_transformers_families.py in a fresh interpreter:

    python transformers_families_client.py enumerate
    python transformers_families_client.py run <json arguments>

`enumerate` reads the installed transformers' sources (no import of the models) and prints, per
model folder, the layer names its modules and functions are decorated with. `run` builds each
family of FAMILIES and ACTIVATION_FAMILIES from its default config shrunk to hidden size 64,
two layers, four heads (random weights from a fixed seed, nothing downloaded), computes the
plain model's output, then
kernelizes it (Mode.INFERENCE, device cpu) with a mapping of every layer name of LAYERS to a
LayerRepository of the served kernels, runs it again and reports, per family: how many modules
of each decorated layer name there are and how many now have our kernel layer's forward, which
of our ops ran, and max |Δ| between the two outputs (logits where the model has an LM head).
The last stdout line is one JSON object.
"""
from __future__ import annotations

import collections
import copy
import dataclasses
import importlib
import json
import re
import sys
import time
import traceback
from pathlib import Path

# Layer names transformers 5.22.2 decorates, and the (kernel, kernel layer) each maps to.
LAYERS = {
    "RMSNorm": ("rmsnorm", "RMSNorm"),
    "RMSNormGated": ("rmsnorm-variants", "RMSNormGated"),
    "RMSNormZeroCentered": ("rmsnorm-variants", "RMSNormZeroCentered"),
    "rotary_pos_emb": ("rotary", "RotaryPosEmb"),
    "SiLU": ("activation", "SiLU"),
    "GeLU": ("activation", "GeLU"),
    "GeluTanh": ("activation", "GeluTanh"),
    "NewGELU": ("activation", "NewGELU"),
    "FastGELU": ("activation", "FastGELU"),
    "QuickGELU": ("activation", "QuickGELU"),
}

# Decorated layer names without a layer kernel of ours: kernelize leaves these modules as they
# are (its fallback), and the report lists them per family.
UNMAPPED = {
    "MultiScaleDeformableAttention": "deformable attention (the Hub maps it for cuda only)",
    "MegaBlocksMoeMLP": "a whole mixture-of-experts block (router and experts)",
    "SoftmaxTopKRouter": "the two decorated routers compute different things (softmax vs. "
                         "sigmoid with bias and soft-capping) under one name",
    "Qwen3_5GatedDeltaNet": "a whole gated delta-net block",
    "EsmFold2TriangleMultiplication": "a whole triangle-multiplication block",
    # transformers' `use_kernel_func_from_hub_with_fallback` functions: state-space and
    # linear-attention scans, which the Hub maps for cuda and xpu only.
    "causal_conv1d_fn": "a state-space scan function",
    "causal_conv1d_update": "a state-space scan function",
    "mamba_chunk_scan_combined": "a state-space scan function",
    "mamba_split_conv1d_scan_combined": "a state-space scan function",
    "mamba_inner_fn": "a state-space scan function",
    "selective_scan_fn": "a state-space scan function",
    "selective_state_update": "a state-space scan function",
    "chunk_gated_delta_rule": "a linear-attention scan function",
    "fused_recurrent_gated_delta_rule": "a linear-attention scan function",
    "chunk_kda": "a linear-attention scan function",
    "fused_recurrent_kda": "a linear-attention scan function",
}

# Families whose decorated function differs from the others under the same name.
LAYER_OVERRIDES = {
    # nanochat's rotate_half is cat(x2, -x1): the rotation by the opposite angle.
    "nanochat": {"rotary_pos_emb": ("rotary", "RotaryPosEmbReversed")},
    # openai_privacy_filter rotates neighbouring pairs (x[2i], x[2i + 1]), not halves.
    "openai_privacy_filter": {"rotary_pos_emb": ("rotary", "RotaryPosEmbInterleaved")},
}

# The sizes every family is shrunk to, where its config has the field.
SIZES = {
    "hidden_size": 64, "d_model": 64, "n_embd": 64, "embed_dim": 64, "dim": 64,
    "intermediate_size": 128, "ffn_dim": 128, "d_ff": 128, "n_inner": 128, "mlp_dim": 128,
    "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "expert_intermediate_size": 32,
    "num_hidden_layers": 2, "n_layer": 2, "num_layers": 2, "n_layers": 2, "depth": 2,
    "encoder_layers": 2, "decoder_layers": 2,
    "num_attention_heads": 4, "n_head": 4, "num_heads": 4, "n_heads": 4,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "moe_num_experts": 4,
    "num_experts_per_tok": 2, "moe_k": 2, "moe_topk": 2, "n_group": 1, "topk_group": 1,
    "n_shared_experts": 1,
    "max_position_embeddings": 128, "mamba_chunk_size": 16,
    "kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
    "v_head_dim": 16,
    "image_size": 32, "patch_size": 8,
    "out_hidden_size": 64, "projection_dim": 64, "text_hidden_size": 64, "vision_hidden_size": 64,
}
VOCAB = 256
# Input ids stay below this, so no special token (image, audio...) is ever fed.
PLAIN_TOKENS = 100
MAX_PARAMETERS = 12_000_000


def _rope(theta, **extra):
    return {"rope_type": "default", "rope_theta": theta, **extra}


_ENCODER_DECODER = {"input_ids": ("ids", (2, 12)), "decoder_input_ids": ("ids", (2, 7))}


def _mrope(theta, sections):
    """A text config's multimodal rotary parameters: the sections of the rotary dimension."""
    return {"text_config": {"rope_parameters": _rope(theta, mrope_section=sections)}}


# Per family: what the generic shrinking does not get right. `model_type` picks the config
# (default: the folder's own), `model` the class (default: the first of MODEL_TABLES that
# names one), `config` entries merge into the shrunk config's arguments (nested dicts merge
# into sub-configs), `inputs` replaces the token ids (see sample_input).
FAMILIES: dict = {name: {} for name in [
    "afmoe", "apertus", "arcee", "aria", "axk1", "axk2", "bailing_hybrid", "beam", "bitnet",
    "cohere2_moe", "csm", "cwm", "deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_v4",
    "diffllama", "doge", "dots1", "ernie4_5", "ernie4_5_moe", "eurobert", "evolla", "exaone4",
    "exaone4_5", "exaone_moe", "falcon_h1", "falcon_mamba", "flex_olmo", "flint", "gemma",
    "gemma2", "gemma3", "glm", "glm4", "glm4_moe", "glm4_moe_lite", "glm_moe_dsa", "gpt_oss",
    "granite", "granite_swa", "granitemoe", "granitemoe_swa", "granitemoeshared", "gte",
    "higgs_audio_v2", "hrm_text", "hunyuan_v1_dense", "hunyuan_v1_moe", "hy_v3", "hy_v4",
    "hyperclovax", "inkling", "internvl", "jais2", "jetmoe", "jina_embeddings_v3", "kimi_linear",
    "kolibri1", "laguna", "lfm2", "lighton_ocr", "llama", "mamba", "mellum", "mimo_v2_flash",
    "minicpm3", "minimax", "minimax_m2", "ministral", "ministral3", "mistral", "mistral3",
    "mistral4", "mistral_large4", "mixtral", "modernbert", "modernbert_decoder", "molmo2",
    "muse_glimmer", "nanochat", "nomic_bert", "olmo", "olmo2", "olmo3", "olmo_hybrid", "olmoe",
    "openai_privacy_filter", "ovis2", "phi", "phi3", "phi4_multimodal", "phimoe", "qianfan_ocr",
    "qwen2", "qwen2_moe", "qwen3", "qwen3_5", "qwen3_5_moe", "qwen3_moe", "qwen3_next", "qwen3_vl",
    "qwen3_vl_moe", "seed_oss", "smollm3", "solar_open", "starcoder2", "ultrabert", "ultravbert",
    "unlimited_ocr", "vaultgemma", "youtu",
]}
FAMILIES.update({
    "bamba": {"config": {"attn_layer_indices": [1]}},
    "jamba": {"config": {"attn_layer_offset": 1, "attn_layer_period": 2}},
    "granitemoehybrid": {"config": {"layer_types": ["mamba", "attention"]}},
    "zamba2": {"config": {"layers_block_type": ["linear_attention", "hybrid"], "chunk_size": 16}},
    # The state-space scans' torch path pads to a whole chunk: small chunks keep it fast.
    "nemotron_h": {"config": {"chunk_size": 16}},
    "nemotron_h_omni": {"config": {"vision_config": {"video_temporal_patch_size": 2},
                                   "text_config": {"chunk_size": 16}}},
    "zaya": {"config": {"num_experts_per_tok": 1}},
    "lfm2_moe": {"config": {"layer_types": ["conv", "full_attention"], "num_dense_layers": 1}},
    "esm": {"config": {"pad_token_id": 1, "mask_token_id": 2,
                       "position_embedding_type": "rotary"}},
    "esmc": {"config": {"num_key_value_heads": 4}},
    "cohere_compass": {"config": {"text_config": {
        "rope_parameters": {"full_attention": _rope(1e4)}}}},
    "dbrx": {"config": {"attn_config": {"kv_n_heads": 2, "rope_theta": 1e4, "clip_qkv": 8.0},
                        "ffn_config": {"ffn_hidden_size": 128, "moe_num_experts": 4,
                                       "moe_top_k": 2}}},
    "glm5_next": {"config": {"text_config": {"qk_rope_head_dim": 0}}},  # its attention is NoPE
    "deepseek_ocr2": {"config": {"text_config": {"mlp_layer_types": ["dense", "sparse"]}}},
    "ernie4_5_vl_moe": {"config": {"text_config": {
        "mlp_layer_types": ["dense", "sparse"],
        "rope_parameters": _rope(5e5, mrope_section=[3, 3, 2])}}},
    # Multimodal rotary sections must add up to half the rotary dimension of a 16-wide head.
    "qwen2_vl": {"config": _mrope(1e6, [2, 3, 3])},
    "qwen2_5_vl": {"config": _mrope(1e6, [2, 3, 3])},
    "paddleocr_vl": {"config": _mrope(5e5, [2, 3, 3])},
    "glm4v": {"config": _mrope(1e4, [2, 3, 3])},
    "glm4v_moe": {"config": _mrope(1e4, [1, 1, 2])},
    "glm_image": {"config": _mrope(1e4, [2, 3, 3])},
    "glm_ocr": {"config": _mrope(1e4, [2, 3, 3])},
    "cosmos3_edge": {"config": _mrope(1e6, [3, 3, 2])},
    # Qwen3_5ForCausalLM, first in the causal LM table, takes the text config only.
    "qwen3_5": {"model": "Qwen3_5ForConditionalGeneration"},
    "qwen3_5_moe": {"model": "Qwen3_5MoeForConditionalGeneration"},
    # The multimodal inkling model needs scipy, which the venv does not have; its text model
    # holds every decorated layer but the vision and audio towers' activations.
    "inkling": {"model_type": "inkling_text"},
    "molmo2": {"config": {"adapter_config": {"vision_feature_layer": [-1, -2]}}},
    "muse_glimmer": {"config": {"projector_hidden_size": 64}},
    "csm": {"config": {"num_codebooks": 4, "text_vocab_size": 256,
                       "depth_decoder_config": {"num_codebooks": 4},
                       "codec_config": {"num_filters": 4, "upsample_groups": 4,
                                        "codebook_size": 64, "codebook_dim": 16,
                                        "num_quantizers": 4,
                                        "vector_quantization_hidden_dimension": 16}}},
    "t5gemma": {"model_type": "t5gemma", "inputs": _ENCODER_DECODER},
    "t5gemma2": {"inputs": _ENCODER_DECODER},
    # hidden size x expand must be heads x head dim.
    "mamba2": {"config": {"num_heads": 8, "chunk_size": 16}},
    "zamba": {"config": {"num_hidden_layers": 3, "tie_word_embeddings": False}},
    "longcat_flash": {"config": {"head_dim": 8, "ffn_hidden_size": 128,
                                 "expert_ffn_hidden_size": 32, "zero_expert_num": 4}},
    "hunyuan_vl": {"config": {"text_config": {
        "head_dim": 16, "rope_parameters": _rope(1e4, mrope_section=[2, 2, 2, 2])}}},
    # The causal LM table's Emu3ForCausalLM takes the text config; the multimodal model needs
    # the VQ-VAE image tokenizer, which holds no decorated module.
    "emu3": {"model_type": "emu3_text_model", "model": "Emu3ForCausalLM"},
    "qwen4_exp": {"model": "Qwen4ExpForConditionalGeneration", "config": {"text_config": {
        "layer_types": ["linear_attention", "indexed_attention"], "indexer_n_heads": 2,
        "indexer_kv_heads": 1, "indexer_head_dim": 16, "indexer_budget": 8,
        "indexer_compress_ratio": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16,
        "linear_num_key_heads": 2, "linear_num_value_heads": 4}}},
    # The omni models' thinker (text, vision and audio encoders) holds every decorated module;
    # the talker and the token-to-waveform models keep 100M+ parameters at generic sizes.
    "qwen2_5_omni": {"model_type": "qwen2_5_omni_thinker",
                     "model": "Qwen2_5OmniThinkerForConditionalGeneration",
                     "config": _mrope(1e6, [2, 3, 3])},
    "qwen3_omni_moe": {"model_type": "qwen3_omni_moe_thinker",
                       "model": "Qwen3OmniMoeThinkerForConditionalGeneration",
                       "config": _mrope(1e6, [2, 3, 3])},
    "gradium_phonon_tts": {"config": {"flow_head_config": {"condition_dim": 64}}},
    "pocket_tts": {"config": {"flow_head_config": {"condition_dim": 64}}},
    # Vision, audio and time-series models: their own inputs, at the smallest sizes the configs
    # allow.
    "pixtral": {"inputs": {"pixel_values": ("float", (2, 3, 32, 32))}},
    "sapiens2": {"inputs": {"pixel_values": ("float", (2, 3, 32, 32))}},
    "aimv2": {"inputs": {"input_ids": ("ids", (2, 12)), "pixel_values": ("float", (2, 3, 32, 32))}},
    "rf_detr": {"config": {"num_queries": 10},
                "inputs": {"pixel_values": ("float", (2, 3, 32, 32))}},
    "lasr": {"config": {"encoder_config": {"subsampling_conv_channels": 32, "num_mel_bins": 16}},
             "inputs": {"input_features": ("float", (2, 64, 16))}},
    "parakeet": {"config": {"encoder_config": {"subsampling_conv_channels": 32,
                                               "num_mel_bins": 16}},
                 "inputs": {"input_features": ("float", (2, 64, 16))}},
    "voxtral_realtime": {"config": {"audio_config": {"num_mel_bins": 16}},
                         # 64 feature frames make 8 audio embeddings, one per token.
                         "inputs": {"input_ids": ("ids", (2, 8)),
                                    "input_features": ("float", (2, 16, 64))}},
    "timesfm": {"config": {"context_length": 64, "horizon_length": 32},
                "inputs": {"past_values": ("float", (2, 64)),
                           "past_values_padding": ("zeros", (2, 64)),
                           "freq": ("zero-ids", (2, 1))}},
    "timesfm2_5": {"config": {"context_length": 64, "horizon_length": 32},
                   "inputs": {"past_values": ("float", (2, 64))}},
    # A draft model: the noise block's embeddings and the target model's hidden states (one
    # hidden size per target layer) in, no token ids.
    "muse_glimmer_assistant": {"config": {"target_layer_ids": [0, 1], "block_size": 8},
                               "inputs": {"noise_embeds": ("float", (2, 8, 64)),
                                          "context_hidden_states": ("float", (2, 5, 128))}},
})

# Families whose only decorated modules are transformers' shared activations (most families
# are; they are not enumerated), one for each activation name the families above never run.
ACTIVATION_FAMILIES = {
    "clip": {"model_type": "clip_text_model", "model": "CLIPTextModel"},  # QuickGELU
    "vivit": {"config": {"num_frames": 4, "tubelet_size": [2, 8, 8]},  # FastGELU
              "inputs": {"pixel_values": ("float", (2, 4, 3, 32, 32))}},
}

# Families whose kernelized modules the CPU forward never calls: the mixers of mamba and mamba2
# build a decorated SiLU `act` but hand their activation to the scan functions by name.
IDLE = {"mamba", "mamba2"}

# Families not run, and why.
_DETECTOR = ("an object detector whose own decorated layer is MultiScaleDeformableAttention (no "
             "kernel of ours; rf_detr runs as the detectors' representative) and whose backbone "
             "keeps {} parameters at the generic small sizes")
_TIMM = "needs timm (its {}), which the venv does not have"
SKIPPED = {
    "deformable_detr": _TIMM.format("TimmBackbone"),
    "omdet_turbo": _TIMM.format("TimmBackbone"),
    "pe_video": _TIMM.format("TimmWrapper vision encoder"),
    "pe_audio_video": _TIMM.format("TimmWrapper vision encoder"),
    "deimv2": _DETECTOR.format("22M"),
    "grounding_dino": _DETECTOR.format("13M (Swin and BERT)"),
    "mm_grounding_dino": _DETECTOR.format("13M (Swin and BERT)"),
    "rt_detr": _DETECTOR.format("11M-35M (ResNet)"),
    "pp_doclayout_v3": _DETECTOR.format("25M (HGNet)"),
    "pp_doclayout_v4": _DETECTOR.format("25M (HGNet)"),
    "lw_detr": "an object detector (decorated: MultiScaleDeformableAttention, no kernel of ours) "
               "whose config validator ties image_size to num_windows beyond small images",
    "pp_doclayout_v2": "no model class for it in transformers' auto mappings",
    "pe_audio": "its DAC audio encoder keeps 25M+ parameters at the generic small sizes",
    "neucodec": "an audio codec whose convolutional encoder keeps 34M parameters at the generic "
                "small sizes",
    "xcodec2": "an audio codec whose convolutional encoder keeps 34M parameters at the generic "
               "small sizes",
    "vibevoice": "its acoustic tokenizer keeps 170M+ parameters at the generic small sizes",
    "vibevoice_asr": "its acoustic tokenizer keeps 170M+ parameters at the generic small sizes",
    "vibevoice_acoustic_tokenizer": "keeps 170M+ parameters (convolutions) at the generic small "
                                    "sizes",
    "muse_spark": "its audio encoder keeps 20M+ parameters at the smallest per-layer sizes its "
                  "validator accepts",
    "embedding_gemma2": "per-layer (heterogeneous) layer configs, which the generic shrinking "
                        "does not write",
    "esmfold2": "its 3D rotary embedding needs heads wider than 16, and its folding trunk's "
                "decorated layer (EsmFold2TriangleMultiplication) has no kernel of ours",
    "granite4_vision": "its window Q-Former downsampler needs layer maps and sampling settings "
                       "the generic shrinking does not write",
    "idefics": "its forward needs image inputs through a perceiver resampler (no text-only path)",
    "dia": "a text-to-speech encoder-decoder over delayed multi-channel audio codes",
    "nemotron_asr_streaming": "an RNN-T transducer: its forward needs the decoder's token "
                              "inputs beside the audio features",
}


# --- enumeration ----------------------------------------------------------------------------

# A top-level class or function decorated with a layer name (transformers writes them at
# column 0, the name as a string literal).
DECORATION = re.compile(r'^@(?:use_kernel_forward_from_hub|use_kernel_func_from_hub|'
                        r'use_kernel_func_from_hub_with_fallback)\(\s*"([^"]+)"', re.MULTILINE)


def enumerate_families() -> dict:
    """{model folder: sorted layer names} for every folder whose modeling code is decorated,
    plus "transformers.activations" for the shared activation modules."""
    import importlib.util

    # Found without importing transformers: only its sources are read.
    root = Path(importlib.util.find_spec("transformers").origin).parent
    found = {"transformers.activations": sorted(
        set(DECORATION.findall((root / "activations.py").read_text())))}
    for path in sorted((root / "models").glob("*/modeling_*.py")):
        names = set(DECORATION.findall(path.read_text()))
        if names:  # a folder may hold several modeling files
            folder = path.parent.name
            found[folder] = sorted(set(found.get(folder, [])) | names)
    return found


# --- tiny models ----------------------------------------------------------------------------

def _fields(config_cls) -> set:
    try:
        return {field.name for field in dataclasses.fields(config_cls)}
    except TypeError:
        return set()


def _merge(into: dict, extra: dict) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def shrunk_arguments(config_cls, base) -> dict:
    """Arguments that rebuild `base` (a default config) tiny, sub-configs included."""
    import transformers

    fields = _fields(config_cls)
    arguments = {}
    for name, value in SIZES.items():
        current = getattr(base, name, None)
        if name in fields and (current is None or (isinstance(current, int)
                                                   and not isinstance(current, bool))):
            arguments[name] = value
    if "vocab_size" in fields:
        arguments["vocab_size"] = VOCAB
    if "qk_rope_head_dim" in arguments:
        # Multi-head latent attention: the head dimension is the rotary part's, and every head
        # has its own keys and values.
        arguments.pop("head_dim", None)
        arguments["num_key_value_heads"] = arguments.get("num_attention_heads", 4)
    # Special token ids move into the small vocabulary, above the ids the inputs use.
    spare = iter(range(VOCAB - 1, PLAIN_TOKENS, -1))
    for name in sorted(fields):
        value = getattr(base, name, None)
        if not name.endswith(("token_id", "token_index", "token_ids")):
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value >= PLAIN_TOKENS:
            arguments[name] = next(spare)
        elif isinstance(value, list) and any(isinstance(v, int) and v >= PLAIN_TOKENS
                                             for v in value):
            arguments[name] = [next(spare) if v >= PLAIN_TOKENS else v for v in value]
    # Per-layer kinds: one layer of each kind the full model has.
    layer_types = getattr(base, "layer_types", None)
    if isinstance(layer_types, (list, tuple)) and layer_types and "layer_types" in fields:
        kinds = list(dict.fromkeys(layer_types))
        layers = kinds if len(kinds) > 1 else list(layer_types[:1]) * 2
        arguments["layer_types"] = layers
        for name in ("num_hidden_layers", "n_layer", "num_layers"):
            if name in arguments:
                arguments[name] = len(layers)
    for key in getattr(config_cls, "sub_configs", {}):
        sub = getattr(base, key, None)
        if isinstance(sub, transformers.PretrainedConfig):
            arguments[key] = {**shrunk_arguments(type(sub), sub), "model_type": sub.model_type}
    return arguments


def tiny_config(model_type: str, extra: dict):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config_cls = CONFIG_MAPPING[model_type]
    arguments = shrunk_arguments(config_cls, config_cls())
    # A copy: configs may change the dicts they are given (rope parameters are standardized).
    _merge(arguments, copy.deepcopy(extra))
    return config_cls(**arguments)


MODEL_TABLES = ["MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
                "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
                "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
                "MODEL_MAPPING_NAMES"]


def model_class(model_type: str, name: str | None):
    import transformers
    from transformers.models.auto import modeling_auto

    if name is None:
        for table in MODEL_TABLES:
            name = getattr(modeling_auto, table).get(model_type)
            if name:
                break
    if isinstance(name, (list, tuple)):
        name = name[0]
    if not name or not hasattr(transformers, name):
        raise LookupError(f"no model class for {model_type!r}")
    return getattr(transformers, name)


def family_model_type(family: str) -> str:
    from transformers.models.auto.configuration_auto import (CONFIG_MAPPING_NAMES,
                                                             model_type_to_module_name)

    types = [t for t in CONFIG_MAPPING_NAMES if model_type_to_module_name(t) == family]
    main = [t for t in types if not t.endswith(("_text", "_vision", "_encoder", "_decoder"))]
    if not (main or types):
        raise LookupError(f"no model type in folder {family!r}")
    return (main or types)[0]


def build_model(family: str, spec: dict):
    import torch

    model_type = spec.get("model_type") or family_model_type(family)
    config = tiny_config(model_type, spec.get("config", {}))
    cls = model_class(model_type, spec.get("model"))
    torch.manual_seed(0)
    # Counted on the meta device first, so a config the shrinking missed cannot eat the memory.
    with torch.device("meta"):
        parameters = sum(p.numel() for p in cls(config).parameters())
    if parameters > MAX_PARAMETERS:
        raise ValueError(f"{cls.__name__} would have {parameters} parameters")
    model = cls(config).eval()
    # Norm weights start as ones (zeros for zero-centered ones): randomized, so a kernel that
    # ignored them would be caught.
    with torch.no_grad():
        for module in model.modules():
            if getattr(type(module), "kernel_layer_name", "").startswith("RMSNorm"):
                module.weight.add_(0.5 * torch.randn_like(module.weight))
    return model


def sample_input(spec: dict):
    """Token ids (2 x 12) below PLAIN_TOKENS, unless the family's `inputs` names others:
    {argument: (kind, shape)}, kind "ids", "float" (normal), "zeros" (float) or "zero-ids"."""
    import torch

    generator = torch.Generator().manual_seed(1)
    wanted = spec.get("inputs", {"input_ids": ("ids", (2, 12))})
    inputs = {}
    for name, (kind, shape) in wanted.items():
        if kind == "ids":
            inputs[name] = torch.randint(3, PLAIN_TOKENS, shape, generator=generator)
        elif kind == "float":
            inputs[name] = torch.randn(shape, generator=generator)
        elif kind == "zeros":
            inputs[name] = torch.zeros(shape)
        else:
            inputs[name] = torch.zeros(shape, dtype=torch.long)
    return inputs


def output_of(model, inputs):
    import torch

    with torch.no_grad():
        result = model(**inputs)
    for name in ("logits", "last_hidden_state", "logits_per_image"):
        value = getattr(result, name, None)
        if isinstance(value, torch.Tensor):
            return name, value
    raise TypeError(f"{type(result).__name__} has no output this test compares")


# --- kernelize ------------------------------------------------------------------------------

def decorated_modules(model):
    """(layer name, module) for every decorated module and attached function module, each
    once (a function module is shared by every attention module it is attached to)."""
    seen = set()
    for module in model.modules():
        for candidate in [module, *getattr(module, "_kernel_funcs", {}).values()]:
            name = getattr(type(candidate), "kernel_layer_name", None)
            if name and id(candidate) not in seen:
                seen.add(id(candidate))
                yield name, candidate


def kernel_of(module) -> str | None:
    """The kernel whose `layers` module the module's forward now comes from, else None. The
    loader names a kernel's module `_<name, - as _>_<backend>_<id>`; the longest name matching
    wins (rmsnorm-variants over rmsnorm)."""
    function = getattr(module.forward, "__func__", module.forward)
    owner = getattr(function, "__module__", "") or ""
    if not owner.endswith(".layers"):
        return None
    matching = [kernel for kernel, _ in LAYERS.values()
                if owner.startswith(f"_{kernel.replace('-', '_')}_")]
    return max(matching, key=len) if matching else None


def make_counter(kernel_prefixes):
    from torch.utils._python_dispatch import TorchDispatchMode

    class CountKernelOps(TorchDispatchMode):
        """Counts the calls of our kernels' ops that reach the dispatcher."""

        def __init__(self):
            super().__init__()
            self.calls = collections.Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            namespace, _, op = func._schema.name.partition("::")
            if namespace.startswith(kernel_prefixes):
                self.calls[op.split(".")[0]] += 1
            return func(*args, **(kwargs or {}))

    return CountKernelOps()


def run_family(pkg, family: str, spec: dict, repositories: dict) -> dict:
    import torch

    started = time.monotonic()
    model = build_model(family, spec)
    decorated = list(decorated_modules(model))
    # A function module is shared by every model of its family (and by families importing
    # it): give back its own forward, which an earlier kernelize replaced.
    for _, module in decorated:
        module.__dict__.pop("forward", None)
    inputs = sample_input(spec)
    output_name, expected = output_of(model, inputs)
    layers = {**LAYERS, **LAYER_OVERRIDES.get(family, {})}
    mapping = {name: {"cpu": repositories[target]} for name, target in layers.items()}
    with pkg.use_kernel_mapping(mapping, inherit_mapping=False):
        pkg.kernelize(model, mode=pkg.Mode.INFERENCE, device="cpu")
    counts = collections.defaultdict(lambda: {"decorated": 0, "kernelized": 0, "kernels": set()})
    for name, module in decorated:
        entry = counts[name]
        entry["decorated"] += 1
        kernel = kernel_of(module)
        if kernel is not None:
            entry["kernelized"] += 1
            entry["kernels"].add(kernel)
    counter = make_counter(tuple(f"_{kernel.replace('-', '_')}_"
                                 for kernel, _ in LAYERS.values()))
    with counter:
        _, got = output_of(model, inputs)
    if got.shape != expected.shape:
        raise AssertionError(f"output shape {tuple(got.shape)} != {tuple(expected.shape)}")
    return {
        "model": type(model).__name__,
        "output": output_name,
        "layers": {name: {"decorated": e["decorated"], "kernelized": e["kernelized"],
                          "kernels": sorted(e["kernels"])} for name, e in sorted(counts.items())},
        "op_calls": dict(sorted(counter.calls.items())),
        "max_abs_diff": float((got.float() - expected.float()).abs().max()),
        "max_abs_output": float(expected.float().abs().max()),
        "finite": bool(torch.isfinite(got).all() and torch.isfinite(expected).all()),
        "seconds": round(time.monotonic() - started, 2),
    }


def run(args: dict) -> dict:
    import torch

    # The tensors are tiny: one thread beats handing them to the intra-op pool.
    torch.set_num_threads(1)
    pkg = importlib.import_module(args.get("package", "kernelhub"))
    import transformers

    transformers.logging.set_verbosity_error()
    repositories = {}
    for kernel, layer in {*LAYERS.values(), *(v for o in LAYER_OVERRIDES.values()
                                             for v in o.values())}:
        repositories[(kernel, layer)] = pkg.LayerRepository(
            f"{args['org']}/{kernel}", layer_name=layer, version=1)
    specs = {**FAMILIES, **ACTIVATION_FAMILIES}
    wanted = args.get("families") or list(specs)
    results = {}
    for family in wanted:
        try:
            results[family] = run_family(pkg, family, specs[family], repositories)
        except Exception as error:  # one family's failure is reported, the others still run
            results[family] = {"error": f"{type(error).__name__}: {error}",
                               "traceback": traceback.format_exc()[-3000:]}
        print(f"{family}: {json.dumps(results[family])[:300]}", file=sys.stderr, flush=True)
    return {"families": results, "transformers": transformers.__version__,
            "torch": torch.__version__}


def main() -> None:
    command = sys.argv[1]
    if command == "enumerate":
        result = enumerate_families()
    else:
        result = run(json.loads(sys.argv[2]))
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
