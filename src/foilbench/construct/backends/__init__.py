"""Construction backends: the text LLMs, image generators, image editors and validators that
construction pipelines call, each resolved from a spec a user can type (see ``registry``)."""
