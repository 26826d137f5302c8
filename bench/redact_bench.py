"""Redaction of hostile text: each pass must stay linear in its input, as a recorded body or
header is attacker-written. Timed here, not in the tests (tests assert what comes out).

``python -m bench.redact_bench [--sizes 25000,100000,400000]`` times :func:`redact_urls`,
:func:`redact_url` and :func:`redact_text` on each hostile unit repeated to each size, and
prints seconds per size and the growth from the smallest to the largest size over the size
ratio (about 1 for a linear pass, the size ratio for a quadratic one).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from callscope.core.redact import redact_text, redact_url
from callscope.core.redact_url import redact_urls

UNITS = ("//a:b", "//a:b@", "a?", "?key%3D", ";a=%3B", "x=", "\\u0026", "\\/\\/u:", "@//",
         "a#b=", "?next=%25", "<p?k=1>;", "api_key=[ ", "api_key=\" ", "api_key=' ",
         'api_key=\\" ', "token: ", "--api-key ", "password=a,", "&a=", "%3F", "%", "](", "x)",
         "'&k=", "x:\\n", "-a:\\t", ".a=",
         "<api_key ", "<token>", "<a b=", "<password>", "<a:b ", '<a x="', "<![CDATA[",
         "<api_key:", "api_key='''", 'api_key="""', "api_key=r'", "api_key=f",
         "mysql -pX ", "mysql ", "sshpass -p ")
"""Each repeated to the size: the shapes that once read a run again from each of its starts."""


def _seconds(redact: Callable[[str], str], text: str) -> float:
    started = time.perf_counter()
    redact(text)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25000,100000,400000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print(f"{'unit':16} {'pass':12} " + " ".join(f"{n:>10}" for n in sizes) + "  growth")
    for unit in UNITS:
        for redact in (redact_urls, redact_url, redact_text):
            times = [_seconds(redact, (unit * (n // len(unit) + 1))[:n]) for n in sizes]
            growth = (times[-1] / max(times[0], 1e-6)) / (sizes[-1] / sizes[0])
            print(f"{unit!r:16} {redact.__name__:12} "
                  + " ".join(f"{t:10.4f}" for t in times) + f"  {growth:5.2f}")


if __name__ == "__main__":
    main()
