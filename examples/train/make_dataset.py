#!/usr/bin/env python3
"""Write catsdogs-tiny, the synthetic two-class image dataset of the runall example.

16x16 grey images, class 0 ("cat") with horizontal stripes and class 1 ("dog") with vertical
ones, under noise. The archive holds train.csv and val.csv at its top level: one image a row,
the label first, then 256 pixel values 0-255. Plain CSV in a .tar.gz, so neither this script
nor anything that unpacks the archive needs more than the Python standard library.

The archive is reproducible: the same seed and sizes give the same bytes (fixed timestamps and
owners; the same Python and zlib), so tests can compare checksums.

    python3 make_dataset.py --out catsdogs-tiny.tar.gz
    aws s3 cp catsdogs-tiny.tar.gz s3://datasets/catsdogs-tiny.tar.gz
"""

import argparse
import gzip
import io
import random
import tarfile

SIZE = 16  # images are SIZE x SIZE
CLASSES = ("cat", "dog")


def make_images(n, seed):
    """Return n (label, pixels) pairs; pixels is a list of SIZE*SIZE ints in 0..255."""
    rng = random.Random(seed)
    images = []
    for i in range(n):
        label = i % 2
        period = rng.choice((2, 3, 4))
        phase = rng.randrange(period)
        contrast = rng.uniform(0.35, 0.6)
        pixels = []
        for y in range(SIZE):
            for x in range(SIZE):
                along = y if label == 0 else x
                stripe = 1.0 if (along + phase) % period == 0 else 0.0
                v = 0.5 + contrast * (stripe - 0.5) + rng.gauss(0, 0.2)
                pixels.append(min(255, max(0, int(v * 255))))
        images.append((label, pixels))
    rng.shuffle(images)
    return images


def to_csv(images):
    lines = ["label," + ",".join(f"p{i}" for i in range(SIZE * SIZE))]
    lines += [f"{label}," + ",".join(map(str, pixels)) for label, pixels in images]
    return ("\n".join(lines) + "\n").encode()


def write_archive(path, train, val, seed):
    files = {
        "train.csv": to_csv(make_images(train, seed)),
        "val.csv": to_csv(make_images(val, seed + 1)),
        "README": (
            f"catsdogs-tiny: synthetic {SIZE}x{SIZE} grey images, labels "
            + ", ".join(f"{i}={c}" for i, c in enumerate(CLASSES))
            + f". Made by make_dataset.py --seed {seed} --train {train} --val {val}.\n"
        ).encode(),
    }
    with open(path, "wb") as f:
        # mtime=0 and a fixed filename keep the gzip header, and so the archive, reproducible.
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                for name, data in sorted(files.items()):
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    info.mode = 0o644
                    info.mtime = 0
                    tar.addfile(info, io.BytesIO(data))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="catsdogs-tiny.tar.gz", help="archive to write")
    p.add_argument("--train", type=int, default=512, help="training images")
    p.add_argument("--val", type=int, default=128, help="validation images")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    write_archive(args.out, args.train, args.val, args.seed)
    print(f"wrote {args.out}: {args.train} train + {args.val} val images, {SIZE}x{SIZE}, 2 classes")


if __name__ == "__main__":
    main()
