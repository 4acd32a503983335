"""torch's top-level spellings of nn.functional ops (`torch.conv2d`, `torch.layer_norm`,
`torch.dropout`, ...), with the signatures of torch's native functions: arguments positional
where torch has no default (`torch.dropout(input, p, train)`), losses' `reduction` an int
(0 none, 1 mean, 2 sum; none when left out, as torch's bindings do), `embedding` taking the
weight first. Each forwards to
`jitensor.nn.functional`, imported on first call so that `import jitensor` stays light."""
import importlib

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout",
           "alpha_dropout_", "avg_pool1d", "batch_norm", "bilinear",
           "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle",
           "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "cosine_embedding_loss", "cosine_similarity", "dropout", "dropout_",
           "embedding", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
           "feature_dropout_", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "group_norm",
           "hardshrink", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm",
           "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
           "max_pool3d", "native_channel_shuffle", "pairwise_distance", "pdist", "pixel_shuffle",
           "pixel_unshuffle", "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "rrelu_", "selu",
           "selu_", "threshold", "threshold_", "triplet_margin_loss"]

_REDUCTIONS = ("none", "mean", "sum")


def _F():
    return importlib.import_module("jitensor.nn.functional")


def _stride(stride):
    """torch's `stride=[]` (the kernel size) as nn.functional's None."""
    return None if isinstance(stride, (tuple, list)) and not stride else stride


def _reduction(reduction):
    """torch's int reduction (at::Reduction) as nn.functional's string."""
    if isinstance(reduction, bool) or reduction not in (0, 1, 2):
        raise ValueError(f"reduction={reduction!r} is not a valid value: use 0 (none), 1 (mean) "
                         f"or 2 (sum)")
    return _REDUCTIONS[reduction]


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _F().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _F().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _F().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _F().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _F().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                           return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return _F().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                           count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return _F().adaptive_avg_pool1d(input, output_size)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


_INTERPOLATIONS, _PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with torch's int modes: interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection."""
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise ValueError(f"grid_sampler(): interpolation_mode={interpolation_mode!r} and "
                         f"padding_mode={padding_mode!r} must be 0, 1 or 2")
    return _F().grid_sample(input, grid, _INTERPOLATIONS[interpolation_mode],
                            _PADDINGS[padding_mode], align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


def affine_grid_generator(theta, size, align_corners):
    return _F().affine_grid(theta, size, align_corners)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # at::embedding's padding_idx is -1 for none (nn.functional has already made it positive)
    return _F().embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def constant_pad_nd(input, pad, value=0):
    return _F().pad(input, pad, "constant", value)


def _dropout_pair(name, feature, alpha):
    def out_of_place(input, p, train):
        return _F()._dropout(name, input, p, train, False, feature=feature, alpha=alpha)

    def in_place(input, p, train):
        return _F()._dropout(name + "_", input, p, train, True, feature=feature, alpha=alpha)

    out_of_place.__name__, in_place.__name__ = name, name + "_"
    out_of_place.__doc__ = (f"torch.{name}(input, p, train): nn.functional's, with `train` "
                            f"required.")
    in_place.__doc__ = f"In-place {name}."
    return out_of_place, in_place


dropout, dropout_ = _dropout_pair("dropout", False, False)
alpha_dropout, alpha_dropout_ = _dropout_pair("alpha_dropout", False, True)
feature_dropout, feature_dropout_ = _dropout_pair("feature_dropout", True, False)
feature_alpha_dropout, feature_alpha_dropout_ = _dropout_pair("feature_alpha_dropout", True, True)


def celu(input, alpha=1.0):
    return _F().celu(input, alpha)


def celu_(input, alpha=1.0):
    return _F().celu_(input, alpha)


def selu(input):
    return _F().selu(input)


def selu_(input):
    return _F().selu_(input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    _no_generator(generator, "rrelu")
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    _no_generator(generator, "rrelu_")
    return _F().rrelu_(input, lower, upper, training)


def _no_generator(generator, name):
    if generator is not None:
        raise NotImplementedError(f"jitensor.{name}(generator=...): draws come from the default "
                                  f"generator only; seed it with jitensor.manual_seed")


def threshold(input, threshold, value):
    return _F().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _F().threshold_(input, threshold, value)


def hardshrink(input, lambd=0.5):
    return _F().hardshrink(input, lambd)


def prelu(input, weight):
    return _F().prelu(input, weight)


def channel_shuffle(input, groups):
    return _F().channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def pixel_shuffle(input, upscale_factor):
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _F().pixel_unshuffle(input, downscale_factor)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    return _F().pdist(input, p)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _F().binary_cross_entropy_with_logits(input, target, weight,
                                                 reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def kl_div(input, target, reduction=0, *, log_target=False):
    return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))
