"""`python -m dbscale` is the `dbscale` command."""

from dbscale.cli.app import main

main()
