"""torch.onnx's names, so that scripts importing it at their top run. jitensor cannot export
ONNX graphs (it records no graph to export): `export` raises, naming what to do instead."""
__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """torch.onnx's export error."""


def export(model, args=(), f=None, *unused_args, **unused_kwargs):
    raise NotImplementedError("jitensor.onnx.export: exporting a model to ONNX is not "
                              "supported by jitensor (it runs ops eagerly and records no "
                              "graph to export); export the model with PyTorch, loading "
                              "jitensor's checkpoint there (torch.load reads jitensor.save's "
                              "files)")


def is_in_onnx_export():
    """False: jitensor never exports."""
    return False
