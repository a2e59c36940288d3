"""An example foilbench plugin (docs/plugins.md): a model and a benchmark."""
