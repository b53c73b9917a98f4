"""``python -m ttlab.lm ARGS`` = ``ttlab lm ARGS``; lets ``torchrun … -m ttlab.lm train …`` launch DDP runs.
"""

import sys

from ttlab.cli import main

if __name__ == "__main__":
    main(["lm", *sys.argv[1:]])
