"""Auto-Comp App. A.9 hard-negative fine-tuning of real dual encoders (open_clip, Hugging Face
CLIP/SigLIP): config (the paper's settings), data (concept-disjoint split, negatives by error
family), towers (differentiable encoders, saving), loss (NegCLIP / sigmoid with hard
negatives), loop (AdamW, warm-up + cosine, early stopping), evaluate (R@1 with Wilson
intervals), run (the matched Swap-only vs Confusion-only comparison)."""
