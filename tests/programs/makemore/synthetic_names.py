"""jitensor's tests/programs: a synthetic stand-in for makemore's names.txt (32,033 names).

`python synthetic_names.py [FILE]` writes 200 made-up lowercase names of 2 to 8 letters, one a
line, from a fixed seed (default FILE names.txt). No torch."""
import random
import sys


def main(path="names.txt"):
    rng = random.Random(0)
    onsets, vowels = "bcdfghjklmnprstvwz", "aeiouy"
    with open(path, "w") as f:
        for _ in range(200):
            name = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 4)))
            f.write(name[:rng.randint(2, 8)] + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
