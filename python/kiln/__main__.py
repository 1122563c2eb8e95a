"""`kiln` (or `python -m kiln`): the kiln command line installed with the package."""

import os
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kiln")


def main() -> None:
    if not os.path.exists(_BIN):
        sys.exit(f"kiln: the command line is not installed with this package ({_BIN})")
    os.execv(_BIN, [_BIN] + sys.argv[1:])


if __name__ == "__main__":
    main()
