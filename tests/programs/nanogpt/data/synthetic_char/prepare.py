"""jitensor's tests/programs: a synthetic stand-in for nanoGPT's data/shakespeare_char, whose
prepare.py downloads tiny-shakespeare. This one makes 4,000 characters of pseudo-words from a
fixed seed and writes what that prepare.py writes next to itself: train.bin and val.bin
(uint16 character ids, 90% / 10%) and meta.pkl (vocab_size, itos, stoi). No torch."""
import os
import pickle
import random

import numpy as np

rng = random.Random(0)
syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "the", "and", "or"]
words = []
while sum(len(w) + 1 for w in words) < 4000:
    words.append("".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))))
data = ""
for i, w in enumerate(words):
    data += w + ("\n" if i % 9 == 8 else " ")
data = data[:4000]

chars = sorted(set(data))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
n = len(data)
here = os.path.dirname(os.path.abspath(__file__))
np.array([stoi[c] for c in data[:int(n * 0.9)]], dtype=np.uint16).tofile(
    os.path.join(here, "train.bin"))
np.array([stoi[c] for c in data[int(n * 0.9):]], dtype=np.uint16).tofile(
    os.path.join(here, "val.bin"))
with open(os.path.join(here, "meta.pkl"), "wb") as f:
    pickle.dump({"vocab_size": vocab_size, "itos": itos, "stoi": stoi}, f)
print(f"vocab size {vocab_size}, train {int(n * 0.9)} and val {n - int(n * 0.9)} tokens")
