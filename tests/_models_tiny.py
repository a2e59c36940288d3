"""Builders of tiny randomly initialised models saved to local folders (for adapter tests).

Nothing here downloads: every model comes from a config, every tokenizer from files that ship
inside installed packages (open_clip's BPE vocabulary) or from a small word list.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
from PIL import Image

TINY_OPENCLIP_CFG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def tiny_images(n: int = 3, size: int = 32, seed: int = 0) -> list[Image.Image]:
    rng = np.random.default_rng(seed)
    return [Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8))
            for _ in range(n)]


def write_openclip_config(folder: Path, name: str, quick_gelu: bool = False) -> Path:
    cfg = dict(TINY_OPENCLIP_CFG, quick_gelu=quick_gelu)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(cfg))
    return path


def clip_bpe_files(folder: Path) -> tuple[Path, Path]:
    """vocab.json + merges.txt for a transformers CLIPTokenizer, built from open_clip's shipped
    BPE merges exactly as open_clip's SimpleTokenizer builds its vocabulary (same ids)."""
    import open_clip

    bpe = Path(open_clip.__file__).parent / "bpe_simple_vocab_16e6.txt.gz"
    merges = gzip.open(bpe).read().decode("utf-8").split("\n")[1:49152 - 256 - 2 + 1]
    pairs = [tuple(m.split()) for m in merges]
    from open_clip.tokenizer import bytes_to_unicode

    vocab = list(bytes_to_unicode().values())
    vocab = vocab + [v + "</w>" for v in vocab]
    vocab += ["".join(p) for p in pairs]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    folder.mkdir(parents=True, exist_ok=True)
    vocab_file, merges_file = folder / "vocab.json", folder / "merges.txt"
    vocab_file.write_text(json.dumps({tok: i for i, tok in enumerate(vocab)}))
    merges_file.write_text("#version: 0.2\n" + "\n".join(" ".join(p) for p in pairs) + "\n")
    return vocab_file, merges_file


def clip_tokenizer(folder: Path, max_length: int = 16):
    from transformers import CLIPTokenizer

    vocab_file, merges_file = clip_bpe_files(folder)
    return CLIPTokenizer(str(vocab_file), str(merges_file), model_max_length=max_length,
                         pad_token="<|endoftext|>")


def _tiny_tower(vocab_size: int = 49408) -> tuple[dict, dict]:
    text = dict(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=16)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                  num_attention_heads=2, image_size=32, patch_size=8)
    return text, vision


def save_tiny_hf_dual(folder: Path, kind: str, tok_dir: Path) -> Path:
    """A tiny random CLIPModel, SiglipModel or Siglip2Model (``kind``) with a CLIP BPE tokenizer.

    SigLIP's own tokenizer (sentencepiece / Gemma) cannot be had offline, so the SigLIP test
    models pair a model of matching vocabulary size with a CLIPTokenizer.
    """
    import torch
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        SiglipConfig,
        SiglipModel,
    )

    torch.manual_seed(0)
    text, vision = _tiny_tower()
    processor = CLIPImageProcessor(size={"shortest_edge": 32},
                                   crop_size={"height": 32, "width": 32})
    if kind == "clip":
        model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=16))
    elif kind == "siglip2":  # NaFlex patches: 16 patches of 8 px, with a pixel attention mask
        from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model

        vision = {k: v for k, v in vision.items() if k != "image_size"} | {"num_patches": 16}
        model = Siglip2Model(Siglip2Config(text_config=text, vision_config=vision))
        processor = Siglip2ImageProcessor(patch_size=8, max_num_patches=16)
    else:
        model = SiglipModel(SiglipConfig(text_config=text, vision_config=vision))
        with torch.no_grad():  # a non-trivial scale and bias, so the test can tell them apart
            model.logit_scale.fill_(2.0)
            model.logit_bias.fill_(-3.0)
    model.eval().save_pretrained(folder)
    clip_tokenizer(tok_dir).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


VLM_WORDS = ["a", "red", "blue", "green", "cube", "sphere", "cone", "left", "right", "of", "two",
             "three", "on", "the", "picture", "describe", "image", "does", "this", "figure",
             "show", "please", "answer", "yes", "no", "or", "Yes", "No", '"', "?", ".", ":",
             "question", "and"]


