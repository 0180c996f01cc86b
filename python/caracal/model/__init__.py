"""Performance models of collectives (caracal model): fit, formulas, predictions."""
