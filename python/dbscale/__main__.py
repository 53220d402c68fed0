"""`python -m dbscale` is the `dbscale` command."""

from dbscale.cli import main

main()
