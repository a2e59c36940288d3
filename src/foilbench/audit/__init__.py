"""Audits of benchmarks that need no vision model: blind text-only baselines, the perplexity
audit, and adversarial refinement. (Dataset-control audits live in ``analysis.controls``.)"""
