from lsgtool.cli import main

main()
