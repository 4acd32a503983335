"""jitensor's tests/programs: a tiny synthetic corpus in place of data/wikitext-2.

`python synthetic_corpus.py [DIR]` writes DIR/train.txt, valid.txt and test.txt (default DIR
data/synthetic): lines of words drawn from a 24-word vocabulary by a fixed seed, every word of
valid and test also in train (as main.py's Corpus needs nothing more). No torch."""
import os
import random
import sys

WORDS = ["the", "a", "of", "and", "to", "in", "is", "was", "on", "for", "with", "as", "by", "at",
         "from", "he", "she", "it", "they", "we", "an", "be", "or", "not"]


def write(path, lines, rng):
    with open(path, "w", encoding="utf8") as f:
        f.writelines(" " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))) + " \n"
                     for _ in range(lines))


def main(folder="data/synthetic"):
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(0)
    write(os.path.join(folder, "train.txt"), 40, rng)
    write(os.path.join(folder, "valid.txt"), 10, rng)
    write(os.path.join(folder, "test.txt"), 10, rng)


if __name__ == "__main__":
    main(*sys.argv[1:])
