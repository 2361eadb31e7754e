"""Built-in readers: Extra-P formats, Cube, OTF2, perf stat."""
