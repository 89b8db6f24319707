"""A program for tests/test_zygote.py: says what it was started with, then exits with the code it was given."""

import os
import sys
import time

if __name__ == "__main__":
    if sys.argv[1] == "sleep":
        time.sleep(300)
    print(f"argv={sys.argv[1:]!r}")
    print(f"env={os.environ.get('TFDASH_ZYGOTE_TEST', '')}")
    print(f"cwd={os.getcwd()}")
    print(f"stdin={sys.stdin.read()!r}")
    print(f"preloaded={'colorsys' in sys.modules}")
    print(f"main={__name__}")
    print("to stderr", file=sys.stderr)
    sys.exit(int(sys.argv[1]))
