"""Print the text of each page of a PDF (an example script of the pdf-processing skill)."""

import sys


def main(path: str) -> None:
    print(f"would extract the text of {path}")


if __name__ == "__main__":
    main(sys.argv[1])
