"""Calibration: measured device and link figures for the cost model (`calibrate`)."""
