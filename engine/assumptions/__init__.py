"""Assumptions as data: every efficiency, bandwidth fraction, overlap factor and overhead
the engine uses, each a named constant with its source or its calibration.

One module per topic (compute.py, network.py, ... ); formulas import the names, never
literal numbers.
"""
