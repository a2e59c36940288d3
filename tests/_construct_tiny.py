"""Tiny random local models for the construction-backend tests, built from configs offline:
a GPT-2 LM, Stable Diffusion text-to-image / InstructPix2Pix / inpainting pipelines and an
OWL-ViT detector. Tokenizers: a word list (GPT-2) and a character-level CLIP BPE tokenizer
(no merges; 94 printable ASCII characters, each also as a word end), so nothing is downloaded
and the CLIP text encoders stay tiny."""

from __future__ import annotations

from pathlib import Path

LM_WORDS = ["<pad>", "<unk>", "<eos>", "a", "red", "blue", "green", "cube", "sphere", "cone",
            "on", "the", "left", "of", "right", "two", "three", "rewrite", "caption", ":",
            "<|system|>", "<|user|>", "<|assistant|>", "you", "are", "helpful", "."]

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def save_tiny_gpt2(folder: Path, chat: bool = False, n_positions: int = 128) -> Path:
    """A tiny random GPT2LMHeadModel with a word-level fast tokenizer (optional chat template);
    ``n_positions`` is its context (pipelines' prompts need several hundred tokens)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(LM_WORDS)},
                                         unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>",
                                  eos_token="<eos>")
    if chat:
        tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(LM_WORDS), n_embd=16, n_layer=1, n_head=2,
                                       n_positions=n_positions, bos_token_id=2, eos_token_id=2,
                                       pad_token_id=0))
    model.eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def tiny_clip_tokenizer(max_length: int = 16):
    from transformers import CLIPTokenizer

    chars = [chr(c) for c in range(33, 127)]
    # the specials last, as in CLIP: OWL-ViT treats a query whose first id is 0 as padding
    tokens = [*chars, *(c + "</w>" for c in chars), "<|startoftext|>", "<|endoftext|>"]
    return CLIPTokenizer(vocab={t: i for i, t in enumerate(tokens)}, merges=[],
                         model_max_length=max_length)


CLIP_VOCAB = 2 + 2 * 94


def save_tiny_sd(folder: Path, kind: str) -> Path:
    """A tiny random Stable Diffusion pipeline: ``kind`` is "t2i", "pix2pix" or "inpaint"
    (UNet input channels 4, 8 and 9: latents, + image latents, + mask and masked latents)."""
    import torch
    from diffusers import (
        AutoencoderKL,
        DDIMScheduler,
        StableDiffusionInpaintPipeline,
        StableDiffusionInstructPix2PixPipeline,
        StableDiffusionPipeline,
        UNet2DConditionModel,
    )
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    in_channels = {"t2i": 4, "pix2pix": 8, "inpaint": 9}[kind]
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=in_channels, out_channels=4, layers_per_block=1,
        block_out_channels=(8, 16), norm_num_groups=4, cross_attention_dim=16,
        attention_head_dim=2, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"))
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, layers_per_block=1,
                        block_out_channels=(8, 8), norm_num_groups=4, sample_size=16,
                        down_block_types=("DownEncoderBlock2D",) * 2,
                        up_block_types=("UpDecoderBlock2D",) * 2)
    text = CLIPTextModel(CLIPTextConfig(vocab_size=CLIP_VOCAB, hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=1, num_attention_heads=2,
                                        max_position_embeddings=16, projection_dim=16,
                                        bos_token_id=188, eos_token_id=189, pad_token_id=189))
    cls = {"t2i": StableDiffusionPipeline, "pix2pix": StableDiffusionInstructPix2PixPipeline,
           "inpaint": StableDiffusionInpaintPipeline}[kind]
    pipe = cls(vae=vae, text_encoder=text, tokenizer=tiny_clip_tokenizer(), unet=unet,
               scheduler=DDIMScheduler(num_train_timesteps=50, steps_offset=1,
                                                 clip_sample=False), safety_checker=None,
               feature_extractor=None, requires_safety_checker=False)
    pipe.save_pretrained(folder)
    return folder


def save_tiny_owlvit(folder: Path) -> Path:
    """A tiny random OwlViTForObjectDetection with a CLIP BPE tokenizer."""
    import torch
    from transformers import (
        OwlViTConfig,
        OwlViTForObjectDetection,
        OwlViTImageProcessor,
        OwlViTProcessor,
    )

    torch.manual_seed(0)
    text = dict(vocab_size=CLIP_VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=16, bos_token_id=188,
                eos_token_id=189, pad_token_id=189)
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=32, patch_size=8)
    model = OwlViTForObjectDetection(OwlViTConfig(text_config=text, vision_config=vision,
                                                  projection_dim=16))
    model.eval().save_pretrained(folder)
    proc = OwlViTProcessor(image_processor=OwlViTImageProcessor(
        size={"height": 32, "width": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tiny_clip_tokenizer())
    proc.save_pretrained(folder)
    return folder


def save_tiny_owlv2(folder: Path) -> Path:
    """A tiny random Owlv2ForObjectDetection (predicts on the image padded to a square)."""
    import torch
    from transformers import (
        Owlv2Config,
        Owlv2ForObjectDetection,
        Owlv2ImageProcessor,
        Owlv2Processor,
    )

    torch.manual_seed(0)
    text = dict(vocab_size=CLIP_VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=16, bos_token_id=188,
                eos_token_id=189, pad_token_id=189)
    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=32, patch_size=8)
    model = Owlv2ForObjectDetection(Owlv2Config(text_config=text, vision_config=vision,
                                                projection_dim=16))
    model.eval().save_pretrained(folder)
    Owlv2Processor(image_processor=Owlv2ImageProcessor(size={"height": 32, "width": 32}),
                   tokenizer=tiny_clip_tokenizer()).save_pretrained(folder)
    return folder


GDINO_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "red", "cube", "blue",
               "sphere", "green", "cone"]


def save_tiny_grounding_dino(folder: Path) -> Path:
    """A tiny random GroundingDinoForObjectDetection (Swin backbone, BERT text encoder with a
    word-level vocabulary). d_model must be a multiple of 32 (GroupNorm) and the decoder needs
    two layers (its box heads are tied from the second on)."""
    import torch
    from transformers import (
        BertConfig,
        BertTokenizer,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(GDINO_WORDS) + "\n")
    config = GroundingDinoConfig(
        backbone_config=SwinConfig(image_size=32, patch_size=4, embed_dim=8, depths=[1, 1],
                                   num_heads=[1, 1], window_size=2,
                                   out_features=["stage1", "stage2"]),
        text_config=BertConfig(vocab_size=len(GDINO_WORDS), hidden_size=16, num_hidden_layers=1,
                               num_attention_heads=2, intermediate_size=32,
                               max_position_embeddings=64),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=6,
        num_feature_levels=2, encoder_n_points=1, decoder_n_points=1, max_text_len=32,
        use_timm_backbone=False, use_pretrained_backbone=False)
    torch.manual_seed(0)
    GroundingDinoForObjectDetection(config).eval().save_pretrained(folder)
    GroundingDinoProcessor(
        image_processor=GroundingDinoImageProcessor(size={"shortest_edge": 32,
                                                          "longest_edge": 64}),
        tokenizer=BertTokenizer(str(folder / "vocab.txt"))).save_pretrained(folder)
    return folder
