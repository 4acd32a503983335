"""torch._utils_internal's two public names, which torch re-exports at its top level."""
import os

# the folder that holds the jitensor package, as torch's holds torch
_PARENT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def get_file_path(*path_components):
    """A path under the folder that holds the jitensor package."""
    return os.path.join(_PARENT, *path_components)


def prepare_multiprocessing_environment(path):
    """Nothing to prepare: jitensor's worker processes need no shared-file setup (torch's own
    does nothing either outside Meta's builds)."""
