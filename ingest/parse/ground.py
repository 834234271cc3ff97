"""The ground a transparent picture is read on, for scans and photos (image.py) and for
pictures inside office files (pictures.py) alike.

Most transparent pictures are dark text on nothing, read on white as a page shows them; a logo
or label made for a dark slide is white text on nothing, blank on white, so it is laid on black
as the dark page it was made for would show it.
"""

from __future__ import annotations

from PIL import Image


def one_colour(pixels: Image.Image) -> bool:
    """Every pixel the same (a blank page, or a light drawing on white)."""
    extrema = pixels.getextrema()  # (min, max) of gray; one pair per band of RGB
    bands = extrema if isinstance(extrema[0], tuple) else (extrema,)
    return all(low == high for low, high in bands)


def on_ground(picture: Image.Image) -> Image.Image:
    """RGB pixels of a picture with transparency: laid on white, on black when nothing shows on
    white."""
    rgba = picture.convert("RGBA")
    on_white = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba).convert("RGB")
    if not one_colour(on_white):
        return on_white
    return Image.alpha_composite(Image.new("RGBA", rgba.size, "black"), rgba).convert("RGB")
