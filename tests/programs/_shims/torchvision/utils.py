"""torchvision.utils.save_image: a grid of the images of a (B, C, H, W) tensor as a PNG."""
import struct
import zlib

import numpy as np


def _grid(a, nrow, padding, pad_value):
    b, c, h, w = a.shape
    cols = min(nrow, b)
    rows = (b + cols - 1) // cols
    out = np.full((c, rows * (h + padding) + padding, cols * (w + padding) + padding), pad_value,
                  dtype=a.dtype)
    for i in range(b):
        r, k = divmod(i, cols)
        y, x = padding + r * (h + padding), padding + k * (w + padding)
        out[:, y:y + h, x:x + w] = a[i]
    return out


def save_image(tensor, fp, nrow=8, padding=2, normalize=False, value_range=None,
               scale_each=False, pad_value=0.0, format=None):
    a = np.asarray(tensor.detach().cpu().numpy(), dtype=np.float64)
    if a.ndim == 3:
        a = a[None]
    if normalize:
        lo, hi = value_range if value_range is not None else (a.min(), a.max())
        a = (np.clip(a, lo, hi) - lo) / max(hi - lo, 1e-5)
    grid = _grid(a, nrow, padding, pad_value)
    if grid.shape[0] == 1:
        grid = np.repeat(grid, 3, axis=0)
    img = (np.clip(grid, 0, 1) * 255 + 0.5).astype(np.uint8).transpose(1, 2, 0)
    h, w = img.shape[:2]
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    if hasattr(fp, "write"):
        fp.write(png)
    else:
        with open(fp, "wb") as f:
            f.write(png)
