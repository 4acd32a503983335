"""Synthetic stand-ins for torchvision.datasets: `MNIST` and `FakeData`, whose items are
(H x W [x C] uint8 NumPy image, int label) as torchvision's are (PIL image, int label)."""
import numpy as np

# Sizes of the synthetic MNIST splits: tiny, so a whole epoch takes seconds.
MNIST_SIZES = {True: 64, False: 32}


class _Synthetic:
    def __init__(self, images, targets, transform=None, target_transform=None):
        self.data, self.targets = images, targets
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class MNIST(_Synthetic):
    """torchvision.datasets.MNIST's signature; 28 x 28 uint8 digits-shaped noise, labels 0-9.
    Nothing is read from `root` and nothing is downloaded."""

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        rng = np.random.RandomState(0 if train else 1)
        n = MNIST_SIZES[bool(train)]
        images = (rng.rand(n, 28, 28) ** 3 * 255).astype(np.uint8)  # mostly dark, as MNIST
        super().__init__(images, rng.randint(0, 10, n), transform, target_transform)
        self.root, self.train = root, train


class FakeData(_Synthetic):
    """torchvision.datasets.FakeData: `size` random images of `image_size` (C, H, W)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        self.size, self.image_size, self.num_classes = size, image_size, num_classes
        self.random_offset = random_offset
        super().__init__(None, None, transform, target_transform)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if not 0 <= index < self.size:
            raise IndexError(f"{type(self).__name__} index out of range")
        rng = np.random.RandomState(index + self.random_offset)
        c, h, w = self.image_size
        img = rng.randint(0, 256, (h, w, c)).astype(np.uint8)
        if c == 1:
            img = img[:, :, 0]
        target = int(rng.randint(0, self.num_classes))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
