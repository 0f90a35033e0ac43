"""The original's ``simpler_setup.tools.tmr`` path: ``python -m simpler.tools.tmr.scope_stats_plot``."""