def save_tiny_blip(folder: Path) -> Path:
    """A tiny random BlipForConditionalGeneration with a word-level BERT tokenizer."""
    import torch
    from transformers import (
        BertTokenizer,
        BlipConfig,
        BlipForConditionalGeneration,
        BlipImageProcessor,
        BlipProcessor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[DEC]"]
    vocab = specials + [w.lower() for w in dict.fromkeys(VLM_WORDS)]
    vocab = list(dict.fromkeys(vocab))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizer(str(folder / "vocab.txt"), do_lower_case=True)
    tok.add_special_tokens({"bos_token": "[DEC]"})
    torch.manual_seed(0)
    text = dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, max_position_embeddings=128, encoder_hidden_size=32,
                bos_token_id=vocab.index("[DEC]"), pad_token_id=0, sep_token_id=3,
                initializer_range=0.2)
    # Images must move the scores, or no image-side bug can be caught. BlipVisionConfig's
    # default initializer_range is 1e-10 (position and class embeddings ~0), and at the text
    # default 0.02 the decoder's cross-attention passes the image on at ~1e-3 of a log-prob;
    # with 0.02 (vision) and 0.2 (text) two images differ by tenths (measured: 0.1 to 0.9).
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                  num_attention_heads=2, image_size=32, patch_size=8, initializer_range=0.02)
    model = BlipForConditionalGeneration(BlipConfig(text_config=text, vision_config=vision))
    model.eval().save_pretrained(folder)
    proc = BlipProcessor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}),
                         tokenizer=tok)
    proc.save_pretrained(folder)
    return folder


def save_tiny_llava(folder: Path, hidden: int = 32, layers: int = 2, image_size: int = 32,
                    patch: int = 8) -> Path:
    """A tiny random LlavaForConditionalGeneration with a word-level fast tokenizer
    ((image_size / patch)^2 image tokens in the prompt)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    specials = ["<pad>", "<s>", "</s>", "<unk>", "<image>", "USER:", "ASSISTANT:", "Describe"]
    words = list(dict.fromkeys(specials + VLM_WORDS + ['"Does', 'cube"?', 'sphere"?', "image.",
                                                       "no.", "a", "show"]))
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>",
                                  bos_token="<s>", eos_token="</s>",
                                  extra_special_tokens={"image_token": "<image>"})
    torch.manual_seed(0)
    vision = CLIPVisionConfig(hidden_size=hidden, intermediate_size=2 * hidden,
                              num_hidden_layers=layers, num_attention_heads=2,
                              image_size=image_size, patch_size=patch)
    text = LlamaConfig(vocab_size=len(words), hidden_size=hidden, intermediate_size=2 * hidden,
                       num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                       max_position_embeddings=1024)
    model = LlavaForConditionalGeneration(LlavaConfig(
        vision_config=vision, text_config=text, image_token_id=words.index("<image>"),
        vision_feature_layer=-1))
    model.eval().save_pretrained(folder)
    proc = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": image_size},
            crop_size={"height": image_size, "width": image_size}),
        tokenizer=tok, patch_size=patch, vision_feature_select_strategy="default",
        num_additional_image_tokens=1)
    proc.save_pretrained(folder)
    return folder


def save_tiny_qwen2vl(folder: Path) -> Path:
    """A tiny random Qwen2VLForConditionalGeneration (M-RoPE) with a word-level tokenizer."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    specials = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "user", "assistant",
                "Describe"]
    words = list(dict.fromkeys(specials + VLM_WORDS))
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>",
                                  additional_special_tokens=specials[2:8])
    torch.manual_seed(0)
    text = dict(vocab_size=len(words), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=2,
                rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]})
    vision = dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, patch_size=14,
                  spatial_merge_size=2, temporal_patch_size=2, in_chans=3)
    model = Qwen2VLForConditionalGeneration(Qwen2VLConfig(
        text_config=text, vision_config=vision, image_token_id=words.index("<|image_pad|>"),
        video_token_id=words.index("<|video_pad|>"),
        vision_start_token_id=words.index("<|vision_start|>")))
    model.eval().save_pretrained(folder)
    Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(min_pixels=56 * 56,
                                                           max_pixels=56 * 56),
                     tokenizer=tok, video_processor=Qwen2VLVideoProcessor(),
                     chat_template=None).save_pretrained(folder)
    return folder
