"""Decodes the SVG QR codes QRCode.swift drew with a real decoder (zxing-cpp), as a phone would.

Usage: qr_decode_check.py CASES.json
CASES.json is a list of {"text", "svg", "version", "level", "mask"} written by QRCodeTests.swift.
Each SVG is checked for the form the MFA response promises (one dark <path>, viewBox in modules,
crispEdges, no '#' or '%' that would break an unescaped data URI), rasterised here (the path is
runs of "M x y h n v1 h -n z"), and decoded twice: as drawn, and with a 2x2 patch of modules
flipped, which the Reed-Solomon codewords must correct. The decoded bytes must be the text's
UTF-8, and the symbol's version and error-correction level those the encoder reported.
Prints one line per failure and "decoded N of M QR cases"; exits 1 on any failure.
"""

import json
import random
import re
import sys

import zxingcpp

PIXELS_PER_MODULE = 3
SVG_FORM = re.compile(
    r'<svg xmlns="http://www\.w3\.org/2000/svg" width="(\d+)" height="(\d+)" viewBox="0 0 (\d+) (\d+)" '
    r'shape-rendering="crispEdges"><rect width="(\d+)" height="(\d+)" fill="white"/>'
    r'<path fill="black" d="([^"]*)"/></svg>'
)
RUN = re.compile(r"M(\d+) (\d+)h(\d+)v1h-(\d+)z")


def rasterise(svg):
    """The SVG's modules as a grid of booleans (True = dark), quiet zone included."""
    match = SVG_FORM.fullmatch(svg)
    if not match:
        raise ValueError("SVG not in the expected form: " + svg[:200])
    width, height, vb_w, vb_h, rect_w, rect_h, path = match.groups()
    side = int(vb_w)
    if not (vb_w == vb_h == rect_w == rect_h and int(width) == int(height) == 4 * side):
        raise ValueError("inconsistent sizes in " + svg[:200])
    if "#" in svg or "%" in svg:
        raise ValueError("'#' or '%' in the SVG would break an unescaped data URI")
    grid = [[False] * side for _ in range(side)]
    consumed = 0
    for run in RUN.finditer(path):
        if run.start() != consumed:
            raise ValueError("unexpected path data at %d" % consumed)
        consumed = run.end()
        x, y, n, back = (int(v) for v in run.groups())
        if n != back or y >= side or x + n > side:
            raise ValueError("run out of the viewBox: " + run.group(0))
        for column in range(x, x + n):
            grid[y][column] = True
    if consumed != len(path):
        raise ValueError("trailing path data")
    return grid


def to_image(grid):
    """A grayscale memoryview of the grid, PIXELS_PER_MODULE pixels a module."""
    side = len(grid) * PIXELS_PER_MODULE
    pixels = bytearray(side * side)
    for row, line in enumerate(grid):
        for column, dark in enumerate(line):
            value = 0 if dark else 255
            for dy in range(PIXELS_PER_MODULE):
                offset = (row * PIXELS_PER_MODULE + dy) * side + column * PIXELS_PER_MODULE
                pixels[offset:offset + PIXELS_PER_MODULE] = bytes([value]) * PIXELS_PER_MODULE
    return memoryview(bytes(pixels)).cast("B", (side, side))


def damaged(grid, rng):
    """A copy with a 2x2 patch flipped inside the symbol, away from the finder patterns."""
    copy = [line[:] for line in grid]
    quiet = 4
    size = len(grid) - 2 * quiet
    row = quiet + rng.randrange(9, size - 10)
    column = quiet + rng.randrange(9, size - 10)
    for dy in range(2):
        for dx in range(2):
            copy[row + dy][column + dx] = not copy[row + dy][column + dx]
    return copy


def decode(grid, pure):
    """The one QR code zxing-cpp reads without error, or None. Its scanner drops a symbol with empty
    content, so an empty text goes through its path for perfect images (`is_pure`)."""
    results = zxingcpp.read_barcodes(
        to_image(grid), formats=zxingcpp.BarcodeFormat.QRCode, is_pure=pure, return_errors=pure
    )
    results = [barcode for barcode in results if barcode.error is None]
    return results[0] if len(results) == 1 else None


def check(case, rng):
    """None if the case decodes as it should, else why not."""
    grid = rasterise(case["svg"])
    expected = case["text"].encode("utf-8")
    for label, image in (("as drawn", grid), ("damaged", damaged(grid, rng))):
        barcode = decode(image, pure=not expected)
        if barcode is None:
            return label + ": not decoded"
        if barcode.bytes != expected:
            return "%s: decoded %r" % (label, barcode.bytes[:80])
        if barcode.ec_level != case["level"]:
            return "%s: level %s, expected %s" % (label, barcode.ec_level, case["level"])
        extra = barcode.extra if isinstance(barcode.extra, dict) else {}
        version = extra.get("Version")
        if version is not None and str(version) != str(case["version"]):
            return "%s: version %s, expected %s" % (label, version, case["version"])
    return None


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        cases = json.load(file)
    rng = random.Random(34)
    passed = failed = 0
    for index, case in enumerate(cases):
        try:
            problem = check(case, rng)
        except Exception as error:  # a malformed SVG is a failure of that case, reported as such
            problem = "%s: %s" % (type(error).__name__, error)
        if problem is None:
            passed += 1
        else:
            failed += 1
            print("case %d (version %s, level %s, mask %s, %d bytes): %s"
                  % (index, case["version"], case["level"], case["mask"], len(case["text"].encode("utf-8")), problem))
    print("decoded %d of %d QR cases" % (passed, len(cases)))
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
