"""DistributedDataParallel: importable, as scripts import it unconditionally; constructing one
raises, since it needs jitensor.distributed (process groups and collectives), which jitensor
does not have yet."""
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_NO_DISTRIBUTED = ("jitensor has no jitensor.distributed yet (no process groups or "
                   "collectives), so DistributedDataParallel is not supported; on one device, "
                   "use the module itself")


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel's signature. Construction raises torch's
    errors for the arguments it checks first -- without a process group, the "not initialized"
    ValueError (no process group can be initialized without jitensor.distributed) -- and a
    RuntimeError saying jitensor.distributed is needed otherwise."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        if (delay_all_reduce_named_params is None) != (param_to_hook_all_reduce is None):
            raise ValueError("delay_all_reduce_named_params and param_to_hook_all_reduce need "
                             "to be set at the same time.")
        if process_group and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if process_group is None and device_mesh is None:
            raise ValueError(f"Default process group has not been initialized, please make sure "
                             f"to call init_process_group. ({_NO_DISTRIBUTED})")
        raise RuntimeError(f"DistributedDataParallel: {_NO_DISTRIBUTED}")
