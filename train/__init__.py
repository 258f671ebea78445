"""Self-play training (DMC) and evaluation."""
