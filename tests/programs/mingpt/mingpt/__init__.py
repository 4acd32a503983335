# From https://github.com/karpathy/minGPT (repository karpathy/minGPT), path mingpt/__init__.py,
# commit 37baab71b9abea1b76ab957409a1cc2fbfba8a26.
# Licence: MIT, Copyright (c) 2020 Andrej Karpathy; the full licence text is in LICENSE in this program's folder.
# Copied unchanged below this header (jitensor tests/programs: see README.md there).
