"""torch.backends.mkldnn: jitensor's CPU convolutions are its own kernels, not oneDNN's."""
enabled = True
deterministic = False


def is_available():
    return False
