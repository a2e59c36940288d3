"""The help text of ``foilbench construct``: backends per role, spend, resume, examples."""

GROUP_HELP = """Build a benchmark with a paper's construction pipeline, from any backend.

    \b
    Pipelines (foilbench construct PIPELINE -h for its roles and examples):
      composet    CompoSET App. B: same-scene single-edit pairs, 3 caption tiers, QC-ready
      sugarcrepe  SugarCrepe App. D.2: 7 hard-negative types for your own captions
      autocomp    Auto-Comp §3: Minimal/Contextual concepts, validated, Swap/Confusion
      compass     COMPASS §3: scene-graph captions worded by a language model

    \b
    Backends, one per role (a spec like a model spec; offline ones need no model):
      --text      template | api:anthropic|openai|gemini:MODEL | hf-lm:DIR
      --image     world | api:gemini-image|openai-image:MODEL | diffusers:DIR
      --edit      world | api:gemini-image|openai-image:MODEL | diffusers:DIR
                  (diffusers: InstructPix2Pix-style or inpainting with the edit mask)
      --detector  world | hf-det:DIR (OWL-ViT, OWLv2, Grounding DINO) | none
      --vqa       world | hf-vlm:DIR | api:anthropic|openai|gemini:MODEL
    API keys come from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY,
    GEMINI_API_KEY). Spec options follow '?': diffusers:DIR?steps=30&guidance=7.5,
    hf-det:DIR?nms=0.5, api:openai:gpt-4o?concurrency=8. --device/--dtype apply to
    local models, --concurrency and --cache-dir to API backends.

    \b
    Spend: an upper bound per role and backend is printed before anything runs
    (--dry-run stops there). --max-spend USD caps everything spent into --out: every
    API backend, every resume and every concurrent run on it (default
    FOILBENCH_API_SPEND_CAP or $5). Each request is reserved at its worst case in
    OUT/.construct/spend.jsonl before it is sent and settled with the provider's
    billed usage; a run that reaches the cap stops with what it finished kept, and a
    rerun with a higher cap goes on. Prices: foilbench's list (source and date per
    model); --price MODEL=IN/OUT for others, or --allow-unpriced with --max-spend.

    \b
    Resume: each call is stored in OUT/.construct by content hash the moment it
    finishes. Rerun the same command with the same --out after a crash, Ctrl-C, kill
    or spend stop: finished calls are neither repeated nor paid again (a damaged
    cache entry is made again, with a warning). --out belongs to one build: another
    pipeline, option or backend into a non-empty --out is refused (the build is in
    OUT/.construct/run.json); --max-spend and --retries may change. A run stopped by
    the cap still writes survival.md/.json, every candidate "not reached: spend cap".

    \b
    OUT is a foilbench benchmark (manifest.json whose extras.construction names every
    backend fingerprint and prompt version; items.parquet; images) plus
    construction_log.jsonl (every candidate, every stage, why it was dropped),
    survival.md/.json (candidates surviving each stage) and construction.json.

    \b
    Offline, with no model at all:
      foilbench construct composet --text template --image world --edit world --out cs
      foilbench construct autocomp --out ac
      foilbench construct sugarcrepe captions.json --images imgs --out sc
      foilbench construct compass --out cp
    With models:
      foilbench construct composet --text api:anthropic:claude-sonnet-4-5 \\
          --image api:gemini-image:gemini-2.5-flash-image \\
          --edit api:openai-image:gpt-image-1 --detector hf-det:./owlv2 \\
          --max-spend 20 --out cs
    Then: foilbench inspect OUT; foilbench review OUT (pairs); foilbench run --benchmark OUT.
    """
