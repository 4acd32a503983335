"""torch.backends.opt_einsum: jitensor's einsum contracts left to right, as torch does without
the opt_einsum package: not available, and `enabled`/`strategy` change nothing."""
enabled = False
strategy = None


def is_available():
    return False


def get_opt_einsum():
    return None
