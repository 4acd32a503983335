"""torch.backends.cpu: the CPU's vector capability, as the kernels are compiled for it."""


def get_cpu_capability():
    """torch's names: "AVX512" where the CPU has AVX-512, "AVX2", else "DEFAULT"."""
    from numba.core.codegen import get_host_cpu_features
    features = get_host_cpu_features()
    return "AVX512" if "+avx512f" in features else "AVX2" if "+avx2" in features else \
        "DEFAULT"
