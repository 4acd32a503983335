"""`RemovableHandle`: what registering a hook returns (torch.utils.hooks)."""
import weakref


class RemovableHandle:
    """`remove()` takes the hook out of the dict (or dicts) it was registered in; also a context
    manager that removes it on exit."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        # weak: a handle kept by the user does not keep a module or tensor's hooks alive
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extra = extra_dict if isinstance(extra_dict, list) else \
            [] if extra_dict is None else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __getstate__(self):
        return self.hooks_dict_ref(), self.id

    def __setstate__(self, state):
        self.hooks_dict_ref = weakref.ref(state[0]) if state[0] is not None else lambda: None
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = ()
