"""SugarCrepe (§4, App. D): LLM hard negatives of seven types, then adversarial refinement.

``pipeline`` (locate, new concept, compose, swap), ``refine`` (Algorithm 1), ``template`` rules
and ``prompts/``.
"""
